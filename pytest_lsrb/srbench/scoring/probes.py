"""Where the symbolic checker looks: fit points on the domain box, probes far beyond it, and which
probes rounding leaves able to decide.

Equivalence is exact on the domain where the ground truth is finite, not agreement on the data:

- the fit points are drawn on the data's *box* (each variable uniform over its own range,
  independently), never on the rows themselves: rows that lie on a line (the release's material
  science has T = 273 + 500*epsilon on every row) cannot separate a term in T from one in
  epsilon, and a form equal to the truth on the line only would fit them;
- the probes reach a data width beyond each side, then each variable's magnitude out to 10x and
  1000x (log-uniform, on the data's side of zero), where a truncated series, a Pade approximant
  or a small-angle form parts from its function however well it fits a narrow domain; and a unit
  band for a variable whose data lie wholly beyond 1e3 or below 1e-3 in magnitude: magnitudes
  0.01 to 100 on the data's side of zero (the other variables of those probes stay in their near
  band). `x` for `sin(x)` on x ~ 1e-9, or `pi/2 - 1/x` for `arctan(x)` on x ~ 1e8, part only
  there, orders of magnitude beyond what 1000x of a narrow box reaches;
- at each probe a first-order bound on the rounding error of both sides' evaluation
  (`rounding_bound`) says whether float64 can decide there: where a difference cancels (`1 -
  cos(x)` at x = 1e-6, `1 - v**2/c**2` at v ~ c) two equal functions part by rounding alone,
  and those probes are left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from pytest_lsrb.equations import Program
from pytest_lsrb.equations.ir import OPS, Num, Op, Param, Var, dag_nodes

FIT_POINTS: Final = 200
FIT_CANDIDATES: Final = 800  # box points drawn, of which the first FIT_POINTS finite ones fit
MIN_BOX: Final = 50  # fewer finite box points: the truth lives on a thin part of the box (rows)
PROBE_POINTS: Final = 200  # per band: near, 10x, 1000x, unit
WIDEN: Final = 1.0  # the near band reaches one data width beyond each side
FAR: Final = (10.0, 1000.0)  # the far bands: each variable's magnitude up to these factors
UNIT: Final = (0.01, 100.0)  # the unit band's magnitudes
FAR_FROM_UNIT: Final = 1e3  # data wholly beyond this factor from 1 (either way) get the unit band
EPS: Final = float(np.finfo(np.float64).eps)
# A probe decides only where rounding could part two equal functions by less than this
# (relative): 1000x below the tolerance, for a bound that is first order.
TRUSTED: Final = 1e-9


def _values(program: Program, X: Mapping[str, np.ndarray], params: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = program.evaluate(X, params if program.n_params else None)
    return np.broadcast_to(np.asarray(y, dtype=np.float64), next(iter(X.values())).shape)


Points = dict[str, np.ndarray]


def box_points(
    columns: Mapping[str, np.ndarray], truth: Program, params: np.ndarray, rng: np.random.Generator
) -> tuple[Points, Points] | None:
    """(fit points, more points) of the data's box where the truth is finite: FIT_POINTS to fit
    on, the rest to probe with. Where the truth is finite on too little of the box (an arcsin of
    a ratio), the data rows where it is; None if neither has ten."""
    names = list(truth.variables)
    box = {}
    for k in names:
        data = np.asarray(columns[k], dtype=np.float64)
        box[k] = rng.uniform(float(np.min(data)), float(np.max(data)), FIT_CANDIDATES)
    ok = np.isfinite(_values(truth, box, params))
    if ok.sum() < MIN_BOX:
        rows = rng.permutation(len(next(iter(columns.values()))))
        box = {k: np.asarray(columns[k], dtype=np.float64)[rows] for k in names}
        ok = np.isfinite(_values(truth, box, params))
        if ok.sum() < 10:
            return None
    fit = {k: v[ok][:FIT_POINTS] for k, v in box.items()}
    rest = {k: v[ok][FIT_POINTS:] for k, v in box.items()}
    return fit, rest


def probe_points(
    columns: Mapping[str, np.ndarray], names: Sequence[str], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The near band, the far bands and, where a variable's data are far from unit scale, the
    unit band (the module's note), PROBE_POINTS each."""
    spans = {k: _span(np.asarray(columns[k], dtype=np.float64)) for k in names}
    unit = any(_far_from_unit(small, big) for _, _, small, big in spans.values())
    probe: dict[str, np.ndarray] = {}
    for k, (lo, hi, small, big) in spans.items():
        width = hi - lo if hi > lo else max(abs(hi), 1.0)
        a, b = lo - WIDEN * width, hi + WIDEN * width
        if lo >= 0:
            a = max(a, lo / 2)  # stay on the same side of zero as the data
        elif hi <= 0:
            b = min(b, hi / 2)
        bands = [rng.uniform(a, b, PROBE_POINTS)]
        magnitudes = [(small / far, big * far) for far in FAR]
        if unit:  # a variable near unit scale already keeps its near band in these probes
            magnitudes.append(UNIT if _far_from_unit(small, big) else (math.nan, math.nan))
        for low, high in magnitudes:
            if math.isnan(low):
                bands.append(rng.uniform(a, b, PROBE_POINTS))
                continue
            magnitude = np.exp(rng.uniform(math.log(low), math.log(high), PROBE_POINTS))
            if lo >= 0 or hi <= 0:
                # Data on one side of zero, touching it or not (a time from t = 0, a strain
                # from 0): the far bands stay on that side.
                bands.append((1.0 if hi > 0 else -1.0) * magnitude)
            else:
                bands.append(rng.choice([-1.0, 1.0], PROBE_POINTS) * magnitude)
        probe[k] = np.concatenate(bands)
    return probe


