"""Reading output directories and deriving the report's numbers from real and constructed records."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from synthetic_runs import equation_run, tactic_run

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.task import Judgement
from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.report import aggregate as agg
from pytest_lsrb.report.data import load_run


def test_a_real_mock_run_reads_back_with_its_summary_and_index(mock_run: Path) -> None:
    run = load_run(mock_run)
    summary = json.loads((mock_run / "summary.json").read_text())
    assert run.summary == summary
    assert run.selected_rows_hash == summary["selected_rows_hash"]
    assert len(run.records) == summary["attempts"]
    assert run.samples == 2
    assert not run.verification_on
    # Every record's item is joined with its index row: repo and Lean version come from there.
    scored = agg.score(run)
    assert all(s.facets["repo"] and s.facets["lean_version"] for s in scored)
    # The tactic task now records the prompt it sent.
    assert all(isinstance(p := r.get("prompt"), list) and p[-1]["role"] == "user" for r in run.records)


def test_the_pass_at_k_curve_matches_the_summary_where_both_exist(tmp_path: Path) -> None:
    run = load_run(tactic_run(tmp_path / "r", items=40, samples=6, seed=7))
    curve = dict(agg.pass_at_k_curve(agg.score(run), run.samples))
    assert sorted(curve) == [1, 2, 3, 4, 5, 6]
    from_summary = dict(agg.curve_from_summary(run.summary))
    assert sorted(from_summary) == [1, 2, 4, 6]  # the summary's ladder
    for k, value in from_summary.items():
        assert curve[k] == pytest.approx(value, abs=1e-12)
    values = [curve[k] for k in sorted(curve)]
    assert values == sorted(values)  # pass@k never falls as k grows


def test_an_unfinished_run_gets_a_provisional_summary_and_a_warning(tmp_path: Path) -> None:
    out = tactic_run(tmp_path / "r", items=5, samples=2, write_summary=False)
    with (out / "attempts.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"item_id": "torn", "sampl')  # killed mid-write
    run = load_run(out)
    assert run.summary is not None and run.summary["complete"] is False
    assert run.summary["attempts"] == 10
    assert any("summary.json is missing" in w for w in run.warnings)
    assert any("incomplete" in w for w in run.warnings)


def test_a_resumed_run_counts_the_last_record_of_each_attempt(tmp_path: Path) -> None:
    out = tactic_run(tmp_path / "r", items=3, samples=1)
    first = json.loads((out / "attempts.jsonl").read_text().splitlines()[0])
    redo = {**first, "raw_output": "redone", "generation_error_kind": None}
    with (out / "attempts.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(redo) + "\n")
    run = load_run(out)
    assert len(run.records) == 3
    assert [r["raw_output"] for r in run.records if r["item_id"] == first["item_id"]] == ["redone"]


def test_directories_without_a_run_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(LsrbUsageError, match="not a directory"):
        load_run(tmp_path / "missing")
    with pytest.raises(LsrbUsageError, match="holds no lsrb run"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text("[1, 2")
    with pytest.raises(LsrbUsageError, match=r"summary\.json:1"):
        load_run(tmp_path)


def test_a_moved_index_leaves_breakdowns_to_the_record_fields(tmp_path: Path) -> None:
    out = tactic_run(tmp_path / "r", items=6, samples=1)
    (out / "index.jsonl").unlink()
    run = load_run(out)
    assert any("is not here" in w for w in run.warnings)
    assert all(s.facets["repo"] is None for s in agg.score(run))
    assert agg.breakdown(run, agg.score(run), "repo") == {}


def test_the_repository_and_lean_version_breakdowns_are_the_summarys(mock_run: Path) -> None:
    """by_repository / by_lean_version come from summary.json (one aggregation): the same numbers
    the report would compute from the records and index, and what the summary says wins."""
    run = load_run(mock_run)
    scored = agg.score(run)
    assert run.summary is not None
    for facet, key in (("repo", "by_repository"), ("lean_version", "by_lean_version")):
        assert run.summary[key], key  # tactic records carry repo_remote / repo_lean_version
        assert agg.breakdown(run, scored, facet) == run.summary[key]
        recomputed = agg.breakdown(dataclasses.replace(run, summary={}), scored, facet)
        assert recomputed == run.summary[key]
    name = next(iter(run.summary["by_repository"]))
    run.summary["by_repository"][name]["success_rate"] = 0.125
    assert agg.breakdown(run, scored, "repo")[name]["success_rate"] == 0.125
    # A tampered group (a count that is not a count) is not shown: the records are used instead.
    run.summary["by_repository"][name]["attempts"] = "many"
    assert agg.breakdown(run, scored, "repo") == recomputed_repo(run, scored)


def recomputed_repo(run: RunDir, scored: list[agg.Scored]) -> dict[str, dict[str, object]]:
    return agg.breakdown(dataclasses.replace(run, summary={}), scored, "repo")


def test_an_index_that_changed_since_the_run_is_not_joined(tmp_path: Path) -> None:
    out = tactic_run(tmp_path / "r", items=6, samples=1)
    with (out / "index.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("\n")
    run = load_run(out)
    assert run.index_rows == {}
    assert any("has changed since the run" in w for w in run.warnings)


def test_breakdowns_count_attempts_and_items_per_group(tmp_path: Path) -> None:
    run = load_run(tactic_run(tmp_path / "r", items=9, samples=2, seed=3))
    scored = agg.score(run)
    repos = agg.breakdown(run, scored, "repo")  # the records carry no repo: the index join's
    assert set(repos) == {"mathlib4", "pfr", "builtin-goals"}
    assert sum(g["attempts"] for g in repos.values()) == 18 and all(g["items"] == 3 for g in repos.values())
    for name, g in repos.items():
        members = [s for s in scored if s.facets["repo"] == name]
        assert g["judged_attempts"] == sum(s.judged for s in members)
        won = sum(s.success for s in members)
        assert g["success_rate"] == (won / g["judged_attempts"] if g["judged_attempts"] else None)
    tags = agg.breakdown(run, scored, "tags")
    assert sum(g["attempts"] for g in tags.values()) >= 18  # an attempt counts once per tag


def test_the_report_shows_the_summarys_table1(tmp_path: Path) -> None:
    """One Table 1: the report's numbers are summary.json's `srbench_table`, even where the old
    second implementation disagreed (it dropped invalid equations from the NMSE median: with
    NMSE [0.01, 0.02, None, None, None] the summary says None and the report said 0.015)."""
    from pytest_lsrb.report.page import build_report
    from pytest_lsrb.srbench.tables.table import SrbenchSummary, table1

    def rec(item: str, nmse: float | None) -> dict[str, object]:
        return {
            "item_id": item,
            "sample_index": 0,
            "problem_set": "lsr_transform",
            "problem_group": "lsr_transform",
            "nmse_id": nmse,
            "acc_tau_id": nmse is not None and nmse < 0.1,
            "has_ood": False,
            "valid": nmse is not None,
        }

    records = [rec(f"t{i}", v) for i, v in enumerate([0.01, 0.02, None, None, None])]
    acc = SrbenchSummary()
    for r in records:
        acc.add(r)
    summary_table = acc.finish()["srbench_table"]
    assert table1(records) == summary_table
    assert summary_table["lsr_transform"]["median_nmse_id"] is None  # invalid = +inf: median is inf
    out = tmp_path / "eq"
    out.mkdir()
    (out / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    html = build_report(load_run(out))
    table = html[html.index("id='table1'") :]
    table = table[: table.index("</table>")]
    assert "LSR-Transform" in table and "0.015" not in table
    assert "40.0%" in table  # Acc_0.1: 2 of 5 attempts, as in the summary
    assert "one result each: sample 0." in html  # which result stands for a problem
    # A best-of-k run says so: the records carry the rule, the report names it.
    best = [{**r, "sr_per_problem": "best_train", "train_mse": 1.0} for r in records]
    best += [{**r, "sample_index": 1, "sr_per_problem": "best_train", "train_mse": 2.0} for r in records]
    (out / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in best), "utf-8")
    assert "one result each: best of 2 samples by training MSE." in build_report(load_run(out))


def test_prediction_samples_keep_the_best_attempt_and_skip_garbage(tmp_path: Path) -> None:
    run = load_run(equation_run(tmp_path / "eq", problems=5, samples=3))
    samples = agg.prediction_samples(agg.score(run))
    assert len(samples) == 5
    for p in samples:
        nmses = [r["nmse_id"] for r in run.records if r["item_id"] == p.item_id]
        assert p.nmse == min(nmses)
        assert len(p.points) == 40
    garbage = [[1, "x"], [1], "no", [2.0, 3.0]]
    junk = agg.Scored(
        {"item_id": "j", "sample_index": 0, "pred_sample_id": garbage}, Judgement("fail"), False, {}
    )
    assert agg.prediction_samples([junk])[0].points == [(2.0, 3.0)]
    no_samples = load_run(equation_run(tmp_path / "eq2", problems=3, with_samples=False))
    assert agg.prediction_samples(agg.score(no_samples)) == []


def test_records_of_an_unknown_task_are_judged_generically(tmp_path: Path) -> None:
    out = tactic_run(tmp_path / "r", items=4, samples=1)
    shutil.copy(out / "run.json", tmp_path / "run.bak")
    header = json.loads((out / "run.json").read_text())
    header["config"]["task"] = "some_future_task"
    (out / "run.json").write_text(json.dumps(header))
    run = load_run(out)
    outcomes = {s.record["verification_outcome"]: s.judgement.outcome for s in agg.score(run)}
    assert outcomes.get("closed", "pass") == "pass"
    assert outcomes.get("toolchain_missing", "error") == "error"


def test_a_search_tree_reads_as_its_steps() -> None:
    """The detail view of a `--lsrb-answer search` attempt lists why it stopped and each step."""
    from pytest_lsrb.report.items import search_text

    tree = {
        "root": 0,
        "stop": "completed",
        "iterations": 3,
        "steps": [
            {"state": 0, "tactic": "constructor", "result": 1, "goals": 2},
            {"state": 1, "tactic": "exact hq", "error": "type mismatch"},
            {"state": 1, "tactic": "exact ⟨hp, hq⟩", "result": 3, "goals": 0},
        ],
    }
    assert search_text(tree) == (
        "stopped: completed after 3 model call(s), from state 0\n"
        "[0] constructor -> state 1 (2 goal(s) left)\n"
        "[1] exact hq -> error: type mismatch\n"
        "[1] exact ⟨hp, hq⟩ -> state 3 (0 goal(s) left)"
    )
    assert search_text(None) is None and search_text({"steps": "x"}) is None
