"""Fit a skeleton's parameters on data: BFGS on the mean squared error with exact gradients.

This is LLM-SR's inner loop (`scipy.optimize.minimize(loss, [1.0]*10, method="BFGS")`) made
fast and bounded, without a process per candidate:

- the gradient is exact: `Program.bind(X).value_and_jacobian` gives d y / d params in one
  reverse pass, so each BFGS step costs one evaluation instead of n_params + 1 (numerical
  differences);
- the parameter-independent part of the program is computed once per candidate (`bind`);
- a skeleton that is linear in its parameters (a sum of params[i] * term) is solved exactly by
  least squares: the optimum BFGS converges to, in one step;
- the first start is the reference's all-ones vector; a few extra starts, drawn from the attempt
  seed, are screened on a small row subset and only the most promising one is polished on all
  rows (nonlinear skeletons such as `params[0]*sin(params[1]*x)` have local minima);
- caps: iterations per start, objective evaluations and wall-clock time per candidate (checked
  inside the objective, so a slow candidate stops within one evaluation), and the caller's run
  deadline. A candidate that is not finite on the data is invalid, never silently trimmed.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
from scipy.optimize import minimize

from pytest_lsrb.equations import BoundProgram, Program

FitStatus = Literal["ok", "nonfinite", "time_limit", "eval_limit"]

# Extra starting points are screened by a short BFGS on a row subset (the final fit always uses
# every row); a first start already this good (NMSE) skips them: no ranking would change.
SCREEN_ROWS: Final = 256
SCREEN_ITERATIONS: Final = 10
GOOD_ENOUGH_NMSE: Final = 1e-6
STALL_ITERATIONS: Final = 5
# |p| of the extra starts is log-uniform in [1/START_SCALE, START_SCALE], with a random sign.
START_SCALE: Final = 10.0


@dataclass(frozen=True)
class FitLimits:
    """Per-candidate caps. Defaults keep one candidate on 10,000 rows well under a second."""

    max_iter: int = 400  # BFGS iterations per start (scipy's default is 200 * n_params)
    max_evals: int = 2000  # objective evaluations per candidate, over all starts
    time_limit_s: float = 5.0  # wall clock per candidate
    restarts: int = 2  # extra seeded starts after the all-ones one (nonlinear skeletons only)
    # The loss is the NMSE (mse / var(y)), so both tolerances are scale-free.
    gtol: float = 1e-5  # BFGS gradient tolerance
    ftol: float = 1e-4  # stop when the loss improved by less than this fraction over STALL_ITERATIONS steps


@dataclass(frozen=True)
class FitResult:
    params: tuple[float, ...]
    mse: float  # mean squared error on the fitted rows; inf when invalid
    nmse: float  # mse / var(y); inf when invalid
    status: FitStatus
    method: Literal["bfgs", "lstsq", "none"]
    evaluations: int = 0
    starts: int = 0
    seconds: float = 0.0
    message: str = ""

    @property
    def valid(self) -> bool:
        return math.isfinite(self.mse)

    @property
    def score(self) -> float:
        """LLM-SR's score: the negative training MSE (higher is better; -inf when invalid)."""
        return -self.mse if self.valid else -math.inf

    def as_record(self) -> dict[str, Any]:
        return {
            "params": [float(p) for p in self.params],
            "train_mse": _json_float(self.mse),
            "train_nmse": _json_float(self.nmse),
            "fit_status": self.status,
            "fit_method": self.method,
            "fit_evaluations": self.evaluations,
        }


