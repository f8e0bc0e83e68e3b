"""Fitting a maximal form's constants to the ground truth (the symbolic checker's numbers).

`fit_form` searches the nonlinear constants (argument scales, phases, inner coefficients) from
starts drawn from a pool of the truth's own constants and a few magnitudes, solving the top-level
coefficients exactly for each (separable least squares), then refines all of them by
Levenberg-Marquardt; `refit` is plain LM from given starts (exact when the form is linear in its
constants); `refit_relative` refines a fit on points whose values span orders of magnitude, each
point's residual relative to the truth there (the far probes of `srbench.scoring.probes`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
from scipy.optimize import least_squares

from pytest_lsrb.equations import Program
from pytest_lsrb.srbench.scoring.maximal import MaximalForm

FIT_TOL: Final = 1e-7  # relative RMS residual on the fit points
RANDOM_STARTS: Final = 6
POOL_SIZE: Final = 40  # starting values per nonlinear constant
MAX_STARTS: Final = 200  # start combinations screened (all of them when fewer)
LM_STARTS: Final = 6  # of which the best are refined
NEIGHBOURS: Final = 2000  # starts that change two constants, screened when no more than this


def relative_rms(a: np.ndarray, b: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        scale = math.sqrt(float(np.mean(b * b))) or 1.0
        value = math.sqrt(float(np.mean((a - b) ** 2))) / scale
    return value if math.isfinite(value) else math.inf


def refit(
    program: Program,
    X: Mapping[str, np.ndarray],
    target: np.ndarray,
    starts: Sequence[np.ndarray],
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """Least-squares fit of the program's parameters to `target`: (params, relative RMS)."""
    n = program.n_params
    if n == 0:
        with np.errstate(all="ignore"):
            return np.zeros(0), relative_rms(program.evaluate(X), target)
    bound = program.bind(X)

    def resid(p: np.ndarray) -> np.ndarray:
        r = bound.evaluate(p) - target
        return np.where(np.isfinite(r), r, 1e150)

    def jac(p: np.ndarray) -> np.ndarray:
        _, j = bound.value_and_jacobian(p)
        return np.where(np.isfinite(j), j, 0.0)

    with np.errstate(all="ignore"):
        linear = _linear_solution(bound, target, n, rng)
        if linear is not None:
            return linear, relative_rms(bound.evaluate(linear), target)
    candidates = [np.asarray(s, dtype=np.float64) for s in starts if len(s) == n]
    candidates.append(np.ones(n))
    best_p, best_r = candidates[0], math.inf
    for i in range(len(candidates) + RANDOM_STARTS):
        if i >= len(candidates):
            if best_r <= FIT_TOL:
                break  # random restarts only when the given starts found nothing
            candidates.append(rng.choice([-1.0, 1.0], n) * 10 ** rng.uniform(-1.5, 1.5, n))
        with np.errstate(all="ignore"):
            try:
                sol = least_squares(
                    resid,
                    candidates[i],
                    jac=jac,
                    method="lm",
                    max_nfev=100 * (n + 1),
                    xtol=1e-15,
                    ftol=1e-15,
                    gtol=1e-15,
                )
            except (ValueError, np.linalg.LinAlgError):
                continue
            r = relative_rms(bound.evaluate(sol.x), target)
        if r < best_r:
            best_p, best_r = sol.x, r
        if best_r <= FIT_TOL * 1e-3:
            break
    return best_p, best_r


