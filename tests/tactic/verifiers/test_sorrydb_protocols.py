"""SorryDB's protocols as its code has them (issue #47 item 3), at the process boundary: the
reference strategies' samples and headline, through whole runs with a fake `lean` printing Lean's
messages (tests/tactic/lean/lean_fakes.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lean_fakes import install_toolchain, path_with

from pytest_lsrb.adapters.reference import MULTI_TACTIC

# Every tactic of SorryDB's multi_tactic list fails but `omega` (Lean's error at the tactic).
ONLY_OMEGA = [
    {
        "contains": f":= by\n  {tactic}\n",
        "messages": [{"severity": "error", "data": f"{tactic} failed", "at": f"  {tactic}\n"}],
    }
    for tactic in MULTI_TACTIC
    if tactic != "omega"
]


def _fake_lean(tmp_path: Path) -> dict[str, str]:
    install_toolchain(tmp_path / "bin")
    return {"PATH": path_with(tmp_path / "bin"), "FAKE_LEAN_RULES": json.dumps(ONLY_OMEGA)}


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_the_tactics_row_runs_its_12_tactics_and_its_headline_is_pass_at_12(
    run_suite: Any, tmp_path: Path
) -> None:
    """Without --lsrb-samples the run tries all 12 tactics (before: only `rfl`, one sample, and
    `success` was the row's figure); its headline is pass@12, not the per-tactic success."""
    res = run_suite(
        "--lsrb-adapter=sorrydb-tactics",
        "--lsrb-verification=synthetic",
        "--lsrb-max-items=2",
        "--lsrb-outcome=record",
        env=_fake_lean(tmp_path),
    )
    attempts = res.attempts()
    assert len(attempts) == 24, res.stdout[-3000:]
    closed = sorted(a["tactic"] for a in attempts if a["verification_outcome"] == "closed")
    assert closed == ["omega", "omega"]
    summary = res.summary()
    assert summary["config"]["samples"] == 12
    assert summary["headline"]["metric"] == "verification_pass_at_k_12"
    assert summary["verification_pass_at_k_12"] == 1.0
    assert summary["verification_pass_at_k_1"] == pytest.approx(1 / 12)
    line = next(x for x in res.stdout.splitlines() if x.startswith("headline pass@12"))
    assert "1.000 (of 2 items)" in line and 'the leaderboard\'s "Tactics" row' in line


@pytest.mark.parametrize(("adapter", "count"), [("sorrydb-tactics", 12), ("sorrydb-rfl", 1)])
def test_another_sample_count_is_refused_in_one_sentence(adapter: str, count: int) -> None:
    from pytest_lsrb.core.errors import LsrbUsageError
    from pytest_lsrb.tactic.task import _reference_samples

    config = _config(adapter, samples=count + 1, given=True)
    with pytest.raises(LsrbUsageError, match=rf"its run has {count} sample\(s\) per sorry \(got"):
        _reference_samples(config)
    assert _reference_samples(_config(adapter, samples=1, given=False)).samples == count
    assert _reference_samples(_config(adapter, samples=count, given=True)).samples == count


def _config(adapter: str, *, samples: int, given: bool) -> Any:
    from lsrb_testing import TACTIC_SUITE

    from pytest_lsrb.engine.options import RunConfig
    from pytest_lsrb.engine.suite import load_suite

    return RunConfig(
        values={"adapter": adapter, "samples": samples},
        suite=load_suite(TACTIC_SUITE),
        output_dir=Path("."),
        from_command_line=frozenset({"adapter", "samples"} if given else {"adapter"}),
    )
