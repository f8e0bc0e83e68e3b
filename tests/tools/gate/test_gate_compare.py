"""The gate's rules on hand-written runs, and `lsrb compare` on output directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.metric import resolve_metric
from pytest_lsrb.engine.outcomes import judged
from pytest_lsrb.engine.outcomes import success as outcome
from pytest_lsrb.tools.gate import EXIT_REGRESSION, compare_dirs, gate_config


def rec(item: str, sample: int = 0, **fields: Any) -> dict[str, Any]:
    return {"item_id": item, "sample_index": sample, "valid": True, "nonempty": True, **fields}


def write_run(
    path: Path, records: list[dict[str, Any]], samples: int = 1, suite: str = "goal_to_tactic_proposal_v1"
) -> Path:
    path.mkdir(parents=True)
    (path / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    (path / "run.json").write_text(
        json.dumps({"suite": suite, "config": {"samples": samples}, "selected_rows_hash": "abc"}), "utf-8"
    )
    return path


def items(n: int, failing: set[int] = frozenset(), **extra: Any) -> list[dict[str, Any]]:  # type: ignore[assignment]
    return [rec(f"i{k:02d}", valid=k not in failing, **extra) for k in range(n)]


def test_the_outcome_is_verification_when_it_ran_else_validity_and_infrastructure_is_left_out() -> None:
    assert outcome(rec("a", verification_attempted=True, verification_success=False)) is False
    assert outcome(rec("a", valid=False, verification_attempted=True, verification_success=True)) is True
    assert outcome(rec("a", verification_attempted=False, verification_success=None)) is True
    assert outcome(rec("a", verification_attempted=False, verification_success=False)) is False
    assert outcome(rec("a", valid=False)) is False
    # llm_srbench: verification_success is Acc_0.1 of the proposed equation
    assert (
        outcome(
            {
                "item_id": "p",
                "sample_index": 0,
                "verification_attempted": True,
                "verification_success": True,
                "acc_tau_id": True,
            }
        )
        is True
    )
    assert not judged(rec("a", generation_error_kind="timeout", generation_error_domain="transport"))
    assert not judged(rec("a", verification_error_domain="environment"))
    assert judged(
        rec("a", valid=False, generation_error_kind="empty_output", generation_error_domain="model_output")
    )


def test_metric_names_and_their_aliases() -> None:
    assert resolve_metric("pass_at_1").summary_key == "verification_pass_at_k_1"
    assert resolve_metric("pass@4").name == resolve_metric("verification_pass_at_k_4").name == "pass_at_4"
    assert resolve_metric("verification_success_rate").name == "success_rate"
    field = resolve_metric("field:symbolic_match").per_record
    assert field is not None and field({"symbolic_match": True}) is True
    with pytest.raises(LsrbUsageError, match="unknown metric 'accuracy'"):
        resolve_metric("accuracy")


def test_option_mistakes_are_one_sentence(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", items(3))
    cases = [
        (dict(baseline=None, max_drop="pass_at_1=0.1"), "compares against a baseline; pass --lsrb-baseline"),
        (dict(baseline=str(base), max_drop="pass_at_1"), "should read METRIC=NUMBER"),
        (dict(baseline=str(base), max_drop="pass_at_1=lots"), "'lots' in 'pass_at_1=lots' is not a number"),
        (dict(baseline=str(base), max_drop="pass_at_1=2"), "must be in [0, 1]"),
        (dict(baseline=str(base), max_drop="score=0.1"), "--lsrb-max-drop: unknown metric 'score'"),
        (dict(baseline=str(tmp_path / "nope"), max_drop=None), "there is no baseline run at"),
        (dict(baseline=str(base / "run.json"), max_drop=None), "is not a directory"),
        (dict(baseline=str(tmp_path), max_drop=None), "holds no attempts.jsonl"),
        (dict(baseline=None, max_drop=None, alpha=0.0), "--lsrb-alpha must be in (0, 1]"),
    ]
    for kwargs, words in cases:
        assert isinstance(kwargs, dict)
        with pytest.raises(LsrbUsageError) as err:
            gate_config(kwargs["baseline"], kwargs["max_drop"], None, kwargs.get("alpha"))
        assert words in str(err.value)


def check(
    tmp_path: Path,
    base: list[dict[str, Any]],
    cur: list[dict[str, Any]],
    max_drop: str | None = None,
    minimum: str | None = None,
    samples: int = 1,
) -> Any:
    b = write_run(tmp_path / "base", base, samples)
    c = write_run(tmp_path / "cur", cur, samples)
    return compare_dirs(gate_config(str(b), max_drop, minimum, None), c)


def test_a_real_drop_fails_and_names_the_items_that_flipped(tmp_path: Path) -> None:
    result = check(tmp_path, items(40), items(40, failing={3, 7, 11, 15, 19, 23, 27, 31}), "pass_at_1=0.02")
    (c,) = result.checks
    assert c.regressed and result.regressed and result.exit_status == EXIT_REGRESSION
    assert (c.baseline, c.current, c.test) == (1.0, 0.8, "exact McNemar")
    assert c.p_value == pytest.approx(2.0**-8)
    assert c.down == ["i03", "i07", "i11", "i15", "i19", "i23", "i27", "i31"] and c.up == []


def test_noise_does_not_fail_the_build(tmp_path: Path) -> None:
    # Three items got worse and two got better: a drop of 0.025 > 0.02, but not significant.
    result = check(tmp_path, items(40, failing={1, 2}), items(40, failing={5, 6, 9}), "pass_at_1=0.02")
    (c,) = result.checks
    assert c.change == pytest.approx(-0.025) and c.p_value == pytest.approx(0.5)
    assert not c.regressed and result.exit_status == 0
    assert (c.down, c.up) == (["i05", "i06", "i09"], ["i01", "i02"])


def test_a_significant_drop_within_the_allowance_passes(tmp_path: Path) -> None:
    result = check(tmp_path, items(40), items(40, failing=set(range(8))), "pass_at_1=0.25")
    assert result.checks[0].p_value < 0.01 and not result.regressed


def test_pass_at_k_over_samples_uses_the_paired_bootstrap(tmp_path: Path) -> None:
    base = [rec(f"i{k:02d}", s) for k in range(30) for s in range(4)]
    cur = [rec(f"i{k:02d}", s, valid=not (k < 12 and s < 2)) for k in range(30) for s in range(4)]
    result = check(tmp_path, base, cur, "pass_at_1=0.05,pass_at_4=0.0", samples=4)
    p1, p4 = result.checks
    assert p1.test == "paired bootstrap" and p1.change == pytest.approx(-0.2) and p1.regressed
    assert p1.down == [f"i{k:02d}" for k in range(12)]
    assert p4.test == "exact McNemar" and p4.change == 0.0 and not p4.regressed  # each item still passes once


def test_minimums_and_infrastructure_errors(tmp_path: Path) -> None:
    timeout = rec("i10", generation_error_kind="timeout", generation_error_domain="transport", valid=False)
    cur = [*items(10, failing={0, 1}), timeout]
    result = check(tmp_path, items(11), cur, minimum="valid_rate=0.9")
    drop, floor = result.checks
    assert drop.metric == "pass_at_1" and drop.limit == 0.0  # the default with a baseline
    assert floor.kind == "min" and floor.current == 0.8 and floor.regressed
    assert result.unjudged_current == 1 and result.paired_items == 10 and result.only_in_baseline == 1


def test_pass_at_k_needs_the_samples(tmp_path: Path) -> None:
    with pytest.raises(LsrbUsageError, match="pass_at_4 needs at least 4 samples per item"):
        check(tmp_path, items(4), items(4), "pass_at_4=0.1")


def test_a_baseline_of_another_suite_is_refused(tmp_path: Path) -> None:
    b = write_run(tmp_path / "base", items(3), suite="llm_srbench")
    c = write_run(tmp_path / "cur", items(3))
    with pytest.raises(LsrbUsageError, match="is a run of suite llm_srbench, not goal_to_tactic"):
        compare_dirs(gate_config(str(b), None, None, None), c)


def test_lsrb_compare_prints_the_section_and_exits_6(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = write_run(tmp_path / "base", items(30))
    c = write_run(tmp_path / "cur", items(30, failing={2, 4, 6, 8, 10, 12}))
    out_json = tmp_path / "gate.json"
    assert lsrb(["compare", str(b), str(c), "--max-drop", "pass_at_1=0.05", "--json", str(out_json)]) == 6
    out = capsys.readouterr().out
    assert f"lsrb gate: REGRESSION against baseline {b}" in out
    assert "pass_at_1 fell by 0.200 (from 1.000 to 0.800; allowed 0.05), p = 0.0156 < alpha 0.05" in out
    assert "items that got worse on pass_at_1 (6): i02, i04, i06, i08, i10, i12" in out
    saved = json.loads(out_json.read_text("utf-8"))
    assert saved["regressed"] and saved["exit_status"] == 6 and saved["checks"][0]["down"][0] == "i02"
    assert lsrb(["compare", str(b), str(b)]) == 0
    assert "lsrb gate: ok" in capsys.readouterr().out
    assert lsrb(["compare", str(b), str(c), "--alpha", "2"]) == 2
    assert "--alpha must be in (0, 1]" in capsys.readouterr().err
