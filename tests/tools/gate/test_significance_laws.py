"""Laws of the gate's paired tests: exact McNemar and the paired bootstrap."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from pytest_lsrb.tools.significance import mcnemar_exact_p, paired_bootstrap_p

counts = st.integers(min_value=0, max_value=150)


@given(down=counts, up=counts)
def test_mcnemar_is_the_one_sided_binomial_tail(down: int, up: int) -> None:
    p = mcnemar_exact_p(down, up)
    assert 0.0 <= p <= 1.0
    if down + up == 0:
        assert p == 1.0
    else:
        assert p == pytest.approx(binomtest(down, down + up, 0.5, alternative="greater").pvalue, rel=1e-9)


@given(down=counts, up=counts)
def test_mcnemar_is_monotone_more_losses_lower_p_more_gains_higher_p(down: int, up: int) -> None:
    p = mcnemar_exact_p(down, up)
    assert mcnemar_exact_p(down + 1, up) <= p <= mcnemar_exact_p(down, up + 1)
    # Both directions cannot be significant at once: P(X >= d) + P(X <= d) >= 1.
    assert p + mcnemar_exact_p(up, down) >= 1.0 - 1e-12


def test_mcnemar_known_values_and_the_large_sample_path() -> None:
    assert mcnemar_exact_p(0, 9) == 1.0
    assert mcnemar_exact_p(10, 0) == pytest.approx(2.0**-10)
    assert mcnemar_exact_p(3, 2) == pytest.approx(0.5)
    big = mcnemar_exact_p(3100, 2900)  # beyond the exact-integer limit
    assert big == pytest.approx(binomtest(3100, 6000, 0.5, alternative="greater").pvalue, rel=1e-6)
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 2)


diffs_st = st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(diffs=diffs_st, shift=st.floats(min_value=0.001, max_value=1), seed=st.integers(0, 1000))
def test_bootstrap_laws(diffs: list[float], shift: float, seed: int) -> None:
    p = paired_bootstrap_p(diffs, resamples=200, seed=seed)
    assert 1 / 201 <= p <= 1.0
    assert paired_bootstrap_p(diffs, resamples=200, seed=seed) == p  # seeded: reproducible
    # Moving every difference up can only make a drop look less significant.
    assert paired_bootstrap_p([d + shift for d in diffs], resamples=200, seed=seed) >= p
    # A drop and its mirror-image gain cannot both be significant.
    assert p + paired_bootstrap_p([-d for d in diffs], resamples=200, seed=seed) >= 1.0


def test_bootstrap_edges_and_a_clear_drop() -> None:
    assert paired_bootstrap_p([]) == 1.0
    assert paired_bootstrap_p([0.0] * 20) == 1.0
    assert paired_bootstrap_p([-0.25] * 20, resamples=999) == pytest.approx(1 / 1000)
    assert paired_bootstrap_p([-0.5] * 15 + [0.0] * 25, resamples=2000) < 0.01
    assert paired_bootstrap_p([-0.5, 0.5] * 20, resamples=2000) > 0.3
    with pytest.raises(ValueError):
        paired_bootstrap_p([1.0], resamples=0)
