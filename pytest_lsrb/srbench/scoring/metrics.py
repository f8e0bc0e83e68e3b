"""Numeric metrics for a predicted equation on one data split: pure functions.

The formulas are the reference's (LLM-SRBench `bench/pipelines.py`, compute_output_base_metrics)
and the paper's Acc_τ, evaluated literally with numpy:

- `mse = mean((y - ŷ)²)`, `nmse = mse / var(y)` (population variance),
  `r2 = 1 - Σ(y - ŷ)² / Σ(y - ȳ)²`, `kendall_tau` = scipy's Kendall τ-b of (y, ŷ),
  `mape = mean(|y - ŷ| / max(|y|, ε))` with ε the float64 machine epsilon (scikit-learn's
  mean_absolute_percentage_error, which the reference calls);
- `acc_tau = 1(max_i |ŷ_i - y_i| / |y_i| <= τ)`, τ = 0.1 (the paper's Acc_0.1; a point with
  y_i = 0 gives inf or nan there, so it fails); `frac_within_tau` is the fraction of points within.

Which points count is the *policy* (`--lsrb-sr-metrics`, recorded in run.json):

- `reference` (default): for mse, nmse, r2, Kendall τ and MAPE, points whose prediction is NaN
  are dropped, as the reference does (`~np.isnan(y_pred)`; an inf prediction stays and makes mse
  inf); `num_valid_points` counts the rest. Degenerate inputs give what the formulas give: a
  constant target makes nmse inf (nan when the prediction is exact too), no point left makes
  every value nan. (Where the reference itself raises — scikit-learn refuses inf predictions or
  no points for MAPE — the formula's value stands.)
- `strict`: nothing is dropped; an equation not finite on every point is invalid: no metrics
  (None) and acc_tau 0.

Under either policy Acc_τ (and `frac_within_tau`) are over *all* test points, as the paper
defines Acc_τ: a NaN or inf prediction on any point makes the split not accurate.

A split is `valid` when its mse is finite. Records hold None for a non-finite value. This is the
one NMSE of a run: the record's `nmse_id`/`nmse_ood`, its `search_progress`, Table 1's medians and
the report all read `split_metrics` under the run's policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from scipy.stats import kendalltau

from pytest_lsrb.core.metrics import finite_float
from pytest_lsrb.srbench.options import MetricsPolicy
from pytest_lsrb.srbench.records import SrbenchFields

TAU: Final = 0.1
_EPS: Final = float(np.finfo(np.float64).eps)


def formulas(y: np.ndarray, yhat: np.ndarray, tau: float = TAU) -> dict[str, float]:
    """Every metric's formula on exactly these points (nothing dropped), as floats (nan/inf kept)."""
    y, yhat = _pair(y, yhat)
    with np.errstate(all="ignore"):
        if y.size == 0:
            nan = math.nan
            return {
                "mse": nan,
                "nmse": nan,
                "r2": nan,
                "kendall_tau": nan,
                "mape": nan,
                "acc_tau": 0.0,
                "frac": 0.0,
            }
        sq = (y - yhat) ** 2
        mse = np.float64(np.mean(sq))
        nmse = mse / np.float64(np.var(y))
        r2 = np.float64(1.0) - np.float64(np.sum(sq)) / np.float64(np.sum((y - np.mean(y)) ** 2))
        mape = np.mean(np.abs(y - yhat) / np.maximum(np.abs(y), _EPS))
        return {
            "mse": float(mse),
            "nmse": float(nmse),
            "r2": float(r2),
            "kendall_tau": _kendall(y, yhat),
            "mape": float(mape),
            "acc_tau": float(acc_tau(y, yhat, tau)),
            "frac": frac_within_tau(y, yhat, tau),
        }


def _kendall(y: np.ndarray, yhat: np.ndarray) -> float:
    if y.size < 2:
        return math.nan
    with np.errstate(all="ignore"):
        try:
            return float(kendalltau(y, yhat).statistic)
        except (ValueError, FloatingPointError):
            return math.nan


def nmse(y: np.ndarray, yhat: np.ndarray) -> float:
    return formulas(y, yhat)["nmse"]


def r2(y: np.ndarray, yhat: np.ndarray) -> float:
    return formulas(y, yhat)["r2"]