def _span(data: np.ndarray) -> tuple[float, float, float, float]:
    """(lowest, highest, smallest nonzero magnitude, largest magnitude) of a variable's data."""
    nonzero = np.abs(data[data != 0])
    small, big = (float(nonzero.min()), float(nonzero.max())) if nonzero.size else (1.0, 1.0)
    return float(np.min(data)), float(np.max(data)), small, big


def _far_from_unit(small: float, big: float) -> bool:
    """The data lie wholly beyond FAR_FROM_UNIT from 1 in magnitude, above or below."""
    return small > FAR_FROM_UNIT or big < 1 / FAR_FROM_UNIT


def rounding_bound(
    program: Program, X: Mapping[str, np.ndarray], params: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(value, a first-order bound on the rounding error of computing it in float64) per point:
    each operation's own rounding plus its arguments' errors times its partial derivatives. The
    inputs are exact (both sides are evaluated at the same points)."""
    shape = next(iter(X.values())).shape
    value: dict[int, np.ndarray] = {}
    error: dict[int, np.ndarray] = {}
    p = np.zeros(0) if params is None else np.asarray(params, dtype=np.float64)
    with np.errstate(all="ignore"):
        for node in dag_nodes(program.root):
            if isinstance(node, Num):  # a side's constant is the double it holds
                v, e = np.float64(node.value), np.float64(0.0)
            elif isinstance(node, Var):
                v, e = np.asarray(X[node.name], dtype=np.float64), np.float64(0.0)
            elif isinstance(node, Param):
                v, e = p[node.index], np.float64(0.0)
            elif isinstance(node, Op):
                spec = OPS[node.name]
                args = [value[id(a)] for a in node.args]
                v = spec.np_fn(*args)
                e = EPS * np.abs(v)
                if spec.partial is not None:
                    for i, a in enumerate(node.args):
                        if np.any(error[id(a)]):
                            e = e + np.abs(spec.partial(i, args, v)) * error[id(a)]
            value[id(node)], error[id(node)] = v, e
        root = id(program.root)
        return (
            np.broadcast_to(np.asarray(value[root], dtype=np.float64), shape),
            np.broadcast_to(np.asarray(error[root], dtype=np.float64), shape),
        )


def trusted(want: np.ndarray, want_error: np.ndarray, got: np.ndarray, got_error: np.ndarray) -> np.ndarray:
    """The probes where both sides are finite and rounding cannot part them by TRUSTED."""
    with np.errstate(all="ignore"):
        ok = np.isfinite(want) & np.isfinite(got) & (want != 0)
        bound = (want_error + got_error) / np.abs(want)
    out: np.ndarray = ok & np.isfinite(bound) & (bound <= TRUSTED)
    return out
