"""Numeric metrics for a predicted equation on one data split: pure functions.

As in the reference, then the paper's additions:
- `nmse = mean((y - ŷ)²) / var(y)` (population variance);
- `r2 = 1 - Σ(y - ŷ)² / Σ(y - ȳ)²` (so r2 = 1 - nmse);
- `acc_tau = 1 if max_i |ŷ_i - y_i| / |y_i| <= tau` (all points must be within tolerance; the
  paper's Acc_0.1), and `frac_within_tau`, the fraction of points within tolerance. A point with
  y_i = 0 is within tolerance only when ŷ_i = 0.

Non-finite predictions are never dropped silently: `num_valid_points` counts the finite ones, and
an equation that is not finite on every point is *invalid*: its nmse/r2 are None (treated as
+inf/-inf when aggregating) and acc_tau is 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

TAU: Final = 0.1


def nmse(y: np.ndarray, yhat: np.ndarray) -> float:
    """mean((y - ŷ)²) / var(y); for a constant target, 0 when exact and inf otherwise."""
    y, yhat = _pair(y, yhat)
    mse = float(np.mean((y - yhat) ** 2))
    var = float(np.var(y))
    if var == 0.0:
        return 0.0 if mse == 0.0 else math.inf
    return mse / var


def r2(y: np.ndarray, yhat: np.ndarray) -> float:
    y, yhat = _pair(y, yhat)
    ss_res = float(np.sum((y - yhat) ** 2))
    ss_tot = float(np.sum((y - np.mean(y)) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else -math.inf
    return 1.0 - ss_res / ss_tot


def relative_errors(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """|ŷ - y| / |y| per point; 0 where both are 0, inf where only y is 0; nan stays nan."""
    y, yhat = _pair(y, yhat)
    diff = np.abs(yhat - y)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(y)
    zero = y == 0
    rel[zero] = np.where(diff[zero] == 0, 0.0, np.inf)
    return rel


def frac_within_tau(y: np.ndarray, yhat: np.ndarray, tau: float = TAU) -> float:
    rel = relative_errors(y, yhat)
    return float(np.mean(rel <= tau)) if rel.size else 0.0


def acc_tau(y: np.ndarray, yhat: np.ndarray, tau: float = TAU) -> bool:
    """The paper's Acc_τ: every point within relative tolerance τ (nan counts as outside)."""
    rel = relative_errors(y, yhat)
    return bool(rel.size and np.all(rel <= tau))


@dataclass(frozen=True)
class SplitMetrics:
    nmse: float | None
    r2: float | None
    acc_tau: bool
    frac_within_tau: float
    num_valid_points: int
    num_points: int

    @property
    def valid(self) -> bool:
        return self.num_points > 0 and self.num_valid_points == self.num_points

    def record(self, suffix: str) -> dict[str, Any]:
        """Attempt-record fields, e.g. `nmse_id`, `acc_tau_id`, `num_valid_points_id`."""
        return {
            f"nmse_{suffix}": self.nmse,
            f"r2_{suffix}": self.r2,
            f"acc_tau_{suffix}": self.acc_tau,
            f"frac_within_tau_{suffix}": self.frac_within_tau,
            f"num_valid_points_{suffix}": self.num_valid_points,
            f"num_points_{suffix}": self.num_points,
        }


def split_metrics(y: np.ndarray, yhat: np.ndarray, tau: float = TAU) -> SplitMetrics:
    """All metrics of one split. An equation not finite on every point is invalid: no nmse/r2."""
    y, yhat = _pair(y, yhat)
    finite = np.isfinite(yhat)
    n_valid = int(finite.sum())
    valid = y.size > 0 and n_valid == y.size
    return SplitMetrics(
        nmse=_finite_or_none(nmse(y, yhat)) if valid else None,
        r2=_finite_or_none(r2(y, yhat)) if valid else None,
        acc_tau=acc_tau(y, yhat, tau) if valid else False,
        frac_within_tau=frac_within_tau(y, yhat, tau),
        num_valid_points=n_valid,
        num_points=int(y.size),
    )


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _pair(y: Any, yhat: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(y, dtype=np.float64).reshape(-1)
    b = np.asarray(yhat, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"y has {a.size} points, the prediction {b.size}")
    return a, b


def median_or_none(values: list[float]) -> float | None:
    """Median where None/nan stand for +inf (an invalid equation is the worst fit)."""
    if not values:
        return None
    clean = sorted(
        math.inf if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values
    )
    mid = len(clean) // 2
    med = clean[mid] if len(clean) % 2 else (clean[mid - 1] + clean[mid]) / 2
    return med if math.isfinite(med) else None
