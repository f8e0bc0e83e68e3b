"""What every parameter fit shares: its settings, its result, and the MSE objective BFGS minimises.

`srbench.fitting.fit` holds the two fitting procedures (the reference's, the default, and the enhanced
one); this module is their common ground: `FitLimits`, `FitResult`, the capped objective (mean
squared error with its exact gradient, remembering the best finite point) and one BFGS run.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
from scipy.optimize import minimize

from pytest_lsrb.core.metrics import finite_float

# The reference's cap on one candidate's fit: LLM-SR's evaluator gives each program's fit 30 s
# (`evaluate_timeout_seconds`) and scores it invalid past that. Here the fit ends with status
# `time_limit`, is invalid the same way (`fit.capped_invalid`), and the run counts it
# (`fit_time_limit_hits`), so a loaded machine that changes scores says so.
FIT_TIME_LIMIT_S: Final = 30.0


def fit_cap_hit(status: str, seconds: float, cap_s: float) -> bool:
    """Whether a fit ended at its own time cap `cap_s` (a run's deadline ends it with the same
    status, sooner: that is the run's cap, not the fit's)."""
    return status == "time_limit" and seconds >= cap_s


FitStatus = Literal["ok", "nonfinite", "time_limit", "eval_limit"]
FitMethod = Literal["bfgs", "lstsq", "none"]
FitPolicy = Literal["reference", "fast", "enhanced"]
# The reference optimises a vector of MAX_NPARAMS = 10 parameters, so scipy's default iteration
# cap is 200 * 10 whatever the skeleton uses (unused parameters have a zero gradient and never move).
REFERENCE_NPARAMS: Final = 10
REFERENCE_MAX_ITER: Final = 200 * REFERENCE_NPARAMS
REFERENCE_GTOL: Final = 1e-5  # scipy's BFGS default, on the gradient of the raw MSE


@dataclass(frozen=True)
class FitLimits:
    """How one candidate is fitted: the procedure (`policy`) and its caps.

    `reference` (default): the reference's own call, `scipy.optimize.minimize(loss, [1.0]*10,
    method="BFGS")` with scipy's numerical gradient; a nan/inf final loss makes the candidate
    invalid. `fast`: the same BFGS from all-ones with exact gradients and a closed form for
    skeletons linear in their parameters (same optimum on smooth skeletons; on nonconvex ones it
    may end in another basin: bench/bench_fit.py). `enhanced`: see `srbench.fitting.fit_enhanced` (least
    squares, normalised loss, stall stop, seeded restarts).
    """

    policy: FitPolicy = "reference"
    time_limit_s: float = FIT_TIME_LIMIT_S  # wall clock per candidate
    max_evals: int = 20_000  # objective evaluations per candidate, over all starts
    restarts: int = 2  # enhanced only: extra seeded starts after the all-ones one


@dataclass(frozen=True)
class FitResult:
    params: tuple[float, ...]
    mse: float  # mean squared error on the fitted rows; inf when invalid
    nmse: float  # mse / var(y); inf when invalid
    status: FitStatus
    method: FitMethod
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
            "train_mse": finite_float(self.mse),
            "train_nmse": finite_float(self.nmse),
            "fit_status": self.status,
            "fit_method": self.method,
            "fit_evaluations": self.evaluations,
        }

    def with_status(self, status: FitStatus) -> FitResult:
        return FitResult(**{**self.__dict__, "status": status})


class Stop(Exception):
    """Raised inside the objective to end a minimisation at a cap (the best point is kept)."""

    def __init__(self, status: FitStatus) -> None:
        super().__init__(status)
        self.status = status


# value_and_jacobian(p) -> (prediction, d prediction / d p)
ValueAndJacobian = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class Objective:
    """`mean((f(p) - y)**2) / scale` and its exact gradient; remembers the best finite point and
    enforces the caps (evaluations, deadline)."""

    def __init__(
        self,
        n_params: int,
        deadline: float,
        max_evals: int,
        *,
        value_and_jacobian: ValueAndJacobian,
        y: np.ndarray,
        scale: float = 1.0,
    ) -> None:
        self.n_params = n_params
        self.deadline = deadline
        self.max_evals = max_evals
        self.value_and_jacobian = value_and_jacobian
        self.y = y
        self.scale = scale
        self.evals = 0  # objective evaluations so far
        self.best_loss = math.inf
        self.best_x: np.ndarray | None = None
        self.last_x: np.ndarray | None = None  # the last point evaluated, and its gradient
        self.last_grad: np.ndarray | None = None
        self._zero = np.zeros(n_params)

    def __call__(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        if self.evals >= self.max_evals:
            raise Stop("eval_limit")
        if time.perf_counter() > self.deadline:
            raise Stop("time_limit")
        self.evals += 1
        loss, grad = self._evaluate(p)
        if not math.isfinite(loss):
            self.last_x, self.last_grad = p, self._zero
            return math.inf, self._zero
        if not np.all(np.isfinite(grad)):
            grad = np.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)
        self.last_x, self.last_grad = p, grad
        if loss < self.best_loss:
            self.best_loss, self.best_x = loss, np.array(p, dtype=np.float64)
        return loss, grad

    def gradient_at(self, x: np.ndarray) -> np.ndarray:
        """The gradient at `x`: remembered from the last evaluation when that was at `x` (BFGS's
        accepted point is the line search's last evaluation), else evaluated afresh."""
        if self.last_x is not None and self.last_grad is not None and np.array_equal(self.last_x, x):
            return self.last_grad
        return self(np.array(x, dtype=np.float64))[1]

    def _evaluate(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        yhat, jac = self.value_and_jacobian(p)
        r = yhat - self.y
        n = r.shape[0] * self.scale
        return float(r @ r) / n, (2.0 / n) * (jac.T @ r)


def run_bfgs(
    objective: Objective,
    x0: np.ndarray,
    *,
    max_iter: int,
    gtol: float,
    callback: Callable[[np.ndarray], None] | None = None,
) -> FitStatus:
    """One scipy BFGS run from x0 with the objective's exact gradient; the status of its end."""
    try:
        with np.errstate(all="ignore"):
            minimize(
                objective,
                x0,
                jac=True,
                method="BFGS",
                callback=callback,
                options={"maxiter": max_iter, "gtol": gtol},
            )
    except Stop as stop:
        return stop.status
    return "ok"


def make_result(
    yhat: np.ndarray,
    y: np.ndarray,
    params: tuple[float, ...],
    method: FitMethod,
    evals: int,
    starts: int,
    start: float,
) -> FitResult:
    """The result of fitted parameters: their MSE (and NMSE) recomputed on every row."""
    r = yhat - y
    mse = float(r @ r) / r.shape[0] if r.shape[0] else math.inf
    seconds = time.perf_counter() - start
    if not math.isfinite(mse):
        return FitResult(
            params=params,
            mse=math.inf,
            nmse=math.inf,
            status="nonfinite",
            method=method,
            evaluations=evals,
            starts=starts,
            seconds=seconds,
            message="the fitted equation is not finite on every row",
        )
    var_y = float(np.var(y)) if y.size else 0.0
    nmse = mse / var_y if var_y > 0 else (0.0 if mse == 0 else math.inf)
    return FitResult(params, mse, nmse, "ok", method, evals, starts, seconds)


def never_finite(
    n: int, status: FitStatus, method: FitMethod, evals: int, starts: int, start: float
) -> FitResult:
    return FitResult(
        params=tuple(1.0 for _ in range(n)),
        mse=math.inf,
        nmse=math.inf,
        status="nonfinite" if status == "ok" else status,
        method=method,
        evaluations=evals,
        starts=starts,
        seconds=time.perf_counter() - start,
        message="the equation is not finite on the data for any parameters tried",
    )


def linear_design(
    value_and_jacobian: ValueAndJacobian, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(J, c) with prediction = c + J p for every p, when the program is linear in its parameters
    (its Jacobian does not depend on them: checked at two seeded points), else None."""
    rng = np.random.default_rng([abs(int(seed)), n, 0x11AE])
    pa = rng.uniform(0.5, 2.0, size=n)
    pb = -rng.uniform(0.5, 2.0, size=n)
    with np.errstate(all="ignore"):
        ya, ja = value_and_jacobian(pa)
        yb, jb = value_and_jacobian(pb)
        if not (np.all(np.isfinite(ja)) and np.all(np.isfinite(ya)) and np.all(np.isfinite(yb))):
            return None
        if not np.allclose(ja, jb, rtol=1e-9, atol=1e-12):
            return None
        c = ya - ja @ pa
        if not np.allclose(c + ja @ pb, yb, rtol=1e-9, atol=1e-9 * (1.0 + float(np.max(np.abs(yb))))):
            return None
    return np.array(ja, dtype=np.float64), np.asarray(c, dtype=np.float64)


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
