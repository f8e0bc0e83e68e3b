"""`pytest suites/llm_srbench --lsrb-sr-method=llmsr` on the mock adapter, like a user runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lsrb.engine.records import strip_timing

SUITE = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"
ARGS = (
    "--lsrb-sr-method=llmsr",
    "--lsrb-sr-budget=12",
    "--lsrb-max-items=3",
    "--lsrb-samples=2",
    "--lsrb-outcome=record",
)


def test_llmsr_runs_through_the_suite_and_records_its_search(run_suite: Any, tmp_path: Path) -> None:
    first = run_suite(*ARGS, suite=SUITE, out=tmp_path / "a")
    assert first.returncode == 0, first.stdout + first.stderr
    records = first.attempts()
    assert len(records) == 6
    for rec in records:
        assert rec["sr_method"] == "llmsr" and rec["sr_budget"] == 12
        assert rec["model_calls"] == 12 and rec["search_trace_length"] == 13
        assert rec["equation"] and rec["skeleton"] and isinstance(rec["params"], list)
        assert rec["train_nmse"] is not None and rec["nmse_id"] is not None
        assert "nmse_ood" in rec and "acc_tau_id" in rec and "symbolic_match" in rec
        assert rec["stop_reason"] in ("budget", "early_stop")
    # One sample = one discovery run: the two samples of an item search differently.
    by_item: dict[str, list[str]] = {}
    for rec in records:
        by_item.setdefault(rec["item_id"], []).append(rec["raw_output"] + rec["equation"])
    assert any(len(set(runs)) == 2 for runs in by_item.values())
    summary = first.summary()
    assert summary["attempts"] == 6

    second = run_suite(*ARGS, suite=SUITE, out=tmp_path / "b")
    assert second.returncode == 0
    key = lambda r: (r["item_id"], r["sample_index"])  # noqa: E731
    assert {key(r): strip_timing(r) for r in records} == {key(r): strip_timing(r) for r in second.attempts()}
