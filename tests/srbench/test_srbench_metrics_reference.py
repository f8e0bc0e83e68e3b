"""The `reference` metrics policy equals the reference's formulas on hostile arrays.

The reference (LLM-SRBench bench/pipelines.py, compute_output_base_metrics) is re-created here
from its definition: keep the points whose prediction is not NaN (`~np.isnan(y_pred)`), then
mse = mean((y-ŷ)²), nmse = mse / np.var(y), r2 = 1 - Σ(y-ŷ)²/Σ(y-ȳ)², Kendall τ from
scipy.stats.kendalltau, MAPE as scikit-learn computes it (|y-ŷ| / max(|y|, float64 eps),
averaged), num_valid_points = the kept count; and the paper's Acc_τ = 1(max_i |ŷ_i-y_i|/|y_i| <= τ)
over ALL test points (i = 1..N_test: the reference's NaN dropping is for its own metrics, not Acc_τ;
a NaN/inf prediction anywhere makes the split not accurate), under every policy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from pytest_lsrb.srbench.options import METRICS_POLICIES, MetricsPolicy
from pytest_lsrb.srbench.scoring.metrics import split_metrics

EPS = np.finfo(np.float64).eps
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the reference's empty mean/var


def paper_acc_tau(y: np.ndarray, y_pred: np.ndarray, tau: float = 0.1) -> float:
    with np.errstate(all="ignore"):
        rel = np.abs((y_pred - y) / y)
        return float(len(y) > 0 and not np.isnan(rel).any() and bool(np.max(rel) <= tau))


def reference(y: np.ndarray, y_pred: np.ndarray, tau: float = 0.1) -> dict[str, float]:
    acc = paper_acc_tau(y, y_pred, tau)
    keep = np.argwhere(~np.isnan(y_pred))  # (k, 1) indices, as the reference takes them
    y_pred, y = y_pred[keep], y[keep]
    with np.errstate(all="ignore"):
        var = np.var(y)
        out = {
            "mse": float(np.mean((y - y_pred) ** 2)),
            "nmse": float(np.mean((y - y_pred) ** 2) / var),
            "r2": float(1 - (np.sum((y - y_pred) ** 2) / np.sum((y - y.mean()) ** 2))),
            "kendall_tau": float(kendalltau(y, y_pred)[0]) if len(y) > 1 else math.nan,
            "mape": float(np.mean(np.abs(y - y_pred) / np.maximum(np.abs(y), EPS))),
            "num_valid_points": float(len(y_pred)),
            "acc_tau": acc,
        }
    return out


def ours(y: np.ndarray, y_pred: np.ndarray, policy: MetricsPolicy = "reference") -> dict[str, float]:
    m = split_metrics(y, y_pred, policy=policy)

    def f(v: float | None) -> float:
        return math.nan if v is None else v

    return {
        "mse": f(m.mse),
        "nmse": f(m.nmse),
        "r2": f(m.r2),
        "kendall_tau": f(m.kendall_tau),
        "mape": f(m.mape),
        "num_valid_points": float(m.num_valid_points),
        "acc_tau": float(m.acc_tau),
    }


RNG = np.random.default_rng(7)
Y = RNG.normal(2.0, 1.0, 100)
NEAR = Y * (1 + RNG.normal(0, 0.01, 100))
with_one_nan = NEAR.copy()
with_one_nan[17] = np.nan
half_nan = NEAR.copy()
half_nan[::2] = np.nan
with_inf = NEAR.copy()
with_inf[3] = np.inf
zero_targets = Y.copy()
zero_targets[:5] = 0.0

CASES = {
    "clean": (Y, NEAR),
    "one NaN of 100 (the issue's example)": (Y, with_one_nan),
    "half NaN": (Y, half_nan),
    "inf prediction": (Y, with_inf),
    "zero targets": (zero_targets, NEAR),
    "zero targets predicted exactly": (zero_targets, zero_targets.copy()),
    "constant target": (np.full(50, 3.0), np.linspace(2.9, 3.1, 50)),
    "constant target predicted exactly": (np.full(50, 3.0), np.full(50, 3.0)),
    "constant prediction": (Y, np.full(100, 2.0)),
    "all NaN": (Y[:10], np.full(10, np.nan)),
    "single point": (np.array([2.0]), np.array([2.1])),
}


def _same(a: float, b: float) -> bool:
    """Equal as the reference would print them: None stands for any non-finite value."""
    if not math.isfinite(b):
        return not math.isfinite(a)
    return a == pytest.approx(b, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_reference_policy_equals_the_reference_formulas(case: str) -> None:
    y, y_pred = CASES[case]
    got, want = ours(y, y_pred), reference(y, y_pred)
    for key, value in want.items():
        assert _same(got[key], value), (key, got[key], value)


def test_one_nan_of_a_hundred_is_dropped_not_fatal() -> None:
    m = split_metrics(Y, with_one_nan, policy="reference")
    assert m.valid and m.num_valid_points == 99 and m.nmse is not None
    strict = split_metrics(Y, with_one_nan, policy="strict")
    assert not strict.valid and strict.nmse is None


@pytest.mark.parametrize("policy", METRICS_POLICIES)
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_acc_tau_is_over_all_points_whatever_the_policy(case: str, policy: MetricsPolicy) -> None:
    y, y_pred = CASES[case]
    assert ours(y, y_pred, policy)["acc_tau"] == paper_acc_tau(y, y_pred)


def test_nan_on_99_points_and_close_on_the_last_is_not_accurate() -> None:
    """The issue's example: NaN on 99 of 100 points, 1 % off on the last."""
    y_pred = np.full(100, np.nan)
    y_pred[-1] = Y[-1] * 1.01
    m = split_metrics(Y, y_pred, policy="reference")
    assert m.num_valid_points == 1 and m.acc_tau is False and m.frac_within_tau == pytest.approx(0.01)
