"""Laws of pass@k and the summary statistics."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.core.metrics import mean_pass_at_k, pass_at_k, pass_at_k_ladder, percentile


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


def test_mean_pass_at_k_skips_items_with_too_few_samples():
    per_item = {"a": (4, 1), "b": (2, 2)}
    assert mean_pass_at_k(per_item, 1) == pytest.approx((0.25 + 1.0) / 2)
    assert mean_pass_at_k(per_item, 4) == pytest.approx(1.0)  # only "a" has 4 samples
    assert mean_pass_at_k({}, 1) is None


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_agrees_with_linear_interpolation(values, q):
    import numpy as np

    ordered = sorted(values)
    assert percentile(ordered, q) == pytest.approx(float(np.percentile(ordered, q)), rel=1e-9, abs=1e-6)
