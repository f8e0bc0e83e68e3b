"""Laws of the numeric metrics (hypothesis) and the handling of non-finite predictions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pytest_lsrb.srbench.scoring.metrics import (
    NO_OOD,
    acc_tau,
    frac_within_tau,
    median_or_none,
    nmse,
    r2,
    relative_errors,
    split_metrics,
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
vectors = st.integers(2, 40).flatmap(
    lambda n: st.tuples(arrays(np.float64, n, elements=finite), arrays(np.float64, n, elements=finite))
)


@settings(max_examples=200, deadline=None)
@given(vectors)
def test_nmse_laws(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y, yhat = pair
    assume(np.var(y) > 1e-6 and np.var(3.0 * y) > 1e-6)
    value = nmse(y, yhat)
    assert value >= 0.0
    assert nmse(y, y) == 0.0
    # r2 = 1 - nmse with the population variance
    assert r2(y, yhat) == pytest.approx(1.0 - value, rel=1e-9, abs=1e-9)
    # scale invariance: measuring in other units changes nothing
    assert nmse(3.0 * y, 3.0 * yhat) == pytest.approx(value, rel=1e-9)
    # predicting the mean gives exactly 1
    assert nmse(y, np.full_like(y, np.mean(y))) == pytest.approx(1.0, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(vectors, st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_accuracy_laws(pair: tuple[np.ndarray, np.ndarray], t1: float, t2: float) -> None:
    y, yhat = pair
    lo, hi = sorted((t1, t2))
    f_lo, f_hi = frac_within_tau(y, yhat, lo), frac_within_tau(y, yhat, hi)
    assert 0.0 <= f_lo <= f_hi <= 1.0  # monotone in the tolerance
    assert acc_tau(y, yhat, hi) == (f_hi == 1.0)  # all-points accuracy is the fraction being 1
    if np.all(y != 0):
        assert acc_tau(y, y, 0.0)  # (at y = 0 the paper's |ŷ-y|/|y| is 0/0: not within)


def test_paper_definition_on_a_hand_example() -> None:
    y = np.array([1.0, 2.0, -4.0, 10.0])
    yhat = np.array([1.05, 1.9, -4.3, 10.0])  # relative errors 0.05, 0.05, 0.075, 0
    assert acc_tau(y, yhat, 0.1) and not acc_tau(y, yhat, 0.06)
    assert frac_within_tau(y, yhat, 0.06) == 0.75
    np.testing.assert_allclose(relative_errors(y, yhat), [0.05, 0.05, 0.075, 0.0])
    assert nmse(y, yhat) == pytest.approx(np.mean((y - yhat) ** 2) / np.var(y))


def test_zero_and_constant_targets_give_what_the_formulas_give() -> None:
    rel = relative_errors(np.array([0.0, 0.0]), np.array([0.0, 1e-9]))
    assert math.isnan(rel[0]) and rel[1] == math.inf
    assert not acc_tau(np.array([0.0, 1.0]), np.array([0.0, 1.0]))  # 0/0 is not within tolerance
    assert math.isnan(nmse(np.ones(3), np.ones(3))) and nmse(np.ones(3), np.zeros(3)) == math.inf


def test_strict_policy_counts_non_finite_predictions_instead_of_dropping_them() -> None:
    y = np.array([1.0, 2.0, 3.0, 4.0])
    good = split_metrics(y, y * 1.01, policy="strict")
    assert good.valid and good.acc_tau and good.num_valid_points == 4 and good.nmse is not None
    bad = split_metrics(y, np.array([1.0, np.nan, 3.0, np.inf]), policy="strict")
    assert not bad.valid and bad.num_valid_points == 2 and bad.num_points == 4
    assert bad.nmse is None and bad.r2 is None and bad.acc_tau is False
    assert bad.frac_within_tau == 0.5  # the two finite, exact points; nan/inf are outside
    rec = bad.record_id()
    assert rec["num_valid_points_id"] == 2 and rec["nmse_id"] is None and rec["acc_tau_id"] is False


def test_a_split_gives_the_same_fields_in_domain_and_ood_and_none_without_ood_data() -> None:
    metrics = split_metrics(np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    id_fields, ood_fields = metrics.record_id(), metrics.record_ood()
    assert [k.removesuffix("_id") for k in id_fields] == [k.removesuffix("_ood") for k in ood_fields]
    assert list(id_fields.values()) == list(ood_fields.values())
    assert list(NO_OOD) == list(ood_fields) and set(NO_OOD.values()) == {None}


@given(st.lists(st.one_of(st.none(), st.floats(0, 10, allow_nan=False)), min_size=1, max_size=9))
def test_median_treats_invalid_as_worst(values: list[float | None]) -> None:
    med = median_or_none(values)
    finite_values = [v for v in values if v is not None]
    if len(finite_values) * 2 > len(values):
        assert med is not None and min(finite_values) <= med <= max(finite_values)
    elif len(finite_values) * 2 < len(values):
        assert med is None
