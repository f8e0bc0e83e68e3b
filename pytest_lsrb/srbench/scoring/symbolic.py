"""Symbolic accuracy without a model: does the proposal equal the ground truth up to constants?

A proposal *matches* when some choice of its constants makes it equal to the ground truth on the
ground truth's valid domain. The decision, deterministic and model-free:

1. `structure` (sympy): both sides as sympy expressions with every non-structural number (and
   every parameter) replaced by one constant symbol; identical canonical forms mean the same
   family, so a match (`c0*x + c1` vs `2.5*x + 1.2`).
2. `refit` (numeric, backed by sympy): the proposal's parameters, and any non-structural numbers
   it wrote, are re-fitted to the ground truth by Levenberg-Marquardt from several seeded starts
   on points drawn from the data (where the ground truth is finite), then checked on fresh points
   from a box reaching one data width beyond each side (equal expressions agree everywhere; an
   approximation such as a polynomial for `exp` drifts apart outside the fitted range). When it
   agrees, sympy is asked to confirm that the fitted difference expands/simplifies to
   (numerically) zero; the verdict records whether it could (`refit+sympy`) or the numeric check
   stands alone (`refit+numeric`).

"Structural" numbers are the small integers and halves that shape an equation (`2*x`, `1/2`),
and integer or half-integer exponents up to 12 (`x**6`, `x**1.5`); every other literal is a
constant to fit. The same points and seeds are used on every
run, so the verdict is a pure function of (proposal, ground truth, data).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import sympy
from scipy.optimize import least_squares

from pytest_lsrb.equations import Program
from pytest_lsrb.equations.ir import Node, Num, Op, Param, dag_nodes

FIT_POINTS: Final = 200
PROBE_POINTS: Final = 200
WIDEN: Final = 1.0  # the near probe box reaches one data width beyond each side
# The far probe: each variable up to FAR times its data's magnitude (log-uniform on its side of
# zero), where a truncated series (sin x vs x - x^3/6 + x^5/120 fitted on [0.01, 0.1]; the
# relativistic factor vs its expansion at v << c) parts from the function it approximates.
FAR: Final = 10.0
FIT_TOL: Final = 1e-7  # relative RMS residual on the fit points
PROBE_TOL: Final = 1e-6  # max relative error on the probe points
RANDOM_STARTS: Final = 6
_STRUCTURAL: Final = frozenset(float(v) for v in (*range(-4, 5), -0.5, 0.5, 1.5, -1.5))
_K = sympy.Symbol("K")


@dataclass(frozen=True)
class SymbolicVerdict:
    match: bool | None  # None: not applicable (no ground truth) or undecidable
    # structure | refit+sympy | refit+numeric | no_match | no_proposal | not_applicable | no_domain
    method: str
    residual: float | None = None  # relative RMS of the best refit on the fit points
    detail: str = ""

    def record(self) -> dict[str, Any]:
        return {
            "symbolic_match": self.match,
            "symbolic_method": self.method,
            "symbolic_residual": self.residual,
        }


NOT_APPLICABLE: Final = SymbolicVerdict(
    match=None, method="not_applicable", detail="the problem has no ground-truth equation"
)


# -- structure ---------------------------------------------------------------------------------


def _structural_exponent(value: float) -> bool:
    return abs(value) <= 12 and float(2 * value).is_integer()


def _abstracted(expr: sympy.Expr, params: set[sympy.Symbol]) -> sympy.Expr:
    """Every parameter and non-structural number becomes the one constant symbol K."""
    repl: dict[Any, Any] = {p: _K for p in params}
    exponents = {p.exp for p in expr.atoms(sympy.Pow) if p.exp.is_Number}
    for atom in expr.atoms(sympy.Number):
        value = float(atom)
        if value in _STRUCTURAL or (atom in exponents and _structural_exponent(value)):
            continue
        repl[atom] = _K
    for atom in expr.atoms(sympy.NumberSymbol):
        repl[atom] = _K  # pi and E are constants too (2*pi*x and 6.28*x are one family)
    return expr.xreplace(repl)


def same_structure(proposal: Program, truth: Program) -> bool:
    syms = {name: sympy.Symbol(name) for name in truth.variables}
    p_params = [sympy.Symbol(f"_p{i}") for i in range(proposal.n_params)]
    try:
        p = _abstracted(proposal.to_sympy(syms, p_params), set(p_params))
        t_params = [sympy.Symbol(f"_t{i}") for i in range(truth.n_params)]
        t = _abstracted(truth.to_sympy(syms, t_params), set(t_params))
    except (TypeError, ValueError, RecursionError):
        return False
    return sympy.srepr(p) == sympy.srepr(t)


# -- refit -------------------------------------------------------------------------------------


def promote_constants(program: Program) -> tuple[Program, list[float]]:
    """The program with every non-structural literal turned into a parameter, and those
    literals' values (the starting values of the new parameters, in index order)."""
    memo: dict[int, Node] = {}
    extra: list[float] = []
    nodes = dag_nodes(program.root)
    exponents = {
        id(n.args[1])
        for n in nodes
        if isinstance(n, Op)
        and n.name == "pow"
        and isinstance(n.args[1], Num)
        and _structural_exponent(n.args[1].value)
    }
    for node in nodes:
        if (
            isinstance(node, Num)
            and node.value not in _STRUCTURAL
            and id(node) not in exponents
            and math.isfinite(node.value)
        ):
            memo[id(node)] = Param(program.n_params + len(extra))
            extra.append(node.value)
        elif isinstance(node, Op):
            memo[id(node)] = Op(node.name, tuple(memo[id(a)] for a in node.args))
        else:
            memo[id(node)] = node
    if not extra:
        return program, []
    promoted = Program.from_ir(memo[id(program.root)], program.variables, program.n_params + len(extra))
    return promoted, extra