def relative_errors(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """|ŷ - y| / |y| per point, literally (inf or nan where y is 0)."""
    y, yhat = _pair(y, yhat)
    with np.errstate(all="ignore"):
        rel: np.ndarray = np.abs(yhat - y) / np.abs(y)
    return rel


def frac_within_tau(y: np.ndarray, yhat: np.ndarray, tau: float = TAU) -> float:
    rel = relative_errors(y, yhat)
    return float(np.mean(rel <= tau)) if rel.size else 0.0


def acc_tau(y: np.ndarray, yhat: np.ndarray, tau: float = TAU) -> bool:
    """The paper's Acc_τ: every point within relative tolerance τ (nan counts as outside)."""
    rel = relative_errors(y, yhat)
    return bool(rel.size and np.max(rel) <= tau)


@dataclass(frozen=True)
class SplitMetrics:
    nmse: float | None
    r2: float | None
    acc_tau: bool
    frac_within_tau: float
    num_valid_points: int
    num_points: int
    mse: float | None = None
    kendall_tau: float | None = None
    mape: float | None = None

    @property
    def valid(self) -> bool:
        return self.num_valid_points > 0 and self.mse is not None

    def record_id(self) -> SrbenchFields:
        """The in-domain test split's attempt-record fields (`nmse_id`, `acc_tau_id`, ...)."""
        return {
            "mse_id": self.mse,
            "nmse_id": self.nmse,
            "r2_id": self.r2,
            "kendall_tau_id": self.kendall_tau,
            "mape_id": self.mape,
            "acc_tau_id": self.acc_tau,
            "frac_within_tau_id": self.frac_within_tau,
            "num_valid_points_id": self.num_valid_points,
            "num_points_id": self.num_points,
        }

    def record_ood(self) -> SrbenchFields:
        """The OOD split's attempt-record fields (`nmse_ood`, `acc_tau_ood`, ...)."""
        return {
            "mse_ood": self.mse,
            "nmse_ood": self.nmse,
            "r2_ood": self.r2,
            "kendall_tau_ood": self.kendall_tau,
            "mape_ood": self.mape,
            "acc_tau_ood": self.acc_tau,
            "frac_within_tau_ood": self.frac_within_tau,
            "num_valid_points_ood": self.num_valid_points,
            "num_points_ood": self.num_points,
        }


EMPTY: Final = SplitMetrics(
    nmse=None, r2=None, acc_tau=False, frac_within_tau=0.0, num_valid_points=0, num_points=0
)
# The OOD fields of a problem without OOD data: every one null (`record_ood`'s keys).
NO_OOD: Final[SrbenchFields] = {
    "mse_ood": None,
    "nmse_ood": None,
    "r2_ood": None,
    "kendall_tau_ood": None,
    "mape_ood": None,
    "acc_tau_ood": None,
    "frac_within_tau_ood": None,
    "num_valid_points_ood": None,
    "num_points_ood": None,
}


def split_metrics(
    y: np.ndarray, yhat: np.ndarray, tau: float = TAU, policy: MetricsPolicy = "reference"
) -> SplitMetrics:
    """All metrics of one split under `policy` (see the module docstring)."""
    y, yhat = _pair(y, yhat)
    if policy == "reference":
        keep = ~np.isnan(yhat)
    elif policy == "strict":
        keep = np.ones(y.shape, dtype=bool)
        if not np.all(np.isfinite(yhat)):
            finite = int(np.isfinite(yhat).sum())
            frac = frac_within_tau(y, yhat, tau)
            return SplitMetrics(None, None, False, frac, finite, int(y.size))
    else:
        raise ValueError(f"unknown metrics policy {policy!r}")
    values = formulas(y[keep], yhat[keep], tau)
    mse = finite_float(values["mse"])
    return SplitMetrics(
        nmse=finite_float(values["nmse"]) if mse is not None else None,
        r2=finite_float(values["r2"]) if mse is not None else None,
        acc_tau=acc_tau(y, yhat, tau),  # over all points, whatever the policy dropped
        frac_within_tau=frac_within_tau(y, yhat, tau),
        num_valid_points=int(keep.sum()),
        num_points=int(y.size),
        mse=mse,
        kendall_tau=finite_float(values["kendall_tau"]),
        mape=finite_float(values["mape"]),
    )


def _pair(y: Any, yhat: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(y, dtype=np.float64).reshape(-1)
    b = np.asarray(yhat, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"y has {a.size} points, the prediction {b.size}")
    return a, b


def median_or_none(values: list[float | None]) -> float | None:
    """Median where None/nan stand for +inf (an invalid equation is the worst fit)."""
    if not values:
        return None
    clean = sorted(
        math.inf if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values
    )
    mid = len(clean) // 2
    med = clean[mid] if len(clean) % 2 else (clean[mid - 1] + clean[mid]) / 2
    return med if math.isfinite(med) else None
