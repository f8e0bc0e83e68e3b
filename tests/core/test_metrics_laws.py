"""Laws of pass@k and the summary statistics."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.core.metrics import finite_float, pass_at_k, pass_at_k_curve, pass_at_k_ladder, percentile


@st.composite
def n_c(draw):
    n = draw(st.integers(1, 60))
    c = draw(st.integers(0, n))
    return n, c


@given(n_c())
def test_pass_at_k_is_a_probability_and_non_decreasing_in_k(nc):
    n, c = nc
    values = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values))
    assert values[0] == pytest.approx(c / n)  # pass@1 is the success fraction
    assert values[-1] == (1.0 if c > 0 else 0.0)


@given(n_c(), st.integers(1, 60))
def test_pass_at_k_matches_the_combinatorial_definition(nc, k):
    n, c = nc
    if k > n:
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)
        return
    exact = 1.0 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-9)


@given(st.integers(1, 200))
def test_ladder_never_exceeds_samples_per_item(samples):
    ladder = pass_at_k_ladder(samples)
    assert ladder[0] == 1 and ladder[-1] == samples
    assert all(1 <= k <= samples for k in ladder)
    assert ladder == sorted(set(ladder))


def test_every_k_is_averaged_over_the_same_items():
    # The old rule (each k over the items with >= k samples) gave a falling curve here:
    # pass@1 = (0.25 + 1) / 2, pass@4 = 1.0 over "a" alone; now both are over "a" alone.
    per_item = {"a": (4, 1), "b": (2, 2)}
    curve = pass_at_k_curve(per_item, [1, 2, 4])
    assert curve.items == 1 and curve.min_samples == 4
    assert curve.values[1] == pytest.approx(0.25)
    assert curve.values[4] == pytest.approx(1.0)
    empty = pass_at_k_curve({}, [1])
    assert empty.values == {1: None} and empty.items == 0


@st.composite
def item_sets(draw):
    """Items with a few judged samples each (some with fewer than the run's samples, as when an
    infrastructure error took one), and the ladder for that run."""
    samples = draw(st.integers(1, 8))
    items = draw(
        st.dictionaries(
            st.text("abc", min_size=1, max_size=3),
            st.integers(0, samples).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
            max_size=12,
        )
    )
    return {k: v for k, v in items.items() if v[0] > 0}, samples


@given(item_sets())
def test_the_pass_at_k_curve_cannot_fall_and_counts_its_items(drawn):
    per_item, samples = drawn
    ladder = pass_at_k_ladder(samples)
    curve = pass_at_k_curve(per_item, ladder)
    assert curve.items == sum(n >= samples for n, _ in per_item.values())
    values = [curve.values[k] for k in ladder]
    if curve.items == 0:
        assert values == [None] * len(ladder)
        return
    assert all(v is not None and 0.0 <= v <= 1.0 for v in values)
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values))  # type: ignore[operator]
    eligible = [(n, c) for n, c in per_item.values() if n >= samples]
    assert values[0] == pytest.approx(sum(c / n for n, c in eligible) / len(eligible))


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_agrees_with_linear_interpolation(values, q):
    import numpy as np

    ordered = sorted(values)
    assert percentile(ordered, q) == pytest.approx(float(np.percentile(ordered, q)), rel=1e-9, abs=1e-6)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_finite_float_keeps_finite_values_and_drops_the_rest(value: float) -> None:
    """The one finite-or-None rule every record field goes through (JSON has no NaN or inf)."""
    got = finite_float(value)
    assert (got is None) == (not math.isfinite(value))
    assert got is None or (type(got) is float and got == value)
    import numpy as np

    assert type(finite_float(np.float64(value))) is type(got)  # numpy's floats leave as floats
