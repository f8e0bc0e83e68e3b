"""One judging rule, one set of numbers: summary.json, `lsrb compare` (the gate), the HTML report
and `lsrb merge` agree on every metric for any mix of successes, model failures, each kind of
infrastructure error, attempts without a verdict (profile skips; llm_srbench's undecided or
inapplicable symbolic check) and several samples per item, for both task families (issue #15).
Each test's pytest outcome (the task's `judge` through `outcomes.judgement`) agrees with the rule.
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_lsrb.core.metrics import pass_at_k_ladder
from pytest_lsrb.core.seeds import shard_of
from pytest_lsrb.engine.options import identity_hash
from pytest_lsrb.engine.outcomes import judged, status, success, verdict
from pytest_lsrb.engine.summary import summarizer_for
from pytest_lsrb.engine.task import get_task
from pytest_lsrb.report import aggregate as agg
from pytest_lsrb.report.compare import compare as report_compare
from pytest_lsrb.report.data import load_run as report_load_run
from pytest_lsrb.report.page import Page, pct
from pytest_lsrb.tools.gate import GateConfig, compare_dirs, parse_thresholds
from pytest_lsrb.tools.merge import merge_shards

TASK = "goal_to_tactic_proposal_v1"
SRBENCH = "llm_srbench"

# What one attempt can end as, in the fields the tactic task and its verifiers record.
OUTCOMES: dict[str, dict[str, Any]] = {
    "closed": {
        "verification_attempted": True,
        "verification_success": True,
        "verification_outcome": "closed",
    },
    "lean_error": {
        "verification_attempted": True,
        "verification_success": False,
        "verification_outcome": "lean_error",
        "verification_error_kind": "lean_error",
        "verification_error_domain": "model",
    },
    "invalid": {
        "valid": False,
        "verification_attempted": True,
        "verification_success": False,
        "verification_outcome": "lean_error",
        "verification_error_kind": "lean_error",
        "verification_error_domain": "model",
    },
    "empty_output": {
        "valid": False,
        "nonempty": False,
        "generation_error_kind": "empty_output",
        "generation_error_domain": "model_output",
    },
    "timeout": {
        "valid": False,
        "nonempty": False,
        "generation_error_kind": "timeout",
        "generation_error_domain": "transport",
    },
    "server_error": {
        "valid": False,
        "nonempty": False,
        "generation_error_kind": "server_error",
        "generation_error_domain": "provider",
    },
    "harness": {
        "valid": False,
        "nonempty": False,
        "generation_error_kind": "harness",
        "generation_error_domain": "harness",
    },
    "toolchain_missing": {
        "verification_attempted": True,
        "verification_success": False,
        "verification_outcome": "toolchain_missing",
        "verification_error_kind": "toolchain_missing",
        "verification_error_domain": "environment",
    },
    "reconstruction_failed": {
        "verification_attempted": True,
        "verification_success": False,
        "verification_outcome": "reconstruction_failed",
        "verification_error_kind": "reconstruction_failed",
        "verification_error_domain": "harness",
    },
    "profile_skip": {
        "verification_outcome": "skipped",
        "verification_detail": "profile big: too slow",
        "repo_replay_profile_id": "big",
    },
}

# What one attempt of a tactic run without a verifier (`--lsrb-verification none`, the default) can
# end as: the no-op verifier (engine/no_verifier.py) leaves the verdict fields at not_attempted,
# and the judging rule's success is a valid answer.
NONE_OUTCOMES: dict[str, dict[str, Any]] = {
    "valid": {},
    "contains_sorry": {"valid": False, "contains_sorry": True},
    "invalid": {"valid": False},
    **{k: OUTCOMES[k] for k in ("empty_output", "timeout", "server_error", "harness")},
}
# Each family's verification modes (the tasks' `verification_modes`) and what an attempt can end as.
TACTIC_MODES: dict[str, dict[str, dict[str, Any]]] = {
    "none": NONE_OUTCOMES,
    "synthetic": {k: v for k, v in OUTCOMES.items() if k != "profile_skip"},
    "repo_replay": OUTCOMES,
}

_EQ_FAILED = {
    "verification_attempted": True,
    "verification_success": False,
    "verification_error_domain": "model",
}
_NO_EQUATION = {
    "valid": False,
    "nonempty": False,
    "proposal": "",
    "nmse_id": None,
    "acc_tau_id": False,
    "symbolic_match": False,
    "symbolic_method": "no_proposal",
    **_EQ_FAILED,
    "verification_outcome": "no_equation",
    "verification_error_kind": "no_equation",
}


def _no_symbolic_verdict(method: str) -> dict[str, Any]:
    return {
        "symbolic_match": None,
        "symbolic_method": method,
        "verification_attempted": False,
        "verification_success": None,
        "verification_outcome": "not_applicable",
        "verification_detail": f"no symbolic verdict ({method})",
        "sr_success": "symbolic",
    }


def _infrastructure(kind: str, domain: str) -> dict[str, Any]:
    """Every model call failed outside the model: no equation, and the generation error."""
    return {**_NO_EQUATION, "generation_error_kind": kind, "generation_error_domain": domain}


# What one llm_srbench attempt can end as, in the fields `srbench.scoring.evaluation.score` and the task
# record (Acc_0.1 success unless `sr_success` says symbolic).
SR_OUTCOMES: dict[str, dict[str, Any]] = {
    "accurate": {
        "nmse_id": 1e-6,
        "acc_tau_id": True,
        "symbolic_match": True,
        "symbolic_method": "structure",
        "verification_attempted": True,
        "verification_success": True,
        "verification_outcome": "accurate",
    },
    "inaccurate": {
        "nmse_id": 0.4,
        "acc_tau_id": False,
        "symbolic_match": False,
        "symbolic_method": "no_match",
        **_EQ_FAILED,
        "verification_outcome": "inaccurate",
        "verification_error_kind": "inaccurate",
    },
    "invalid_equation": {
        "valid": False,
        "nmse_id": None,
        "acc_tau_id": False,
        "symbolic_match": False,
        "symbolic_method": "no_match",
        **_EQ_FAILED,
        "verification_outcome": "not_finite",
        "verification_error_kind": "not_finite",
    },
    "no_equation": _NO_EQUATION,
    # LLM-SR's starting skeleton fitted best: none of the model's answers was a valid equation.
    # As in the reference, that fallback is what is scored (here accurate), flagged.
    "starting_skeleton": {
        "valid": False,
        "nmse_id": 0.05,
        "acc_tau_id": True,
        "result_is_starting_skeleton": True,
        "fallback_result": True,
        "model_valid_candidates": 0,
        "symbolic_match": False,
        "symbolic_method": "no_match",
        "verification_attempted": True,
        "verification_success": True,
        "verification_outcome": "accurate",
    },
    # Every model call failed at the server (HTTP 400): infrastructure, whatever the fallback scores.
    "fallback_never_answered": {
        "valid": False,
        "nmse_id": 0.05,
        "acc_tau_id": True,
        "fallback_result": True,
        "model_valid_candidates": 0,
        "verification_attempted": True,
        "verification_success": True,
        "verification_outcome": "accurate",
        "generation_error_kind": "client_error",
        "generation_error_domain": "provider",
    },
    "symbolic_match": {
        "nmse_id": 0.02,
        "acc_tau_id": True,
        "symbolic_match": True,
        "symbolic_method": "refit+sympy",
        "verification_attempted": True,
        "verification_success": True,
        "verification_outcome": "symbolic_match",
        "sr_success": "symbolic",
    },
    "symbolic_mismatch": {
        "nmse_id": 0.02,
        "acc_tau_id": True,
        "symbolic_match": False,
        "symbolic_method": "no_match",
        **_EQ_FAILED,
        "verification_outcome": "symbolic_mismatch",
        "verification_error_kind": "symbolic_mismatch",
        "sr_success": "symbolic",
    },
    "sa_undecided": {"nmse_id": 0.01, "acc_tau_id": True, **_no_symbolic_verdict("undecided")},
    "sa_not_applicable": {"nmse_id": 0.3, "acc_tau_id": False, **_no_symbolic_verdict("not_applicable")},
    "timeout": _infrastructure("timeout", "transport"),
    "connection": _infrastructure("connection", "transport"),
    "server_error": _infrastructure("server_error", "provider"),
    "rate_limit": _infrastructure("rate_limit", "provider"),
    "harness": _infrastructure("harness", "harness"),
    "empty_output": {
        **_NO_EQUATION,
        "generation_error_kind": "empty_output",
        "generation_error_domain": "model_output",
    },
}
GROUPS = ("lsr_transform", "lsr_synth_chem_react", "lsr_synth_matsci")

CONFIG_BASE = {"samples": 1, "task": TASK, "suite": TASK, "verification": "synthetic", "shard_count": 2}
HASH = "a" * 64


def record(
    task: str, item: str, sample: int, outcome: str, config_hash: str, mode: str = "synthetic"
) -> dict[str, Any]:
    common = {
        "record_schema_version": 1,
        "item_id": item,
        "sample_index": sample,
        "attempt_seed": sample,
        "suite": task,
        "adapter": "mock",
        "model": "m",
        "config_hash": config_hash,
        "valid": True,
        "nonempty": True,
        "latency_ms": 1.0,
        "model_calls": 1,
    }
    number = int(item[1:])
    if task == SRBENCH:
        group = GROUPS[number % len(GROUPS)]
        ood = group != "lsr_transform"
        return {
            **common,
            "proposal": "x * params[0]",
            "sr_method": "direct",
            "sr_per_problem": "sample0",
            "problem_set": "lsr_transform" if not ood else "lsr_synth",
            "problem_group": group,
            "has_ood": ood,
            "nmse_ood": 0.5 if ood else None,
            "acc_tau_ood": False if ood else None,
            "verification_mode": "equation",
            "sr_success": "acc_0.1",
            **SR_OUTCOMES[outcome],
        }
    return {
        **common,
        "contains_sorry": False,
        "repo_remote": f"https://github.com/o/repo{number % 2}",
        "repo_lean_version": f"v4.{20 + number % 3}.0",
        "verification_mode": mode,
        "verification_attempted": False,
        "verification_success": None,
        "verification_outcome": "not_attempted",
        **TACTIC_MODES[mode][outcome],
    }


# (family, verification mode): every mode of both families (the tasks' `verification_modes`).
MODES = (*((TASK, m) for m in TACTIC_MODES), (SRBENCH, "equation"))

Drawn = tuple[str, str, int, list[tuple[str, int, str]]]


@st.composite
def runs(draw: st.DrawFn) -> Drawn:
    task, mode = draw(st.sampled_from(MODES))
    samples = draw(st.integers(1, 4))
    items = draw(st.integers(1, 6))
    cells = [(f"i{i}", k) for i in range(items) for k in range(samples)]
    kinds = sorted(SR_OUTCOMES if task == SRBENCH else TACTIC_MODES[mode])
    outcomes = draw(st.lists(st.sampled_from(kinds), min_size=len(cells), max_size=len(cells)))
    return task, mode, samples, [(item, k, o) for (item, k), o in zip(cells, outcomes, strict=True)]


def write_shard(out: Path, records: list[dict[str, Any]], config: dict[str, Any], index: int) -> None:
    task = str(config["task"])
    out.mkdir(parents=True)
    (out / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    header = {
        "schema_version": 1,
        "suite": task,
        "config": {**config, "shard_index": index},
        "config_hash": identity_hash(config),
        "selected_rows_hash": HASH,
        "selected_items": 0,
        "shard_count": config["shard_count"],
        "shard_index": index,
        "attempts_expected": len(records),
    }
    (out / "run.json").write_text(json.dumps(header), "utf-8")


METRIC_KEYS = ("valid_rate", "nonempty_rate", "success_rate")


@settings(max_examples=80)
@given(runs())
# Before issue #15's fix: the srbench task passed an attempt with no symbolic verdict while the
# summary counted it as a judged failure.
@example(drawn=(SRBENCH, "equation", 1, [("i0", 0, "sa_not_applicable")]))
# Issue #31: a run without a verifier had verification_success_rate 0.0 and no pass@1 in its
# summary where compare said 1.000 for both.
@example(
    drawn=(
        TASK,
        "none",
        2,
        [("i0", 0, "valid"), ("i0", 1, "invalid"), ("i1", 0, "valid"), ("i1", 1, "valid")],
    )
)
def test_summary_compare_report_and_merge_agree_on_every_metric(drawn: Drawn) -> None:
    task_name, verification, samples, cells = drawn
    config = {**CONFIG_BASE, "samples": samples, "task": task_name, "suite": task_name}
    config["verification"] = verification
    config_hash = identity_hash(config)
    records = [record(task_name, item, k, o, config_hash, verification) for item, k, o in cells]
    task = get_task(task_name)
    summarizer = summarizer_for(task, samples)
    for rec in records:
        summarizer.add(rec)
    summary = summarizer.finish()
    ladder = pass_at_k_ladder(samples)

    # The counts the rule defines.
    assert summary["judged_attempts"] == sum(judged(r) for r in records)
    assert summary["skipped_attempts"] == sum(status(r) == "skipped" for r in records)
    assert summary["infrastructure_attempts"] == sum(status(r) == "infrastructure" for r in records)
    # One success rate and one pass@k in every mode; verification success only where a verifier ran
    # (absent, never 0 %, without one).
    assert summary["success_rate"] == (
        sum(success(r) for r in records if judged(r)) / summary["judged_attempts"]
        if summary["judged_attempts"]
        else None
    )
    if verification == "none":
        assert summary["verification_success_rate"] is None
    else:
        assert summary["verification_success_rate"] == summary["success_rate"]
    # The pass@k curve cannot fall.
    curve = [summary[f"verification_pass_at_k_{k}"] for k in ladder]
    if None not in curve:
        assert all(a <= b + 1e-12 for a, b in itertools.pairwise(curve))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # lsrb compare / the gate, on the unsharded run.
        whole = root / "whole"
        write_shard(whole, records, {**config, "shard_count": 1}, 0)
        names = ",".join(f"{m}=0" for m in (*METRIC_KEYS, *(f"pass_at_{k}" for k in ladder)))
        gate = compare_dirs(GateConfig(None, tuple(parse_thresholds(names, "min", "--min"))), whole)
        by_key = {c.summary_key: c for c in gate.checks}
        for key in (*METRIC_KEYS, *(f"verification_pass_at_k_{k}" for k in ladder)):
            assert by_key[key].current == pytest.approx(summary[key]), key
        for k in ladder:
            assert by_key[f"verification_pass_at_k_{k}"].items == summary["verification_pass_at_k_items"]
        assert gate.unjudged_current == summary["infrastructure_attempts"] + summary["skipped_attempts"]

        # The report: its pass@k curve, its pass rate and its provisional summary.
        run = report_load_run(whole)
        scored = agg.score(run)
        report_curve = dict(agg.pass_at_k_curve(scored, samples))
        for k in ladder:
            if summary[f"verification_pass_at_k_{k}"] is None:
                assert k not in report_curve
            else:
                assert report_curve[k] == pytest.approx(summary[f"verification_pass_at_k_{k}"])
        judged_scored = [s for s in scored if s.judged]
        if judged_scored:
            passed = sum(s.judgement.outcome == "pass" for s in judged_scored)
            assert passed / len(judged_scored) == pytest.approx(summary["success_rate"])
        assert all(s.judgement.outcome in ("error", "skip") for s in scored if not s.judged)
        # Each test's outcome is the rule's: infrastructure errors, no verdict skips, a judged
        # attempt passes exactly when it succeeded.
        for s in scored:
            expected = {"infrastructure": "error", "skipped": "skip"}.get(status(s.record))
            assert s.judgement.outcome == (expected or ("pass" if success(s.record) else "fail")), s.record
        # The report's breakdowns are the summary's (tactic: by repository and Lean version).
        for facet, key in agg.SUMMARY_BREAKDOWNS.items():
            if key in summary:
                assert agg.breakdown(run, scored, facet) == summary[key]
        # One Table 1 (llm_srbench): the report's is the summary's.
        if task_name == SRBENCH:
            from pytest_lsrb.srbench.tables.table import table1

            assert table1(s.record for s in scored) == summary["srbench_table"]
            # One result per problem (its sample 0), none from an attempt the model never answered.
            results = [r for r in records if r["sample_index"] == 0 and status(r) != "infrastructure"]
            assert sum(row["attempts"] for row in summary["srbench_table"].values()) == len(results)
        assert run.summary is not None
        for key in (*METRIC_KEYS, "verification_success_rate", "verification_pass_at_k_items"):
            assert run.summary[key] == summary[key]
        # The report's headline: the same success and pass@1, "not verified" rather than 0 %.
        headline = Page(run).headline_section()
        if verification == "none":
            assert "verification success" not in headline
        if summary["success_rate"] is not None:  # (a card shared with metrics of the same value)
            cards = re.findall(r"<div class='l'>([^<]*)</div><div class='v'>([^<]*)</div>", headline)
            assert any(
                "success" in label.split(" · ") and value == pct(summary["success_rate"])
                for label, value in cards
            ), cards

        # lsrb merge of two shards of the same run.
        shard_dirs = []
        for index in (0, 1):
            mine = [r for r in records if shard_of(r["item_id"], 2) == index]
            write_shard(root / f"shard{index}", mine, config, index)
            shard_dirs.append(root / f"shard{index}")
        merged = merge_shards(shard_dirs, root / "merged")
        for key, value in summary.items():
            if key not in ("latency_ms_mean", "latency_ms_p50", "latency_ms_p95"):
                assert merged[key] == (pytest.approx(value) if isinstance(value, float) else value), key


@settings(max_examples=40)
@given(runs(), st.randoms(use_true_random=False))
def test_gate_and_report_call_the_same_items_regressed(drawn: Drawn, rnd: Any) -> None:
    # Issue #31: the gate said "14 / 15 items got worse" where the report said "6 / 1 regressed".
    task_name, verification, samples, cells = drawn
    config = {**CONFIG_BASE, "samples": samples, "task": task_name, "suite": task_name}
    config = {**config, "verification": verification, "shard_count": 1}
    kinds = sorted(SR_OUTCOMES if task_name == SRBENCH else TACTIC_MODES[verification])
    later = [(item, k, rnd.choice(kinds)) for item, k, _ in cells]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, run_cells in (("base", cells), ("cur", later)):
            recs = [record(task_name, i, k, o, identity_hash(config), verification) for i, k, o in run_cells]
            write_shard(root / name, recs, config, 0)
        gate = compare_dirs(
            GateConfig(root / "base", tuple(parse_thresholds("pass_at_1=0", "max_drop", "--max-drop"))),
            root / "cur",
        )
        (check,) = gate.checks
        comparison = report_compare(report_load_run(root / "base"), report_load_run(root / "cur"))
    assert sorted(f.item_id for f in comparison.flips if f.direction == "regressed") == sorted(check.down)
    assert sorted(f.item_id for f in comparison.flips if f.direction == "improved") == sorted(check.up)


_FIELD_VALUES = {
    "generation_error_kind": st.sampled_from([None, "", "timeout", "empty_output", "harness"]),
    "generation_error_domain": st.sampled_from([None, "model_output", "transport", "harness", "model"]),
    "verification_error_domain": st.sampled_from([None, "environment", "harness", "model"]),
    "verification_outcome": st.sampled_from([None, "closed", "skipped", "not_applicable", "error"]),
    "verification_mode": st.sampled_from(["none", "synthetic", "repo_replay"]),
    "verification_attempted": st.sampled_from([None, False, True]),
    "verification_success": st.sampled_from([None, False, True, 1]),
    "valid": st.sampled_from([None, False, True]),
}


@given(st.fixed_dictionaries({}, optional=_FIELD_VALUES))
@example({"verification_success": True})
def test_verdict_reads_status_and_success_as_their_rule_says(record: Any) -> None:
    # The summaries read (status, success) in one call: it must be the documented rule, the
    # success of a judged attempt being the checker's verdict when the run checks, else `valid`.
    verifying = record.get("verification_mode", "none") != "none" or bool(
        record.get("verification_attempted") or record.get("verification_success") is not None
    )
    if not judged(record):
        expected = False
    elif verifying:
        expected = record.get("verification_success") is True
    else:
        expected = bool(record.get("valid"))
    assert verdict(record) == (status(record), expected)
    assert success(record) is expected
