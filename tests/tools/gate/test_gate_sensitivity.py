"""What the gate can detect with the items at hand, Holm across metrics, and confidence intervals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from pytest_lsrb.tools.gate import compare_dirs, gate_config, result_lines
from pytest_lsrb.tools.significance import (
    holm_adjust,
    mcnemar_exact_p,
    mcnemar_min_detectable,
    normal_min_detectable,
    paired_bootstrap_ci,
)


def write_run(path: Path, valid: list[bool]) -> Path:
    path.mkdir(parents=True)
    records = [
        {"item_id": f"i{k:02d}", "sample_index": 0, "valid": v, "nonempty": True} for k, v in enumerate(valid)
    ]
    (path / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    (path / "run.json").write_text(json.dumps({"suite": "s", "config": {"samples": 1}}), "utf-8")
    return path


def items(n: int, failing: set[int] | None = None) -> list[bool]:
    return [k not in (failing or set()) for k in range(n)]


@given(n=st.integers(0, 200), alpha=st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.5]))
def test_the_min_detectable_count_is_the_first_all_one_way_drop_that_is_significant(
    n: int, alpha: float
) -> None:
    k = mcnemar_min_detectable(n, alpha)
    first = next(d for d in range(1, 100) if mcnemar_exact_p(d, 0) < alpha)
    assert k == (first if first <= n else None)


def test_the_issue_example_14_items_4_down_cannot_be_significant() -> None:
    # 4 of 14 down, none up: p = 0.0625, and no drop below 5 items could ever reach p < 0.05.
    assert mcnemar_exact_p(4, 0) == 0.0625
    assert mcnemar_min_detectable(14, 0.05) == 5
    assert mcnemar_min_detectable(4, 0.05) is None


def test_the_normal_mde_is_the_textbook_formula() -> None:
    diffs = [-0.5, 0.0, -0.25, 0.25, -0.75, 0.0]
    expected = (norm.ppf(0.95) + norm.ppf(0.8)) * np.std(diffs, ddof=1) / math.sqrt(len(diffs))
    assert normal_min_detectable(diffs, 0.05) == pytest.approx(expected)
    assert normal_min_detectable([0.1], 0.05) is None


def test_holm_matches_the_step_down_procedure() -> None:
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm_adjust([]) == []


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_rejects_exactly_what_the_step_down_rule_rejects(ps: list[float], alpha: float) -> None:
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    rejected: set[int] = set()
    for rank, i in enumerate(order):
        if ps[i] * (m - rank) < alpha:  # strictly below, like the gate's p < alpha
            rejected.add(i)
        else:
            break
    adjusted = holm_adjust(ps)
    assert {i for i in range(m) if adjusted[i] < alpha} == rejected


def test_the_bootstrap_interval_covers_the_mean_and_is_deterministic() -> None:
    diffs = [-1.0] * 6 + [0.0] * 30 + [1.0] * 2
    low, high = paired_bootstrap_ci(diffs) or (0.0, 0.0)
    assert low < np.mean(diffs) < high and paired_bootstrap_ci(diffs) == (low, high)
    assert paired_bootstrap_ci([]) is None


def test_several_metrics_are_holm_corrected_and_the_mde_is_printed(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", items(14))
    cur = write_run(tmp_path / "cur", items(14, failing={0, 1, 2, 3}))
    config = gate_config(str(base), "pass_at_1=0.02,valid_rate=0.02", None, None)
    result = compare_dirs(config, cur)
    lines = "\n".join(result_lines(result))
    assert not result.regressed  # 4 of 14 down: p = 0.0625 even before the correction
    for check in result.checks:
        assert check.p_value == 0.0625 and check.p_adjusted == pytest.approx(0.125)
        assert check.ci is not None and check.ci[0] < check.change < check.ci[1] + 1e-12  # type: ignore[operator]
    assert "p (Holm)" in lines and "95% CI" in lines
    # Holm over 2 metrics: the first test runs at 0.025, so 6 all-one-way items are needed.
    assert "the smallest drop detectable on 14 items is 0.429" in lines
    assert "WARNING: pass_at_1: the allowed drop 0.02 is below that" in lines


def test_too_few_items_say_the_gate_cannot_fail(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", items(4))
    cur = write_run(tmp_path / "cur", items(4, failing={0, 1, 2, 3}))
    result = compare_dirs(gate_config(str(base), "pass_at_1=0", None, None), cur)
    assert not result.regressed
    assert "4 items are too few for any drop to be significant" in "\n".join(result_lines(result))
