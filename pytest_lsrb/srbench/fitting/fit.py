"""Fit a skeleton's parameters on the training data, as the reference does by default.

The reference (LLM-SRBench's `LLMSRSearcher`, LLM-SR's specification programs) scores a skeleton
by `scipy.optimize.minimize(loss, [1.0]*MAX_NPARAMS, method="BFGS")` with `MAX_NPARAMS = 10`,
`loss(params) = np.mean((equation(*inputs, params) - outputs) ** 2)` and no gradient (so scipy's
forward differences), default options; the score is `-result.fun`, and a nan/inf `result.fun`
makes the candidate invalid (`evaluate` returns None). The default policy, `reference`, makes
that same call on our compiled program (no exec; tests/srbench/test_srbench_fit_reference.py
compares it with the call written as the reference writes it). The reference kills a
candidate's process at 30 s and scores it invalid; here the wall-clock cap is checked inside the
loss and a fit that reaches it is invalid the same way (`capped_invalid`). The evaluation cap
(ours: a bound on any input) ends the fit at its best point so far, with the cap as its status.

`--lsrb-sr-fit fast` is the opt-in fast fit: the same BFGS from all-ones on the raw MSE, with

- the exact gradient (`BoundProgram.value_and_jacobian`, one reverse pass) where the reference
  spends 11 loss evaluations per gradient on forward differences;
- a skeleton linear in its parameters (prediction = c + J p) solved in closed form: on that
  quadratic, BFGS from all-ones (inverse-Hessian estimate starting at the identity) only ever
  moves within ones + the row space of J, where the minimiser is ones plus the minimum-norm
  least-squares correction `lstsq(J, y - c - J·1)`; its loss is the quadratic's minimum, so never
  above the reference's, and an unused or redundant parameter keeps the value BFGS would leave
  it at;
- a near-exact fit (training NMSE <= 1e-6 where scipy's test would stop) polished on to a
  gradient of 1e-8.

On smooth skeletons it reaches the reference's optimum; on nonconvex ones (phase-shifted sines,
rational terms, logs) the exact and the numerical gradient can send BFGS into different basins,
and a skeleton the reference scores nan (an iterate where the loss is nan) may stay valid:
bench/bench_fit.py measures both the speed and how often the optima agree.
`--lsrb-sr-fit enhanced` selects `srbench.fitting.fit_enhanced` (see there and README).
A candidate that is not finite on the data is invalid, never silently trimmed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
from scipy.optimize import minimize

from pytest_lsrb.equations import BoundProgram, Program
from pytest_lsrb.srbench.fitting.fit_enhanced import fit_enhanced
from pytest_lsrb.srbench.fitting.objective import (
    FIT_TIME_LIMIT_S,
    REFERENCE_GTOL,
    REFERENCE_MAX_ITER,
    REFERENCE_NPARAMS,
    FitLimits,
    FitPolicy,
    FitResult,
    FitStatus,
    Objective,
    Stop,
    fit_cap_hit,
    linear_design,
    make_result,
    never_finite,
    run_bfgs,
    tune_allocator,
)

NEAR_EXACT_NMSE: Final = 1e-6  # below this training NMSE, polish on to POLISH_GTOL
POLISH_GTOL: Final = 1e-8

__all__ = [
    "FIT_TIME_LIMIT_S",
    "FitLimits",
    "FitPolicy",
    "FitResult",
    "FitStatus",
    "fit_cap_hit",
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
        result = fit_enhanced(program, X, y, bound, seed=seed, limits=limits, stop_at=stop_at, start=start)
    elif limits.policy == "fast":
        result = _fit_fast(bound, y, n, seed, limits, stop_at, start)
    else:
        result = _fit_reference(bound, y, n, limits, stop_at, start)
    return capped_invalid(result, limits.time_limit_s)


def capped_invalid(result: FitResult, cap_s: float) -> FitResult:
    """A fit that reached its own cap is an invalid candidate, as the reference scores it: LLM-SR's
    evaluator runs each program under `evaluate_timeout_seconds` and registers no score for one that
    times out. A fit ended sooner by the run's deadline (`--lsrb-sr-time-limit`, ours) keeps its
    best point: that cap is the run's, not the candidate's."""
    if not fit_cap_hit(result.status, result.seconds, cap_s):
        return result
    return FitResult(
        params=result.params,
        mse=math.inf,
        nmse=math.inf,
        status="time_limit",
        method=result.method,
        evaluations=result.evaluations,
        starts=result.starts,
        seconds=result.seconds,
        message=f"the fit reached its {cap_s:g} s cap (the reference scores such a candidate invalid)",
    )


def _fit_reference(
    bound: BoundProgram, y: np.ndarray, n: int, limits: FitLimits, stop_at: float, start: float
) -> FitResult:
    """The reference's call: `minimize(loss, [1.0]*10, method="BFGS")`, numerical gradient, the
    MSE as `np.mean((y_pred - outputs) ** 2)`; a nan/inf final loss is an invalid candidate."""
    evals = 0
    best: tuple[float, np.ndarray] | None = None

    def loss(params: np.ndarray) -> float:
        nonlocal evals, best
        if evals >= limits.max_evals:
            raise Stop("eval_limit")
        if time.perf_counter() > stop_at:
            raise Stop("time_limit")
        evals += 1
        value = float(np.mean((bound.evaluate(params[:n]) - y) ** 2))
        if math.isfinite(value) and (best is None or value < best[0]):
            best = (value, np.array(params, dtype=np.float64))
        return value

    status: FitStatus = "ok"
    with np.errstate(all="ignore"):
        try:
            found = minimize(loss, [1.0] * max(n, REFERENCE_NPARAMS), method="BFGS")
            value, x = float(found.fun), np.asarray(found.x, dtype=np.float64)
        except Stop as stop:  # a cap: the best point so far (`capped_invalid` decides what it is worth)
            status = stop.status
            value, x = best if best is not None else (math.inf, np.ones(max(n, REFERENCE_NPARAMS)))
    params = tuple(float(v) for v in x[:n])
    seconds = time.perf_counter() - start
    if not math.isfinite(value):
        return FitResult(
            params=params,
            mse=math.inf,
            nmse=math.inf,
            status="nonfinite" if status == "ok" else status,
            method="bfgs",
            evaluations=evals,
            starts=1,
            seconds=seconds,
            message="the reference's BFGS ends at a nan/inf loss (the reference scores it invalid)",
        )
    var_y = float(np.var(y)) if y.size else 0.0
    nmse = value / var_y if var_y > 0 else (0.0 if value == 0 else math.inf)
    return FitResult(params, value, nmse, status, "bfgs", evals, 1, seconds)


def _fit_fast(
    bound: BoundProgram, y: np.ndarray, n: int, seed: int, limits: FitLimits, stop_at: float, start: float
) -> FitResult:
    """BFGS from all-ones on the raw MSE with exact gradients (closed form when linear)."""
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
