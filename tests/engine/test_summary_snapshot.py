"""The mock run's summary.json, pinned by a syrupy snapshot (timing fields excluded).

A change here is a change in what every user's numbers mean: update the snapshot
(`pytest tests/engine/test_summary_snapshot.py --snapshot-update`) only on purpose.
"""

from __future__ import annotations

from lsrb_testing import RunSuite

from pytest_lsrb.engine.summary import SUMMARY_TIMING_KEYS


def test_mock_run_summary(run_suite: RunSuite, snapshot) -> None:
    result = run_suite("--lsrb-samples=2", "--lsrb-seed=3")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = {k: v for k, v in result.summary().items() if k not in SUMMARY_TIMING_KEYS}
    assert summary == snapshot
