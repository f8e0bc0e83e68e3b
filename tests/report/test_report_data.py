"""Reading output directories and deriving the report's numbers from real and constructed records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from synthetic_runs import equation_run, tactic_run

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.report import aggregate as agg
from pytest_lsrb.report.data import load_run


def test_a_real_mock_run_reads_back_with_its_summary_and_index(mock_run: Path) -> None:
    run = load_run(mock_run)
    summary = json.loads((mock_run / "summary.json").read_text())
    assert run.summary == summary
    assert run.selected_rows_hash == summary["selected_rows_hash"]
    assert len(run.records) == summary["attempts"]
    assert run.samples_per_item == 2
    assert not run.verification_on
    # Every record's item is joined with its index row: repo and Lean version come from there.
    scored = agg.score(run)
    assert all(s.facets["repo"] and s.facets["lean_version"] for s in scored)
    # The tactic task now records the prompt it sent.
    assert all(isinstance(r.get("prompt"), list) and r["prompt"][-1]["role"] == "user" for r in run.records)


def test_the_pass_at_k_curve_matches_the_summary_where_both_exist(tmp_path: Path) -> None:
    run = load_run(tactic_run(tmp_path / "r", items=40, samples=6, seed=7))
    curve = dict(agg.pass_at_k_curve(agg.score(run), run.samples_per_item))
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
    assert agg.breakdown(agg.score(run), agg.facet_keys("repo")) == []


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
    repos = agg.breakdown(scored, agg.facet_keys("repo"))
    assert {g.name for g in repos} == {"mathlib4", "pfr", "builtin-goals"}
    assert sum(g.attempts for g in repos) == 18 and all(g.items == 3 for g in repos)
    for g in repos:
        members = [s for s in scored if s.facets["repo"] == g.name]
        assert g.passed == sum(s.success for s in members)
    tags = agg.breakdown(scored, agg.facet_keys("tags"))
    assert sum(g.attempts for g in tags) >= 18  # an attempt counts once per tag


def test_table1_aggregates_per_problem_set_and_domain() -> None:
    def rec(item: str, k: int, **fields: object) -> dict[str, object]:
        return {"item_id": item, "sample_index": k, **fields}

    records = [
        rec("t1", 0, problem_set="lsr_transform", nmse_id=1e-8, acc_tau_id=True, symbolic_match=True),
        rec("t1", 1, problem_set="lsr_transform", nmse_id=0.5, acc_tau_id=False, symbolic_match=False),
        rec("t2", 0, problem_set="lsr_transform", nmse_id=0.1, acc_tau_id=False, symbolic_match=None),
        rec(
            "c1",
            0,
            problem_set="lsr_synth",
            domain="chemistry",
            nmse_id=0.01,
            nmse_ood=0.2,
            acc_tau_id=1.0,
            acc_tau_ood=0.0,
        ),
        rec(
            "c2",
            0,
            problem_set="lsr_synth",
            domain="chemistry",
            nmse_id=float("nan"),
            nmse_ood="bad",
            acc_tau_id=None,
            acc_tau_ood=None,
        ),
        rec("x1", 0, valid=True),  # no equation metrics: not part of the table
    ]
    scored = [
        agg.Scored(
            r, agg.Judgement("pass"), True, {"problem_set": r.get("problem_set"), "domain": r.get("domain")}
        )
        for r in records
    ]
    table = {g.name: g for g in agg.equation_table(scored)}
    assert list(table) == ["lsr_transform", "lsr_synth/chemistry"]  # the paper's order
    t = table["lsr_transform"]
    assert (t.problems, t.attempts) == (2, 3)
    assert t.symbolic_accuracy == 0.5  # the None is not applicable, not a miss
    assert t.acc_tau_id == pytest.approx(1 / 3)
    assert t.nmse_id_median == 0.1
    assert t.acc_tau_ood is None and t.nmse_ood_median is None
    c = table["lsr_synth/chemistry"]
    assert c.nmse_id_median == 0.01 and c.nmse_ood_median == 0.2  # NaN and strings are skipped
    assert c.acc_tau_id == 1.0 and c.acc_tau_ood == 0.0 and c.symbolic_accuracy is None


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
        {"item_id": "j", "sample_index": 0, "pred_sample_id": garbage}, agg.Judgement("fail"), False, {}
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
