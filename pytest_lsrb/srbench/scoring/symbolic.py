"""Symbolic accuracy by the paper's rule: is the proposal the ground truth's *form*?

The paper (LLM-SRBench) compares the hypothesis with the ground truth after removing their
parameters and constants. Here that is written as one rule about *families*: each side, with
every number and every named parameter a free placeholder constant, is a family of functions;
the proposal matches when the two families are equal. A superset (the true terms plus extra
ones whose best coefficients are ~0), a subset (a missing term) or a local approximation (a
Taylor polynomial that fits the data range) is not a match. A template ground truth (named
parameters without values, `F0*sin(t) - omega0**2*x - beta*v`) is a family like any other and
is decided the same way.

Placeholders (`promote_constants`): every literal except 0 and ±1 and the integer or
half-integer exponents up to 12 (`x**2`, `x**1.5`), which shape the equation; a subexpression
written twice is one (its literals one constant). So `3.14159*r**2`, `pi*r**2` and `A*r**2` are
one family. By default (`scale="free"`, `--lsrb-sr-sa-scale free`) each family also has a free
overall factor (`scale_free`): `E/(g*z)` and `c*E/(g*z)` are one form. That follows the paper's
rule, which compares the forms *after removing constants* (removing `c` from `c*E/(g*z)` leaves
`E/(g*z)`; llm-srbench ships no SA code, only that description of its GPT-4o judge), and LLM-SR's
`params[0]*...` skeletons fit that factor to 1. `scale="strict"` is the literal reading: the
placeholders are only those each side writes, so a constant-free truth is matched only by a
constant-free answer. A free offset is never given: `sin(x)**2` and `a - cos(x)**2` differ.

The decision, deterministic (fixed seeds and points) and model-free:

1. `family` (numeric, both ways, first: it is cheap): the proposal's family holds the truth's
   members (its constants fitted to the truth at the truth's values and at a perturbed draw, by
   Levenberg-Marquardt from several seeded starts, then checked on fresh points reaching one
   data width beyond each side and up to ten times each variable's magnitude, where a
   truncated series parts from its function), and the truth's family holds the proposal's
   perturbed members (which a superset fails: its extra terms, non-zero, leave the truth's
   form). Tolerances are relative and tight (1e-7 RMS on the fit, 1e-6 max on the probe): an
   approximation cannot pass. A probe point where only one side overflows (`exp(2*x)` far out,
   where `tanh(x)` stays finite) is left out, as long as half the probe points remain.
2. `structure` (sympy, when the numbers said no: a fit may miss its optimum): both skeletons
   expanded, constants folded (a sign, product, power or function of constants is one
   constant: `-2*c0*c1*x` is `K*x`), compared as canonical trees, with as many independent
   constants on each side (the Jacobian's rank, so `c0*(x + y)` is not `c1*x + c2*y`).

Anything else is `no_match`, with a detail saying which inclusion failed. The sympy work is
bounded by the caller (`srbench.scoring.evaluation` runs this in a child process with a time and memory
budget: an expansion past it is `undecided`).
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
from pytest_lsrb.srbench.records import SrbenchFields

FIT_POINTS: Final = 200
PROBE_POINTS: Final = 200
WIDEN: Final = 1.0  # the near probe box reaches one data width beyond each side
# The far probe: each variable up to FAR times its data's magnitude (log-uniform on its side of
# zero), where a truncated series (sin x vs x - x^3/6 + x^5/120 fitted on [0.01, 0.1]; the
# relativistic factor vs its expansion at v << c) parts from the function it approximates.
FAR: Final = 10.0
FIT_TOL: Final = 1e-7  # relative RMS residual on the fit points
PROBE_TOL: Final = 1e-6  # max relative error on the probe points
MIN_SHARED: Final = 0.5  # of the probe points where the family member is finite, both must be
RANDOM_STARTS: Final = 6
MEMBER_TRIES: Final = 6  # perturbed draws tried until one is finite on the data
STRUCTURAL_LITERALS: Final = frozenset({0.0, 1.0, -1.0})
RANK_RTOL: Final = 1e-8
RESIDUAL_FLOOR: Final = 1e-12
_K = sympy.Symbol("K")
SCALES: Final = ("free", "strict")  # --lsrb-sr-sa-scale: the module's note


@dataclass(frozen=True)
class SymbolicVerdict:
    match: bool | None  # None: not applicable (no ground truth) or undecidable
    # structure | family | no_match | no_proposal | not_applicable | no_domain | no_member
    method: str
    residual: float | None = None  # relative RMS of the proposal's best fit to the truth
    detail: str = ""

    def record(self) -> SrbenchFields:
        """The record's fields. The residual to 3 digits, and 0 below 1e-12 (machine-precision
        noise there differs with the memory layout of the sums; the record is byte-stable)."""
        r = self.residual
        residual = None if r is None else 0.0 if r < RESIDUAL_FLOOR else float(f"{r:.3g}")
        return {
            "symbolic_match": self.match,
            "symbolic_method": self.method,
            "symbolic_residual": residual,
        }


NOT_APPLICABLE: Final = SymbolicVerdict(
    match=None, method="not_applicable", detail="the problem has no ground-truth equation"
)


# -- placeholders --------------------------------------------------------------------------------


def _structural_exponent(value: float) -> bool:
    return abs(value) <= 12 and float(2 * value).is_integer()


def scale_free(program: Program) -> Program:
    """The program times one more parameter (its last): the family closed under an overall
    factor, so `E/(g*z)`, `c*E/(g*z)` and `4*E/(g*z)` are one family (see the module's note)."""
    return Program.from_ir(
        Op("mul", (Param(program.n_params), program.root)), program.variables, program.n_params + 1
    )


def with_scale(skeleton: Program, scale: str) -> Program:
    """The skeleton's family under the `scale` rule: with a free overall factor (free) or as
    written (strict)."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES} (got {scale!r})")
    return scale_free(skeleton) if scale == "free" else skeleton


def skeleton_family(program: Program, scale: str = "free") -> tuple[Program, list[float]]:
    """The family the rule compares: the skeleton (`promote_constants`) under the `scale` rule,
    and the constants' starting values (the literals' values; the free factor starts at 1)."""
    promoted, literals = promote_constants(program)
    return with_scale(promoted, scale), literals


def promote_constants(program: Program) -> tuple[Program, list[float]]:
    """The program's skeleton: every literal but 0, ±1 and the structural exponents turned into
    a parameter (after the program's own), and those literals' values (the new parameters'
    starting values, in index order). A subexpression written twice (`exp(2*a*x)` in a
    numerator and a denominator) is one subexpression: its literals become one constant."""
    nodes = dag_nodes(program.root)
    exponents = {
        id(n.args[1])
        for n in nodes
        if isinstance(n, Op)
        and n.name == "pow"
        and isinstance(n.args[1], Num)
        and _structural_exponent(n.args[1].value)
    }
    # Each node's structural identity: equal trees get the same integer.
    interned: dict[tuple[Any, ...], int] = {}
    key: dict[int, int] = {}
    for node in nodes:
        if isinstance(node, Op):
            shape: tuple[Any, ...] = ("op", node.name, tuple(key[id(a)] for a in node.args))
        elif isinstance(node, Num):
            shape = ("num", node.value, id(node) in exponents)
        elif isinstance(node, Param):
            shape = ("param", node.index)
        else:
            shape = ("var", node.name)
        key[id(node)] = interned.setdefault(shape, len(interned))
    extra: list[float] = []
    by_id: dict[int, Node] = {}
    by_shape: dict[int, Node] = {}

    def build(node: Node) -> Node:
        done = by_id.get(id(node))
        if done is not None:
            return done
        out: Node
        if isinstance(node, Op):
            shared = by_shape.get(key[id(node)])
            if shared is None:
                shared = by_shape[key[id(node)]] = Op(node.name, tuple(build(a) for a in node.args))
            out = shared
        elif (
            isinstance(node, Num)
            and node.value not in STRUCTURAL_LITERALS
            and id(node) not in exponents
            and math.isfinite(node.value)
        ):
            out = Param(program.n_params + len(extra))
            extra.append(node.value)
        else:
            out = node
        by_id[id(node)] = out
        return out

    root = build(program.root)
    if not extra:
        return program, []
    return Program.from_ir(root, program.variables, program.n_params + len(extra)), extra


# -- structure -----------------------------------------------------------------------------------


def _fold(expr: Any, variables: frozenset[Any]) -> Any:
    """Constants folded: every subexpression free of variables that holds a constant symbol is
    one fresh constant; numbers stay where no constant absorbs them (`2*x` is not `K*x`)."""
    if not (expr.free_symbols & variables):
        return sympy.Dummy("k") if expr.free_symbols else expr
    if expr.is_Add or expr.is_Mul:
        parts = [_fold(a, variables) for a in expr.args]
        const = [p for p in parts if not (p.free_symbols & variables)]
        rest = [p for p in parts if p.free_symbols & variables]
        if any(p.free_symbols for p in const):
            return expr.func(sympy.Dummy("k"), *rest)
        return expr.func(*const, *rest)
    if not expr.args:
        return expr
    return expr.func(*(_fold(a, variables) for a in expr.args))


def canonical_skeleton(
    program: Program, variables: Sequence[str], positive: set[str] | None = None, scale: str = "free"
) -> Any:
    """The skeleton as a canonical sympy tree: constants placeholders (one symbol K wherever a
    constant stands), expanded and folded."""
    positive = positive or set()
    syms = {
        n: sympy.Symbol(n, positive=True) if n in positive else sympy.Symbol(n, real=True) for n in variables
    }
    promoted = skeleton_family(program, scale)[0]
    consts = [sympy.Symbol(f"_k{i}") for i in range(promoted.n_params)]
    expr = promoted.to_sympy(syms, consts)
    expr = expr.xreplace({a: sympy.Dummy("k") for a in expr.atoms(sympy.NumberSymbol)})
    folded = _fold(sympy.expand(expr), frozenset(syms.values()))
    return folded.xreplace({s: _K for s in folded.free_symbols - set(syms.values())})


def _rank(program: Program, X: Mapping[str, np.ndarray], params: np.ndarray) -> int | None:
    """How many of the constants are independent: the Jacobian's numerical rank (None where it
    is not finite)."""
    if program.n_params == 0:
        return 0
    with np.errstate(all="ignore"):
        _, jac = program.bind(X).value_and_jacobian(params)
    if not np.isfinite(jac).all():
        return None
    s = np.linalg.svd(jac, compute_uv=False)
    return int(np.sum(s > RANK_RTOL * s[0])) if s.size and s[0] > 0 else 0


def same_structure(
    proposal: Program,
    truth: Program,
    X: Mapping[str, np.ndarray] | None = None,
    starts: tuple[np.ndarray, np.ndarray] | None = None,
    positive: set[str] | None = None,
    scale: str = "free",
) -> bool:
    """Canonical skeletons equal and (given points and starting constants) as many independent
    constants on each side."""
    try:
        p = canonical_skeleton(proposal, truth.variables, positive, scale)
        t = canonical_skeleton(truth, truth.variables, positive, scale)
    except Exception:  # sympy raises many unrelated types on odd trees: no structural verdict then
        return False
    if sympy.srepr(p) != sympy.srepr(t):
        return False
    if X is None or starts is None:
        return True
    rp = _rank(skeleton_family(proposal, scale)[0], X, starts[0])
    rt = _rank(skeleton_family(truth, scale)[0], X, starts[1])
    return rp is not None and rp == rt


# -- family --------------------------------------------------------------------------------------


def _box_probe(
    columns: Mapping[str, np.ndarray], names: Sequence[str], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    probe: dict[str, np.ndarray] = {}
    for k in names:
        data = np.asarray(columns[k], dtype=np.float64)
        lo, hi = float(np.min(data)), float(np.max(data))
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
    return probe


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
        with np.errstate(all="ignore"):
            return np.zeros(0), _relative_rms(program.evaluate(X), target)
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


def _values(program: Program, X: Mapping[str, np.ndarray], params: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = program.evaluate(X, params if program.n_params else None)
    return np.broadcast_to(np.asarray(y, dtype=np.float64), next(iter(X.values())).shape)


def _members(
    program: Program, center: np.ndarray, X: Mapping[str, np.ndarray], rng: np.random.Generator, count: int
) -> list[np.ndarray]:
    """Up to `count` perturbed constants near `center` (every constant moved, a zero one too)
    whose member of the family is finite on at least 90 % of the points."""
    out: list[np.ndarray] = []
    scale = 0.3
    for _ in range(MEMBER_TRIES * count):
        if len(out) == count:
            break
        step = rng.normal(0.0, scale, center.size) * np.maximum(np.abs(center), 0.1)
        member = center * np.exp(rng.uniform(-scale, scale, center.size)) + step
        if np.mean(np.isfinite(_values(program, X, member))) >= 0.9:
            out.append(member)
        else:
            scale /= 2
    return out


@dataclass(frozen=True)
class _Inclusion:
    ok: bool
    params: np.ndarray
    residual: float
    reason: str  # "fit": no constants reproduce it on the data; "probe": only inside the data


def _covers(
    family: Program,
    starts: Sequence[np.ndarray],
    member_of: Program,
    member: np.ndarray,
    fit_X: Mapping[str, np.ndarray],
    probe_X: Mapping[str, np.ndarray],
    rng: np.random.Generator,
) -> _Inclusion | None:
    """Whether some constants of `family` reproduce `member_of` at `member` (None: that member
    is not finite on enough points to tell)."""
    target = _values(member_of, fit_X, member)
    ok = np.isfinite(target)
    if ok.sum() < 10:
        return None
    X = {k: v[ok] for k, v in fit_X.items()}
    params, resid = refit(family, X, target[ok], starts, rng)
    if not resid <= FIT_TOL:
        return _Inclusion(False, params, resid, "fit")
    want = _values(member_of, probe_X, member)
    got = _values(family, probe_X, params)
    finite = np.isfinite(want)
    both = finite & np.isfinite(got)
    if both.sum() < max(10, MIN_SHARED * finite.sum()):
        return _Inclusion(False, params, resid, "probe")
    with np.errstate(all="ignore"):
        scale = math.sqrt(float(np.mean(want[both] ** 2))) or 1.0
        rel = np.abs(got[both] - want[both]) / np.maximum(np.abs(want[both]), 1e-9 * scale)
    return _Inclusion(bool(float(rel.max()) <= PROBE_TOL), params, resid, "probe")


def _fit_points(
    columns: Mapping[str, np.ndarray], truth: Program, center: np.ndarray, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    names = list(truth.variables)
    n = len(next(iter(columns.values())))
    rows = rng.permutation(n)
    data = {k: np.asarray(columns[k], dtype=np.float64)[rows] for k in names}
    ok = np.isfinite(_values(truth, data, center))
    if ok.sum() < 10:
        return None
    fit = {k: v[ok][:FIT_POINTS] for k, v in data.items()}
    probe = _box_probe(columns, names, rng)
    good = np.isfinite(_values(truth, probe, center))
    if good.sum() < 20:  # the truth is not defined beyond the data: probe with unused data rows
        rest = {k: v[ok][FIT_POINTS : FIT_POINTS + PROBE_POINTS] for k, v in data.items()}
        if len(next(iter(rest.values()))) < 10:
            rest = fit
        return fit, rest
    return fit, {k: v[good] for k, v in probe.items()}


def _truth_center(
    truth: Program,
    literals: list[float],
    columns: Mapping[str, np.ndarray],
    target: np.ndarray | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """The truth's constants: its literals' values, and for a template's named parameters the
    values that fit the problem's data best (ones without data)."""
    n_named = truth.n_params - len(literals)
    named = np.ones(n_named)
    if n_named and target is not None:
        X = {k: np.asarray(columns[k], dtype=np.float64)[:FIT_POINTS] for k in truth.variables}
        y = np.asarray(target, dtype=np.float64)[:FIT_POINTS]
        fixed = Program.from_ir(_with_literals(truth, n_named, literals), truth.variables, n_named)
        params, resid = refit(fixed, X, y, [named], rng)
        if math.isfinite(resid) and np.isfinite(params).all():
            named = params
    return np.concatenate([named, np.asarray(literals, dtype=np.float64)])


