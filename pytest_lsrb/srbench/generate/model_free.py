"""Model-free fits: what a problem's data give away without any model of the science.

A problem a fixed regression solves tests nothing LLM-SRBench means to test. Two fits, each by
least squares on the training split and scored on the test split with the benchmark's NMSE
(mse / var(y), `srbench.scoring.metrics`):

- `linear`: y = c0 + Σ ci·xi;
- `power_law`: log|y| = c0 + Σ ci·log|xi| (y = ±exp(c0)·Π|xi|^ci), when y keeps one sign and no
  input is zero on either split — a monomial such as `F*r**2/(G*m2)` is fitted exactly.

A problem counts as solved when either fit reaches test NMSE ≤ `SOLVED_NMSE` (1e-8). On the
AI-Feynman table's LSR-Transform candidates the NMSEs fall in two groups: pure power laws at
1e-27..1e-30 (float64 round-off), everything else at 2.6e-4 or more, so the threshold sits deep
in the gap and no CPU's last-bit differences can move a problem across it.
"""

from __future__ import annotations

from typing import Final

import numpy as np

SOLVED_NMSE: Final = 1e-8


def _nmse(pred: np.ndarray, y: np.ndarray) -> float:
    var = float(np.var(y))
    if not np.all(np.isfinite(pred)) or var == 0.0:
        return float("inf")
    return float(np.mean((pred - y) ** 2) / var)


def _design(X: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(X.shape[0]), X])


def linear_nmse(train: np.ndarray, test: np.ndarray) -> float:
    """Test NMSE of y = c0 + Σ ci·xi fitted on train (column 0 the output)."""
    coef, *_ = np.linalg.lstsq(_design(train[:, 1:]), train[:, 0], rcond=None)
    return _nmse(_design(test[:, 1:]) @ coef, test[:, 0])


def power_law_nmse(train: np.ndarray, test: np.ndarray) -> float | None:
    """Test NMSE of y = ±exp(c0)·Π|xi|^ci fitted in log space on train, None when not applicable."""
    y = train[:, 0]
    sign = float(np.sign(y[0]))
    both = np.concatenate([train, test])
    if sign == 0.0 or not np.all(np.sign(both[:, 0]) == sign) or np.any(both[:, 1:] == 0.0):
        return None
    with np.errstate(all="ignore"):
        coef, *_ = np.linalg.lstsq(_design(np.log(np.abs(train[:, 1:]))), np.log(np.abs(y)), rcond=None)
        pred = sign * np.exp(_design(np.log(np.abs(test[:, 1:]))) @ coef)
    return _nmse(pred, test[:, 0])


def model_free_nmse(train: np.ndarray, test: np.ndarray) -> dict[str, float]:
    """{fit name: test NMSE} for the fits that apply."""
    out = {"linear": linear_nmse(train, test)}
    power = power_law_nmse(train, test)
    if power is not None:
        out["power_law"] = power
    return out


def solved_without_model(train: np.ndarray, test: np.ndarray) -> str | None:
    """The name of a model-free fit that solves the problem (test NMSE ≤ SOLVED_NMSE), or None."""
    for name, value in model_free_nmse(train, test).items():
        if value <= SOLVED_NMSE:
            return name
    return None