def _linear_solution(bound: Any, target: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray | None:
    """The exact least-squares solution when the program is linear in its parameters (the
    Jacobian does not depend on them), else None."""
    p1, p2 = rng.normal(size=n), rng.normal(size=n)
    y1, j1 = bound.value_and_jacobian(p1)
    _, j2 = bound.value_and_jacobian(p2)
    if not (np.isfinite(j1).all() and np.isfinite(y1).all()):
        return None
    if not np.allclose(j1, j2, rtol=1e-12, atol=1e-12):
        return None
    offset = y1 - j1 @ p1
    sol, *_ = np.linalg.lstsq(j1, target - offset, rcond=None)
    return np.asarray(sol)


def start_pool(truth_constants: np.ndarray) -> list[float]:
    """Starting values tried for each of the proposal's nonlinear constants (its arguments'
    scales, phases, inner coefficients): the truth's own constants and a few magnitudes."""
    values = {0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, math.pi / 2, -math.pi / 2}
    for v in truth_constants:
        if math.isfinite(v) and v != 0:
            values |= {float(v), -float(v), 1 / float(v)}
    return sorted(values, key=lambda v: (abs(abs(v) - 1), v))[:POOL_SIZE]


def fit_form(
    form: MaximalForm,
    X: Mapping[str, np.ndarray],
    target: np.ndarray,
    pool: Sequence[float],
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """The form's constants fitted to `target`: the nonlinear ones searched from starts drawn
    from `pool` with the top-level coefficients solved exactly for each (separable least squares),
    then all of them refined together. (params, relative RMS)."""
    n = form.program.n_params
    linear = list(form.linear)
    other = [i for i in range(n) if i not in set(linear)]
    if not other or not linear:
        return refit(form.program, X, target, [form.start], rng)
    bound = form.program.bind(X)
    base = form.start.copy()

    def full(theta: np.ndarray) -> np.ndarray:
        p = base.copy()
        p[other] = theta
        cols = []
        for j in linear:
            q = p.copy()
            q[linear] = 0.0
            q[j] = 1.0
            cols.append(bound.evaluate(q))
        F = np.column_stack([np.broadcast_to(np.asarray(c, dtype=np.float64), target.shape) for c in cols])
        if not np.isfinite(F).all():
            return np.full(n, np.nan)
        coef, *_ = np.linalg.lstsq(F, target, rcond=None)
        p[linear] = coef
        fitted: np.ndarray = p
        return fitted

    def resid(theta: np.ndarray) -> np.ndarray:
        p = full(theta)
        if not np.isfinite(p).all():
            return np.full(target.shape, 1e150)
        r = bound.evaluate(p) - target
        return np.where(np.isfinite(r), r, 1e150)

    def score(theta: np.ndarray) -> float:
        value = float(np.sum(resid(theta) ** 2))
        return value if math.isfinite(value) else math.inf

    combos = [form.start[other]]
    with np.errstate(all="ignore"):
        # The proposal's own constants often fit already; they are what the identity check
        # judges then (a least-squares solution could zero terms that cancel: sin**2 + cos**2 - 1).
        for first in (form.start, full(form.start[other])):
            if (
                np.isfinite(first).all()
                and (r := relative_rms(bound.evaluate(first), target)) <= FIT_TOL * 1e-3
            ):
                return first, r
        if len(pool) ** len(other) <= MAX_STARTS:
            combos += [np.asarray(c) for c in itertools.product(pool, repeat=len(other))]
        else:  # the start with one or two constants from the pool, coordinate descent, random draws
            d = len(other)
            for j, v in itertools.product(range(d), pool):
                combos.append(form.start[other].copy())
                combos[-1][j] = v
            if (d * (d - 1) // 2) * len(pool) ** 2 <= NEIGHBOURS:
                for (j, k), (v, w) in itertools.product(
                    itertools.combinations(range(d), 2), itertools.product(pool, pool)
                ):
                    combos.append(form.start[other].copy())
                    combos[-1][[j, k]] = (v, w)
            cur = form.start[other].copy()
            cur_score = score(cur)
            for _sweep in range(2):
                for j in range(len(other)):
                    for v in pool:
                        trial = cur.copy()
                        trial[j] = v
                        if (s := score(trial)) < cur_score:
                            cur, cur_score = trial, s
            combos.append(cur)
            combos += [rng.choice(np.asarray(pool), len(other)) for _ in range(MAX_STARTS // 4)]
    best_p, best_r = form.start, math.inf
    with np.errstate(all="ignore"):
        # cheap screen of every start, then LM from the best few
        scored = sorted(combos, key=score)
        for start in scored[:LM_STARTS]:
            try:
                sol = least_squares(resid, start, method="lm", max_nfev=60 * (len(other) + 1))
            except (ValueError, np.linalg.LinAlgError):
                continue
            p = full(sol.x)
            r = relative_rms(bound.evaluate(p), target) if np.isfinite(p).all() else math.inf
            if r < best_r:
                best_p, best_r = p, r
            if best_r <= FIT_TOL * 1e-3:
                break
    if best_r <= FIT_TOL * 1e-3:
        return best_p, best_r
    p, r = refit(form.program, X, target, [best_p, form.start], rng)
    return (p, r) if r < best_r else (best_p, best_r)


def refit_relative(
    program: Program,
    X: Mapping[str, np.ndarray],
    target: np.ndarray,
    scale: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:
    """`start` refined by LM with each point's residual divided by its `scale` (the truth's
    magnitude there, or the fit points' RMS): points orders of magnitude apart weigh alike."""
    if program.n_params == 0:
        return start
    bound = program.bind(X)

    def resid(p: np.ndarray) -> np.ndarray:
        r = (bound.evaluate(p) - target) / scale
        return np.where(np.isfinite(r), r, 1e150)

    def jac(p: np.ndarray) -> np.ndarray:
        _, j = bound.value_and_jacobian(p)
        j = j / scale[:, None]
        return np.where(np.isfinite(j), j, 0.0)

    with np.errstate(all="ignore"):
        try:
            sol = least_squares(
                resid,
                start,
                jac=jac,
                method="lm",
                max_nfev=100 * (program.n_params + 1),
                xtol=1e-15,
                ftol=1e-15,
                gtol=1e-15,
            )
        except (ValueError, np.linalg.LinAlgError):
            return start
    return np.asarray(sol.x)