def _with_literals(promoted: Program, n_named: int, literals: list[float]) -> Node:
    memo: dict[int, Node] = {}
    for node in dag_nodes(promoted.root):
        if isinstance(node, Param) and node.index >= n_named:
            memo[id(node)] = Num(literals[node.index - n_named])
        elif isinstance(node, Op):
            memo[id(node)] = Op(node.name, tuple(memo[id(a)] for a in node.args))
        else:
            memo[id(node)] = node
    return memo[id(promoted.root)]


def symbolic_match(
    proposal: Program | None,
    truth: Program | None,
    columns: Mapping[str, np.ndarray],
    *,
    params: Sequence[float] | None = None,
    seed: int = 0,
    target: np.ndarray | None = None,
    scale: str = "free",
) -> SymbolicVerdict:
    """The verdict for one proposal (with optional already-fitted `params`) against the ground
    truth, on the domain given by `columns` (input name -> values, e.g. all of a problem's rows;
    `target`: the output on those rows, which a template truth's named parameters are fitted to;
    `scale`: free or strict, the module's note)."""
    if truth is None:
        return NOT_APPLICABLE
    if proposal is None:
        return SymbolicVerdict(match=False, method="no_proposal")
    rng = np.random.default_rng([seed, 0x5EB])
    t_skeleton, t_literals = promote_constants(truth)
    t_family, p_family = with_scale(t_skeleton, scale), skeleton_family(proposal, scale)[0]
    p_literals = promote_constants(proposal)[1]
    factor = [1.0] if scale == "free" else []
    t_center = np.append(_truth_center(t_skeleton, t_literals, columns, target, rng), factor)
    given = params if params is not None else np.ones(proposal.n_params)
    p_start = np.array([*given, *p_literals, *factor])
    if len(p_start) != p_family.n_params:
        p_start = np.ones(p_family.n_params)
    points = _fit_points(columns, t_family, t_center, rng)
    if points is None:
        return SymbolicVerdict(
            match=None, method="no_domain", detail="the ground truth is not finite on the data"
        )
    fit_X, probe_X = points
    numeric = _family_verdict(t_family, t_center, p_family, p_start, fit_X, probe_X, rng)
    if numeric.match is True:
        return numeric
    # The numbers may have missed (a fit that found no optimum): equal canonical skeletons decide.
    positive = {k for k, v in columns.items() if len(v) and float(np.min(v)) > 0}
    if same_structure(proposal, truth, fit_X, (p_start, t_center), positive, scale):
        return SymbolicVerdict(match=True, method="structure", residual=0.0)
    return numeric


