"""The mock run's summary.json, pinned by a syrupy snapshot (timing fields excluded).

A change here is a change in what every user's numbers mean: update the snapshot
(`pytest tests/engine/test_summary_snapshot.py --snapshot-update`) only on purpose.
"""

from __future__ import annotations

from lsrb_testing import RunSuite

from pytest_lsrb.engine.summary import SUMMARY_TIMING_KEYS


def test_mock_run_summary(run_suite_here: RunSuite, snapshot) -> None:
    result = run_suite_here("--lsrb-samples=2", "--lsrb-seed=3")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = {k: v for k, v in result.summary().items() if k not in SUMMARY_TIMING_KEYS}
    assert summary == snapshot


def test_openai_run_identity(snapshot) -> None:
    """The run identity and config_hash of an openai run (no server needed: both are fixed before
    any call). A user's own adapter adds entries to a run's identity; the named adapters' runs keep
    theirs, so resuming or comparing against an earlier run still finds it."""
    from lsrb_testing import REPO, TACTIC_SUITE

    from pytest_lsrb.session.prepare import prepare_suite_run

    options = {
        "lsrb_adapter": "openai",
        "lsrb_model": "smollm2",
        "lsrb_base_url": "http://127.0.0.1:9/v1",
        "lsrb_max_items": "5",
    }
    run = prepare_suite_run(TACTIC_SUITE, options.get, REPO)
    assert {"config": run.config.identity(), "config_hash": run.config_hash} == snapshot