class _Stop(Exception):
    """Raised inside the objective to end a minimisation at a cap (the best point is kept)."""

    def __init__(self, status: FitStatus) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class _Objective:
    """MSE and its exact gradient; remembers the best finite point and enforces the caps."""

    bound: BoundProgram
    y: np.ndarray
    deadline: float
    max_evals: int
    scale: float = 1.0  # the loss is mse / scale (var(y)), so tolerances are scale-free
    evals: int = 0
    best_loss: float = math.inf
    best_x: np.ndarray | None = None
    _zero: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self._zero = np.zeros(self.bound.n_params)

    def __call__(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        if self.evals >= self.max_evals:
            raise _Stop("eval_limit")
        if time.perf_counter() > self.deadline:
            raise _Stop("time_limit")
        self.evals += 1
        yhat, jac = self.bound.value_and_jacobian(p)
        r = yhat - self.y
        loss = float(r @ r) / (r.shape[0] * self.scale)
        if not math.isfinite(loss):
            return math.inf, self._zero
        grad = (2.0 / (r.shape[0] * self.scale)) * (jac.T @ r)
        if not np.all(np.isfinite(grad)):
            grad = np.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)
        if loss < self.best_loss:
            self.best_loss, self.best_x = loss, np.array(p, dtype=np.float64)
        return loss, grad


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
    `nonfinite` and mse = inf.
    """
    tune_allocator()
    limits = limits or FitLimits()
    start = time.perf_counter()
    stop_at = start + limits.time_limit_s
    if deadline is not None:
        stop_at = min(stop_at, deadline)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    bound = bound if bound is not None else program.bind(X)
    var_y = float(np.var(y)) if y.size else 0.0
    n = program.n_params

    if n == 0:
        return _result(bound.evaluate(None), y, (), var_y, "none", 1, 0, start)

    linear = _linear_in_params(bound, y, seed)
    if linear is not None:
        params = linear
        return _result(bound.evaluate(params), y, tuple(params), var_y, "lstsq", 3, 1, start)

    scale = var_y if var_y > 0 else 1.0
    obj = _Objective(bound, y, stop_at, limits.max_evals, scale)
    starts = 1
    status = _run_bfgs(obj, np.ones(n), limits)
    if status == "ok" and limits.restarts > 0 and not _good_enough(obj.best_loss):
        candidate = _screen_starts(program, X, y, n, seed, limits, stop_at, obj.best_x, scale)
        if candidate is not None:
            starts += 1
            status = _run_bfgs(obj, candidate, limits)
    if obj.best_x is None:
        return FitResult(
            params=tuple(1.0 for _ in range(n)),
            mse=math.inf,
            nmse=math.inf,
            status="nonfinite" if status == "ok" else status,
            method="bfgs",
            evaluations=obj.evals,
            starts=starts,
            seconds=time.perf_counter() - start,
            message="the equation is not finite on the data for any parameters tried",
        )
    result = _result(
        bound.evaluate(obj.best_x),
        y,
        tuple(float(v) for v in obj.best_x),
        var_y,
        "bfgs",
        obj.evals + 1,
        starts,
        start,
    )
    if result.valid and status != "ok":
        return FitResult(**{**result.__dict__, "status": status})
    return result


def _run_bfgs(obj: _Objective, x0: np.ndarray, limits: FitLimits, max_iter: int | None = None) -> FitStatus:
    """One BFGS run from x0. Besides scipy's gradient test it stops when the best loss improved
    by less than the fraction `limits.ftol` over the last `STALL_ITERATIONS` iterations: the
    search ranks candidates by this loss, and digits below that never change a ranking."""
    history: list[float] = []

    def stalled(_xk: np.ndarray) -> None:
        history.append(obj.best_loss)
        if (
            len(history) > STALL_ITERATIONS
            and history[-STALL_ITERATIONS - 1] - history[-1] <= limits.ftol * history[-1]
        ):
            raise _Stop("ok")

    try:
        with np.errstate(all="ignore"):
            minimize(
                obj,
                x0,
                jac=True,
                method="BFGS",
                callback=stalled,
                options={"maxiter": max_iter or limits.max_iter, "gtol": limits.gtol},
            )
    except _Stop as stop:
        return stop.status
    return "ok"


def _screen_starts(
    program: Program,
    X: Mapping[str, Any] | np.ndarray,
    y: np.ndarray,
    n: int,
    seed: int,
    limits: FitLimits,
    stop_at: float,
    incumbent: np.ndarray | None,
    scale: float,
) -> np.ndarray | None:
    """The best of `limits.restarts` seeded starts after a short BFGS on a row subset, if it
    beats the incumbent there; None otherwise."""
    rng = np.random.default_rng([abs(int(seed)), n, 0x5EED])
    rows = y.shape[0]
    take = np.sort(rng.choice(rows, size=SCREEN_ROWS, replace=False)) if rows > SCREEN_ROWS else None
    if take is None:
        Xs, ys = X, y
    elif isinstance(X, np.ndarray):
        Xs, ys = X[take], y[take]
    else:
        Xs = {k: np.asarray(v).reshape(-1)[take] for k, v in X.items()}
        ys = y[take]
    small = program.bind(Xs)
    screen = _Objective(small, ys, stop_at, limits.max_evals, scale)
    best: tuple[float, np.ndarray] | None = None
    if incumbent is not None:
        loss, _ = screen(incumbent)
        if math.isfinite(loss):
            best = (loss, incumbent)
    found = False
    for _ in range(limits.restarts):
        x0 = rng.choice([-1.0, 1.0], size=n) * START_SCALE ** rng.uniform(-1.0, 1.0, size=n)
        screen.best_loss, screen.best_x = math.inf, None
        if _run_bfgs(screen, x0, limits, max_iter=SCREEN_ITERATIONS) != "ok" and screen.best_x is None:
            break
        if screen.best_x is not None and (best is None or screen.best_loss < 0.5 * best[0]):
            best, found = (screen.best_loss, screen.best_x), True
    return best[1] if found and best is not None else None


def _linear_in_params(bound: BoundProgram, y: np.ndarray, seed: int) -> np.ndarray | None:
    """The least-squares parameters when y = c + J p exactly (J independent of p), else None."""
    n = bound.n_params
    rng = np.random.default_rng([abs(int(seed)), n, 0x11AE])
    pa = rng.uniform(0.5, 2.0, size=n)
    pb = -rng.uniform(0.5, 2.0, size=n)
    with np.errstate(all="ignore"):
        ya, ja = bound.value_and_jacobian(pa)
        yb, jb = bound.value_and_jacobian(pb)
        if not (np.all(np.isfinite(ja)) and np.all(np.isfinite(ya)) and np.all(np.isfinite(yb))):
            return None
        if not np.allclose(ja, jb, rtol=1e-9, atol=1e-12):
            return None
        c = ya - ja @ pa
        if not np.allclose(c + ja @ pb, yb, rtol=1e-9, atol=1e-9 * (1.0 + float(np.max(np.abs(yb))))):
            return None
        solution, *_ = np.linalg.lstsq(ja, y - c, rcond=None)
    return np.asarray(solution, dtype=np.float64)


def _good_enough(nmse: float) -> bool:
    return math.isfinite(nmse) and nmse <= GOOD_ENOUGH_NMSE


def _result(
    yhat: np.ndarray,
    y: np.ndarray,
    params: tuple[float, ...],
    var_y: float,
    method: Literal["bfgs", "lstsq", "none"],
    evals: int,
    starts: int,
    start: float,
) -> FitResult:
    r = yhat - y
    mse = float(r @ r) / r.shape[0] if r.shape[0] else math.inf
    if not math.isfinite(mse):
        return FitResult(
            params=params,
            mse=math.inf,
            nmse=math.inf,
            status="nonfinite",
            method=method,
            evaluations=evals,
            starts=starts,
            seconds=time.perf_counter() - start,
            message="the fitted equation is not finite on every row",
        )
    nmse = mse / var_y if var_y > 0 else (0.0 if mse == 0 else math.inf)
    return FitResult(
        params=params,
        mse=mse,
        nmse=nmse,
        status="ok",
        method=method,
        evaluations=evals,
        starts=starts,
        seconds=time.perf_counter() - start,
    )


def _json_float(value: float) -> float | None:
    return value if math.isfinite(value) else None


_TUNED = False
_TUNE_LOCK = threading.Lock()


def tune_allocator() -> None:
    """Keep freed heap memory instead of returning it to the OS after every evaluation.

    Each objective evaluation allocates a few MB of numpy temporaries and frees them; glibc then
    trims the heap and the next evaluation page-faults it back in, which made a fit 4-6x slower
    on 10,000 rows (measured in bench/bench_fit.py). Raising M_TRIM_THRESHOLD to 128 MB stops
    that. Process-wide and idempotent; glibc only; LSRB_MALLOC_TUNING=0 turns it off.
    """
    global _TUNED
    if _TUNED:
        return
    with _TUNE_LOCK:
        if _TUNED:
            return
        _TUNED = True
        if os.environ.get("LSRB_MALLOC_TUNING", "1") == "0":
            return
        try:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            if not name:
                return
            libc = ctypes.CDLL(name)
            mallopt = getattr(libc, "mallopt", None)
            if mallopt is not None:
                mallopt(-1, 128 * 1024 * 1024)  # M_TRIM_THRESHOLD
        except (OSError, AttributeError, ValueError):
            return
