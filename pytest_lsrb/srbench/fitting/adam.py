"""SGA's inner loop: fit an equation's parameters by Adam on the mean squared error.

As SGA's `sr_train.py` (LLM-SRBench's SGA searcher): full-batch Adam (lr 3e-2, betas 0.9/0.999,
eps 1e-8) for 1000 epochs from the parameters' initial values, the gradient clipped to norm 1.0,
the loss logged every 10 epochs (epochs 0, 10, ..., 1000); a NaN loss ends the run. The gradient
is exact (`BoundProgram.mse_and_grad`: one forward and one reverse pass), where SGA uses PyTorch's
autograd. The fitness is the lowest logged loss and the reported parameters are the ones at that
epoch. A wall-clock deadline (the run's and the per-candidate cap) ends the loop early.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from pytest_lsrb.equations import Program

LEARNING_RATE: Final = 3e-2
EPOCHS: Final = 1000
CLIP_NORM: Final = 1.0
LOG_EVERY: Final = 10
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


@dataclass(frozen=True)
class AdamFit:
    params: tuple[float, ...]  # at the best logged epoch
    loss: float  # the lowest logged MSE; inf when none was finite
    losses: tuple[float, ...]  # the logged MSEs (nan kept: SGA shows it)
    epochs: int  # epochs run
    status: str  # ok | nonfinite | time_limit

    @property
    def valid(self) -> bool:
        return math.isfinite(self.loss)


def fit_adam(
    program: Program,
    X: Mapping[str, Any],
    y: np.ndarray,
    init: Sequence[float],
    *,
    epochs: int = EPOCHS,
    lr: float = LEARNING_RATE,
    deadline: float | None = None,
) -> AdamFit:
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    bound = program.bind(X)
    n = program.n_params
    p = np.array(list(init)[:n] + [1.0] * max(0, n - len(init)), dtype=np.float64)
    m = np.zeros(n)
    v = np.zeros(n)
    losses: list[float] = []
    logged: list[np.ndarray] = []
    status = "ok"
    epoch = 0
    for epoch in range(epochs + 1):
        if deadline is not None and time.perf_counter() > deadline:
            status = "time_limit"
            break
        with np.errstate(all="ignore"):
            if n:
                loss, grad = bound.mse_and_grad(p, y)
            else:
                r = np.broadcast_to(bound.evaluate(None), y.shape) - y
                loss, grad = float(r @ r) / len(y), np.zeros(0)
        loss = float(loss)
        if epoch % LOG_EVERY == 0:
            losses.append(loss)
            logged.append(p.copy())
        if math.isnan(loss) or epoch == epochs or n == 0:
            break
        grad = np.asarray(grad, dtype=np.float64)
        if not np.all(np.isfinite(grad)):
            break
        with np.errstate(all="ignore"):
            norm = float(np.linalg.norm(grad))
        if not math.isfinite(norm):
            break  # a gradient too large to measure: the loss is diverging, as a NaN would stop it
        if norm > CLIP_NORM:
            grad = grad * (CLIP_NORM / (norm + 1e-6))
        t = epoch + 1
        m = BETA1 * m + (1 - BETA1) * grad
        v = BETA2 * v + (1 - BETA2) * grad * grad
        p = p - lr * (m / (1 - BETA1**t)) / (np.sqrt(v / (1 - BETA2**t)) + EPS)
    finite = [(loss, i) for i, loss in enumerate(losses) if math.isfinite(loss)]
    if not finite:
        # a cap reached before any finite loss is still the cap (counted as such: `fit_cap_hit`)
        return AdamFit(
            tuple(float(x) for x in p),
            math.inf,
            tuple(losses),
            epoch,
            "nonfinite" if status == "ok" else status,
        )
    best, at = min(finite)
    return AdamFit(tuple(float(x) for x in logged[at]), best, tuple(losses), epoch, status)
