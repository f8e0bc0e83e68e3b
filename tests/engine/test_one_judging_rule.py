"""One judging rule, one set of numbers: summary.json, `lsrb compare` (the gate), the HTML report
and `lsrb merge` agree on every metric for any mix of successes, model failures, each kind of
infrastructure error, profile skips and several samples per item (issue #15).
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_lsrb.core.metrics import pass_at_k_ladder
from pytest_lsrb.core.seeds import shard_of
from pytest_lsrb.engine.options import identity_hash
from pytest_lsrb.engine.outcomes import judged, status
from pytest_lsrb.engine.summary import Summarizer
from pytest_lsrb.engine.task import get_task
from pytest_lsrb.report import aggregate as agg
from pytest_lsrb.report.data import load_run as report_load_run
from pytest_lsrb.tools.gate import GateConfig, compare_dirs, parse_thresholds
from pytest_lsrb.tools.merge import merge_shards

TASK = "goal_to_tactic_proposal_v1"

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

CONFIG_BASE = {"samples": 1, "task": TASK, "suite": TASK, "verification": "synthetic", "shard_count": 2}
HASH = "a" * 64


def record(item: str, sample: int, outcome: str, config_hash: str) -> dict[str, Any]:
    return {
        "record_schema_version": 1,
        "item_id": item,
        "sample_index": sample,
        "attempt_seed": sample,
        "suite": TASK,
        "adapter": "mock",
        "model": "m",
        "config_hash": config_hash,
        "valid": True,
        "nonempty": True,
        "contains_sorry": False,
        "latency_ms": 1.0,
        "model_calls": 1,
        "verification_mode": "synthetic",
        "verification_attempted": False,
        "verification_success": None,
        "verification_outcome": "not_attempted",
        **OUTCOMES[outcome],
    }


@st.composite
def runs(draw: st.DrawFn) -> tuple[int, list[tuple[str, int, str]]]:
    samples = draw(st.integers(1, 4))
    items = draw(st.integers(1, 6))
    cells = [(f"i{i}", k) for i in range(items) for k in range(samples)]
    outcomes = draw(st.lists(st.sampled_from(sorted(OUTCOMES)), min_size=len(cells), max_size=len(cells)))
    return samples, [(item, k, o) for (item, k), o in zip(cells, outcomes, strict=True)]


def write_shard(out: Path, records: list[dict[str, Any]], config: dict[str, Any], index: int) -> None:
    out.mkdir(parents=True)
    (out / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    header = {
        "schema_version": 1,
        "suite": TASK,
        "config": {**config, "shard_index": index},
        "config_hash": identity_hash(config),
        "selected_rows_hash": HASH,
        "selected_items": 0,
        "shard_count": config["shard_count"],
        "shard_index": index,
        "attempts_expected": len(records),
    }
    (out / "run.json").write_text(json.dumps(header), "utf-8")


METRIC_KEYS = ("valid_rate", "nonempty_rate", "verification_success_rate")


@settings(max_examples=40)
@given(runs())
def test_summary_compare_report_and_merge_agree_on_every_metric(
    drawn: tuple[int, list[tuple[str, int, str]]],
) -> None:
    samples, cells = drawn
    config = {**CONFIG_BASE, "samples": samples}
    config_hash = identity_hash(config)
    records = [record(item, k, o, config_hash) for item, k, o in cells]
    task = get_task(TASK)
    summarizer = Summarizer(samples, task.summary_accumulator(samples))
    for rec in records:
        summarizer.add(rec)
    summary = summarizer.finish()
    ladder = pass_at_k_ladder(samples)

    # The counts the rule defines.
    assert summary["judged_attempts"] == sum(judged(r) for r in records)
    assert summary["skipped_attempts"] == sum(status(r) == "skipped" for r in records)
    assert summary["infrastructure_attempts"] == sum(status(r) == "infrastructure" for r in records)
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
            assert passed / len(judged_scored) == pytest.approx(summary["verification_success_rate"])
        assert all(s.judgement.outcome in ("error", "skip") for s in scored if not s.judged)
        assert run.summary is not None
        for key in (*METRIC_KEYS, "verification_pass_at_k_items"):
            assert run.summary[key] == summary[key]

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