def _family_verdict(
    t_family: Program,
    t_center: np.ndarray,
    p_family: Program,
    p_start: np.ndarray,
    fit_X: Mapping[str, np.ndarray],
    probe_X: Mapping[str, np.ndarray],
    rng: np.random.Generator,
) -> SymbolicVerdict:
    """The numeric test of the module's note: each family holds the other's members."""
    # The proposal's family holds the truth (at its constants and at a perturbed draw)...
    truth_members = (
        [t_center, *_members(t_family, t_center, fit_X, rng, 1)] if t_family.n_params else [t_center]
    )
    fitted: np.ndarray | None = None
    residual = 0.0
    for member in truth_members:
        inc = _covers(
            p_family,
            [p_start] if fitted is None else [fitted, p_start],
            t_family,
            member,
            fit_X,
            probe_X,
            rng,
        )
        if inc is None:
            continue
        residual = max(residual, inc.residual)
        if not inc.ok:
            detail = (
                "no choice of the proposal's constants gives the ground truth"
                if inc.reason == "fit"
                else "the proposal fits the ground truth on the data but departs from it outside "
                "(an approximation)"
            )
            return SymbolicVerdict(match=False, method="no_match", residual=inc.residual, detail=detail)
        fitted = inc.params if fitted is None else fitted
    if fitted is None:
        return SymbolicVerdict(
            match=None,
            method="no_domain",
            detail="no member of the ground truth's family is finite on the data",
        )
    # ...and the truth's family holds the proposal's (a superset fails here: its extra terms).
    if p_family.n_params:
        proposal_members = _members(p_family, fitted, fit_X, rng, 2)
        if not proposal_members:
            return SymbolicVerdict(
                match=None,
                method="no_member",
                residual=residual,
                detail="no member of the proposal's family beside the fitted one is finite on the data",
            )
    else:
        proposal_members = [np.zeros(0)]
    for member in proposal_members:
        inc = _covers(t_family, [t_center], p_family, member, fit_X, probe_X, rng)
        if inc is not None and not inc.ok:
            return SymbolicVerdict(
                match=False,
                method="no_match",
                residual=residual,
                detail="the proposal's family is larger than the ground truth's (a superset: other "
                "values of its constants leave the truth's form)",
            )
    return SymbolicVerdict(match=True, method="family", residual=residual)
