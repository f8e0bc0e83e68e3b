"""Whether an LSR-Synth ODE candidate can be solved, and solved well enough to make data of.

`integrate` runs `scipy.integrate.solve_ivp` (the settings in `manifest.INTEGRATOR`) and rejects
the candidate, naming why, when:
- `rate_not_finite`: the rate is NaN or infinite somewhere the integrator evaluates it;
- `state_unbounded`: the state leaves its bound (a blow-up in finite time is stopped there);
- `integration_budget`: more than `MAX_RHS_EVALS` rate evaluations (a rate so fast or stiff the
  integrator crawls);
- `integration_failed` / `state_not_finite`: the integrator gives up or returns non-finite states;
- `state_not_positive`: a concentration or population reaches zero or below;
- `stiff`: the largest |eigenvalue| of the rate's Jacobian in the state along the trajectory,
  times the in-domain window's length, exceeds `STIFFNESS_LIMIT` — the state relaxes so fast that
  the samples show only its slow manifold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from scipy.integrate import solve_ivp

from pytest_lsrb.equations import Program
from pytest_lsrb.srbench.generate.manifest import INTEGRATOR

MAX_RHS_EVALS: Final = 50_000
STIFFNESS_LIMIT: Final = 1e3


class _Rejected(Exception):
    """The integration is abandoned: `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def integrate(
    program: Program,
    inputs: Sequence[str],
    state_names: Sequence[str],
    y0: Sequence[float],
    t_eval: np.ndarray,
    *,
    state_bound: float,
    positive_state: bool,
    window_length: float,
) -> np.ndarray | str:
    """The states (one row per state variable) at `t_eval` from `y0` at `t_eval[0]`, or why the
    candidate is rejected. One state: y' = program(t, y); two (x, v): x' = v, v' = program(t, x, v)."""
    evals = 0

    def rate(t: float, state: np.ndarray) -> float:
        nonlocal evals
        evals += 1
        if evals > MAX_RHS_EVALS:
            raise _Rejected("integration_budget")
        cols = {"t": np.array([t]), **{n: np.array([state[i]]) for i, n in enumerate(state_names)}}
        value = float(program.evaluate({k: cols[k] for k in inputs})[0])
        if not np.isfinite(value):
            raise _Rejected("rate_not_finite")
        return value

    def rhs(t: float, state: np.ndarray) -> list[float]:
        if not np.all(np.abs(state) <= state_bound):  # a blow-up: stop at the bound
            raise _Rejected("state_unbounded")
        if len(state_names) == 1:
            return [rate(t, state)]
        return [state[1], rate(t, state)]  # x' = v, v' = f(t, x, v)

    try:
        with np.errstate(all="ignore"):
            sol = solve_ivp(
                rhs,
                (float(t_eval[0]), float(t_eval[-1])),
                list(y0),
                t_eval=t_eval,
                method=INTEGRATOR["method"],
                rtol=INTEGRATOR["rtol"],
                atol=INTEGRATOR["atol"],
            )
    except _Rejected as rejected:
        return rejected.reason
    if not sol.success or sol.y.shape[1] != t_eval.size:
        return "integration_failed"
    states = np.asarray(sol.y)
    if not np.isfinite(states).all():
        return "state_not_finite"
    if np.abs(states).max() > state_bound:
        return "state_unbounded"
    if positive_state and (states <= 0).any():
        return "state_not_positive"
    cols = {"t": t_eval, **{n: states[i] for i, n in enumerate(state_names)}}
    if stiffness(program, inputs, state_names, cols) * window_length > STIFFNESS_LIMIT:
        return "stiff"
    return states


def stiffness(
    program: Program, inputs: Sequence[str], state_names: Sequence[str], cols: dict[str, np.ndarray]
) -> float:
    """The largest |eigenvalue| of the ODE's Jacobian in the state, over the trajectory `cols`
    (central differences). One state: |df/dA|; the oscillator (x' = v, v' = f): the eigenvalues
    of [[0, 1], [df/dx, df/dv]]."""
    partials = []
    with np.errstate(all="ignore"):
        for name in state_names:
            h = 1e-6 * np.maximum(1.0, np.abs(cols[name]))
            up = {k: cols[k] + h if k == name else cols[k] for k in inputs}
            down = {k: cols[k] - h if k == name else cols[k] for k in inputs}
            partials.append((program.evaluate(up) - program.evaluate(down)) / (2 * h))
        if len(state_names) == 1:
            lam = np.abs(partials[0])
        else:
            fx, fv = partials  # eigenvalues of [[0, 1], [fx, fv]]: (fv ± sqrt(fv² + 4 fx)) / 2
            disc = np.sqrt((fv**2 + 4 * fx).astype(complex))
            lam = np.maximum(np.abs((fv + disc) / 2), np.abs((fv - disc) / 2))
    lam = lam[np.isfinite(lam)]
    return float(lam.max()) if lam.size else float("inf")
