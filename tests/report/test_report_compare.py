"""Baseline comparison: metric deltas, flipped items and the compact terminal text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.report import aggregate as agg
from pytest_lsrb.report.compare import (
    Flip,
    compare,
    comparison_lines,
    find_flips,
    format_comparison,
    headline_metrics,
    metric_deltas,
)
from pytest_lsrb.report.data import load_run

counts = st.dictionaries(
    st.text(min_size=1, max_size=4),
    st.tuples(st.integers(1, 5), st.integers(0, 5)).map(lambda t: (t[0], min(t[0], t[1]))),
    max_size=20,
)


@given(counts, counts)
def test_flips_are_exactly_the_items_whose_pass_at_1_changed(
    base: dict[str, tuple[int, int]], cur: dict[str, tuple[int, int]]
) -> None:
    # The gate's definition (issue #31): an item regressed when its share of successful samples fell.
    flips = find_flips(base, cur)
    share = {i: (base[i][1] / base[i][0], cur[i][1] / cur[i][0]) for i in base.keys() & cur.keys()}
    expected = {i for i, (b, c) in share.items() if b != c}
    assert {f.item_id for f in flips} == expected
    for f in flips:
        b, c = share[f.item_id]
        assert f.direction == ("regressed" if c < b else "improved")
    directions = [f.direction for f in flips]
    assert directions == sorted(directions, key=lambda d: d != "regressed")  # regressions first
    assert {f.item_id for f in find_flips(cur, base)} == expected  # symmetric set, swapped directions


def test_deltas_know_which_way_is_better() -> None:
    base = {
        "valid_rate": 0.5,
        "latency_ms_p50": 100.0,
        "contains_sorry_rate": 0.1,
        "verification_pass_at_k_1": 0.2,
        "verification_pass_at_k_8": 0.4,
        "cost": 0.01,
    }
    cur = {
        "valid_rate": 0.6,
        "latency_ms_p50": 120.0,
        "contains_sorry_rate": 0.1,
        "verification_pass_at_k_1": 0.1,
        "verification_pass_at_k_8": 0.5,
        "cost": 0.001,
    }
    verdicts = {d.metric.key: d.verdict for d in metric_deltas(base, cur)}
    assert verdicts == {
        "valid_rate": "better",
        "latency_ms_p50": "timing",  # the machine's, not the model's: never better/worse
        "contains_sorry_rate": "same",
        "verification_pass_at_k_1": "worse",
        "verification_pass_at_k_8": "better",
        "cost": "better",  # lower is better
    }
    labels = [m.label for m in headline_metrics(base, cur)]
    assert labels.index("pass@1") < labels.index("pass@8")  # numeric order, not string order


def _summary(**extra: Any) -> dict[str, Any]:
    return {
        "config": {"adapter": "openai", "model": "m"},
        "selected_rows_hash": "a" * 64,
        "valid_rate": 0.9,
        "verification_pass_at_k_1": 0.5,
        **extra,
    }


def test_the_terminal_comparison_fits_one_screen_and_names_flips() -> None:
    flips = [Flip(f"item{i:03d}", (2, 1), (2, 0), "regressed") for i in range(40)] + [
        Flip("better", (1, 0), (1, 1), "improved")
    ]
    lines = format_comparison(
        _summary(), _summary(verification_pass_at_k_1=0.25, config={"adapter": "openai", "model": "n"}), flips
    )
    text = "\n".join(lines)
    assert len(lines) <= 30 and max(len(line) for line in lines) <= 120
    assert "items flipped: 40 regressed, 1 improved" in text
    assert "item000" in text and "and 32 more" in text and "better" in text
    assert "config changed: model" in text
    assert "note: the runs selected different items" not in text
    pass1 = next(line for line in lines if line.startswith("pass@1"))
    assert "0.500" in pass1 and "0.250" in pass1 and "-0.250" in pass1 and pass1.endswith("worse")


def test_long_item_ids_are_cut_to_fit_a_log_line() -> None:
    flips = [
        Flip(f"mathlib4/Mathlib/Algebra/Group/Basic.lean:{i}", (1, 1), (1, 0), "regressed") for i in range(6)
    ]
    line = next(x for x in format_comparison(_summary(), _summary(), flips) if "regressed:" in x)
    assert len(line) <= 120 and line.endswith("more") and "Basic.lean:0" in line


def test_the_terminal_comparison_warns_when_the_selections_differ() -> None:
    lines = format_comparison(_summary(), _summary(selected_rows_hash="b" * 64), [])
    assert any("selected different items" in line for line in lines)
    assert lines[-1] == "items flipped: 0 regressed, 0 improved"
    assert format_comparison(None, None, [])[-1] == "items flipped: 0 regressed, 0 improved"
    without = format_comparison(_summary(), _summary(), None)
    assert without and not any("flipped" in line for line in without)


def test_comparing_two_runs_pairs_items_and_agrees_with_the_records(tactic_pair: tuple[Path, Path]) -> None:
    base_dir, cur_dir = tactic_pair
    comparison = compare(load_run(base_dir), load_run(cur_dir))
    base_counts = agg.per_item_counts(comparison.baseline_scored)
    cur_counts = agg.per_item_counts(comparison.current_scored)
    samples = (comparison.baseline.samples, comparison.current.samples)
    assert comparison.flips == find_flips(base_counts, cur_counts, samples)
    assert comparison.flips, "the two synthetic runs differ in skill, so some items flip"
    lines = comparison_lines(base_dir, cur_dir)
    assert lines == comparison.lines()
    assert lines[0].startswith("baseline openai/model-a") and "current openai/model-b" in lines[0]
