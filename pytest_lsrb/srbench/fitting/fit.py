"""Fit a skeleton's parameters on the training data, as the reference does by default.

The reference (LLM-SRBench's `LLMSRSearcher`, LLM-SR's specification programs) scores a skeleton
by `scipy.optimize.minimize(mse, [1.0]*10, method="BFGS")` with numerical gradients: BFGS from
all-ones on the raw training MSE, scipy's stop (gradient inf-norm <= 1e-5, 200 * 10 iterations),
the score being -MSE at the end. The default policy (`reference`) runs that same procedure and
reaches the same optimum (tests/srbench/test_srbench_fit_reference.py compares it with scipy's
numeric-gradient BFGS on built-in and real LLM-SR skeletons), only faster:

- the gradient is exact (`BoundProgram.value_and_jacobian`, one reverse pass) where the reference
  spends 11 loss evaluations per gradient on forward differences;
- the parameter-independent part of the program is computed once per candidate (`bind`);
- a skeleton linear in its parameters (prediction = c + J p) gets the point BFGS converges to in
  closed form: on that quadratic, BFGS from all-ones (inverse-Hessian estimate starting at the
  identity) only ever moves within ones + the row space of J, where the minimiser is ones plus
  the minimum-norm least-squares correction `lstsq(J, y - c - J·1)`; its loss is the quadratic's
  minimum, so never above the reference's (scipy stops once the gradient is ≤ 1e-5), and an
  unused or redundant parameter keeps the value BFGS would leave it at;
- a near-exact fit (training NMSE <= 1e-6 where scipy's test would stop) is polished on to a
  gradient of 1e-8: relative comparisons of losses at the noise floor (1e-12) are otherwise
  decided by where each gradient happened to cross 1e-5; this only ever lowers such losses;
- no process per candidate: caps on objective evaluations and wall-clock time are checked inside
  the objective (a capped fit keeps its best point; the reference kills the process at 30 s and
  scores the candidate invalid).

`--lsrb-sr-fit enhanced` selects `srbench.fitting.fit_enhanced` instead (see there and README).
A candidate that is not finite on the data is invalid, never silently trimmed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from pytest_lsrb.equations import BoundProgram, Program
from pytest_lsrb.srbench.fitting.fit_enhanced import fit_enhanced
from pytest_lsrb.srbench.fitting.objective import (
    FIT_POLICIES,
    REFERENCE_GTOL,
    REFERENCE_MAX_ITER,
    FitLimits,
    FitPolicy,
    FitResult,
    FitStatus,
    Objective,
    Stop,
    linear_design,
    make_result,
    never_finite,
    run_bfgs,
    tune_allocator,
)

NEAR_EXACT_NMSE: Final = 1e-6  # below this training NMSE, polish on to POLISH_GTOL
POLISH_GTOL: Final = 1e-8

__all__ = [
    "FIT_POLICIES",
    "FitLimits",
    "FitPolicy",
    "FitResult",
    "FitStatus",
    "fit_program",
    "tune_allocator",
]


def fit_program(
    program: Program,
    X: Mapping[str, Any] | np.ndarray,
    y: np.ndarray,
    *,
    seed: int = 0,
    limits: FitLimits | None = None,
    deadline: float | None = None,
    bound: BoundProgram | None = None,
) -> FitResult:
    """Fit `program`'s parameters to minimise mean((program(X, p) - y)**2).

    `deadline` is an absolute `time.perf_counter()` value (a run's wall-clock cap); the
    candidate stops at whichever of it and `limits.time_limit_s` comes first. Never raises for
    a bad candidate: an equation that is not finite on the data comes back with status
    `nonfinite` and mse = inf. `seed` only matters to the enhanced policy's restarts (and picks
    the two points at which linearity in the parameters is checked).
    """
    tune_allocator()
    limits = limits or FitLimits()
    start = time.perf_counter()
    stop_at = start + limits.time_limit_s
    if deadline is not None:
        stop_at = min(stop_at, deadline)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    bound = bound if bound is not None else program.bind(X)
    n = program.n_params
    if n == 0:
        return make_result(bound.evaluate(None), y, (), "none", 1, 0, start)
    if limits.policy == "enhanced":
        return fit_enhanced(program, X, y, bound, seed=seed, limits=limits, stop_at=stop_at, start=start)
    return _fit_reference(bound, y, n, seed, limits, stop_at, start)


def _fit_reference(
    bound: BoundProgram, y: np.ndarray, n: int, seed: int, limits: FitLimits, stop_at: float, start: float
) -> FitResult:
    """BFGS from all-ones on the raw MSE with scipy's default stop: the reference's procedure."""
    design = linear_design(bound.value_and_jacobian, n, seed)
    if design is not None:
        optimum = _linear_optimum(*design, y)
        values = tuple(float(v) for v in optimum)
        return make_result(bound.evaluate(optimum), y, values, "lstsq", 3, 1, start)
    obj = Objective(n, stop_at, limits.max_evals, value_and_jacobian=bound.value_and_jacobian, y=y)
    var_y = float(np.var(y))
    polish_below = NEAR_EXACT_NMSE * var_y

    def reference_stop(xk: np.ndarray) -> None:
        # scipy calls back before its own gradient test on the same point: stopping here ends
        # at the iterate where the reference's `gnorm <= 1e-5` would.
        if obj.best_loss > polish_below and float(np.max(np.abs(obj.gradient_at(xk)))) <= REFERENCE_GTOL:
            raise Stop("ok")

    status = run_bfgs(obj, np.ones(n), max_iter=REFERENCE_MAX_ITER, gtol=POLISH_GTOL, callback=reference_stop)
    if obj.best_x is None:
        return never_finite(n, status, "bfgs", obj.evals, 1, start)
    params = tuple(float(v) for v in obj.best_x)
    result = make_result(bound.evaluate(obj.best_x), y, params, "bfgs", obj.evals + 1, 1, start)
    return result.with_status(status) if result.valid and status != "ok" else result


def _linear_optimum(J: np.ndarray, c: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Where BFGS from all-ones ends on mean((c + J p - y)**2), exactly: ones plus the
    minimum-norm least-squares correction (see the module docstring)."""
    ones = np.ones(J.shape[1])
    with np.errstate(all="ignore"):
        delta, *_ = np.linalg.lstsq(J, y - c - J @ ones, rcond=None)
    return ones + np.asarray(delta, dtype=np.float64)