def _sample_points(
    columns: Mapping[str, np.ndarray], truth: Program, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    names = list(truth.variables)
    n = len(next(iter(columns.values())))
    rows = rng.permutation(n)
    data = {k: np.asarray(columns[k], dtype=np.float64)[rows] for k in names}
    y = truth.evaluate(data)
    ok = np.isfinite(y)
    if ok.sum() < 10:
        return None
    fit = {k: v[ok][:FIT_POINTS] for k, v in data.items()}
    probe: dict[str, np.ndarray] = {}
    for k in names:
        lo, hi = float(np.min(data[k])), float(np.max(data[k]))
        width = hi - lo if hi > lo else max(abs(hi), 1.0)
        a, b = lo - WIDEN * width, hi + WIDEN * width
        if lo >= 0:
            a = max(a, lo / 2)  # stay on the same side of zero as the data
        elif hi <= 0:
            b = min(b, hi / 2)
        near = rng.uniform(a, b, PROBE_POINTS)
        if lo > 0 or hi < 0:
            sign, small, big = (1.0, lo, hi) if lo > 0 else (-1.0, -hi, -lo)
            far = sign * np.exp(rng.uniform(math.log(small / FAR), math.log(big * FAR), PROBE_POINTS))
        else:
            far = rng.uniform(lo - FAR * width, hi + FAR * width, PROBE_POINTS)
        probe[k] = np.concatenate([near, far])
    with np.errstate(all="ignore"):
        yp = truth.evaluate(probe)
    good = np.isfinite(yp)
    if good.sum() < 20:  # the truth is not defined beyond the data: probe with unused data rows
        rest = {k: v[ok][FIT_POINTS : FIT_POINTS + PROBE_POINTS] for k, v in data.items()}
        if len(next(iter(rest.values()))) < 10:
            rest = fit
        return fit, rest
    return fit, {k: v[good] for k, v in probe.items()}


def _relative_rms(a: np.ndarray, b: np.ndarray) -> float:
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
        return np.zeros(0), _relative_rms(program.evaluate(X), target)
    bound = program.bind(X)

    def resid(p: np.ndarray) -> np.ndarray:
        r = bound.evaluate(p) - target
        return np.where(np.isfinite(r), r, 1e150)

    def jac(p: np.ndarray) -> np.ndarray:
        _, j = bound.value_and_jacobian(p)
        return np.where(np.isfinite(j), j, 0.0)

    linear = _linear_solution(bound, target, n, rng)
    if linear is not None:
        return linear, _relative_rms(bound.evaluate(linear), target)
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
        r = _relative_rms(bound.evaluate(sol.x), target)
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


def _sympy_confirms(
    program: Program, params: np.ndarray, truth: Program, scale: float, positive: set[str]
) -> bool:
    """Whether sympy reduces (fitted proposal - truth), expanded (with trig and log identities
    expanded too), to terms whose coefficients are all negligible next to the truth's scale.
    Variables whose data are all positive are declared positive (so sqrt(x**2) is x)."""
    syms = {
        name: sympy.Symbol(name, positive=True) if name in positive else sympy.Symbol(name, real=True)
        for name in truth.variables
    }
    tol = 1e-6 * max(scale, 1e-12)

    def negligible(expr: Any) -> bool:
        if expr == 0:
            return True
        coeffs = [term.as_coeff_Mul()[0] for term in sympy.Add.make_args(expr)]
        return all(c.is_Number and abs(float(c)) <= tol for c in coeffs)

    def deep(e: Any) -> Any:
        return sympy.expand(sympy.expand_log(sympy.expand_trig(e), force=True))

    try:
        diff = program.to_sympy(syms, [float(p) for p in params]) - truth.to_sympy(syms, [])
        return any(negligible(step(diff)) for step in (sympy.expand, deep))
    except (TypeError, ValueError, RecursionError, AttributeError):
        return False


def symbolic_match(
    proposal: Program | None,
    truth: Program | None,
    columns: Mapping[str, np.ndarray],
    *,
    params: Sequence[float] | None = None,
    seed: int = 0,
) -> SymbolicVerdict:
    """The verdict for one proposal (with optional already-fitted `params`) against the ground
    truth, on the domain given by `columns` (input name -> values, e.g. all of a problem's rows)."""
    if truth is None:
        return NOT_APPLICABLE
    if proposal is None:
        return SymbolicVerdict(match=False, method="no_proposal")
    if same_structure(proposal, truth):
        return SymbolicVerdict(match=True, method="structure", residual=0.0)
    if truth.n_params:
        # A template ground truth (the release's `F0*sin(t) - omega0**2*x`): its parameters have no
        # values, so there is nothing to evaluate the proposal against beyond the structure.
        return SymbolicVerdict(
            match=None,
            method="template_truth",
            detail="the ground truth has parameters without values; only the structure check applies",
        )
    rng = np.random.default_rng([seed, 0x5EB])
    points = _sample_points(columns, truth, rng)
    if points is None:
        return SymbolicVerdict(
            match=None, method="no_domain", detail="the ground truth is not finite on the data"
        )
    fit_X, probe_X = points
    target = truth.evaluate(fit_X)
    promoted, literals = promote_constants(proposal)
    start = [*(params if params is not None else []), *literals]
    p, resid = refit(promoted, fit_X, target, [np.array(start)], rng)
    if not resid <= FIT_TOL:
        return SymbolicVerdict(
            match=False,
            method="no_match",
            residual=resid,
            detail="no choice of constants reproduces the ground truth",
        )
    with np.errstate(all="ignore"):
        probe_truth = truth.evaluate(probe_X)
        probe_pred = promoted.evaluate(probe_X, p)
        scale = math.sqrt(float(np.mean(probe_truth**2))) or 1.0
        rel = np.abs(probe_pred - probe_truth) / np.maximum(np.abs(probe_truth), 1e-9 * scale)
    if not (np.isfinite(rel).all() and float(rel.max()) <= PROBE_TOL):
        return SymbolicVerdict(
            match=False,
            method="no_match",
            residual=resid,
            detail="the refitted proposal departs from the truth outside the data",
        )
    positive = {k for k, v in columns.items() if len(v) and float(np.min(v)) > 0}
    confirmed = _sympy_confirms(promoted, p, truth, scale, positive)
    return SymbolicVerdict(match=True, method="refit+sympy" if confirmed else "refit+numeric", residual=resid)
