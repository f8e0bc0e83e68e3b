"""Builds the adversarial labelled pairs (issue #48): the cases the first builder lacked.

    python tests/srbench/data/build_adversarial_pairs.py ../shared/data/feynman/FeynmanEquations.csv

Every label is the paper's sentence applied by hand, fixed here per category before any judge
scored a pair (LLM-SRBench §2.3: the judge compares "the symbolic form of the predicted hypothesis
versus the ground-truth equation after removing parameters and constants", i.e. it asks whether
values of the hypothesis's constants exist that make it the ground truth), with the rule
docs/srbench.md states: a constant either side *writes* is free, one neither side writes is not
invented.

- function_swap (no): one function for its sibling -- sin/cos, arcsin/arccos, sinh/cosh, tanh for
  a saturating rational or arctan, exp for a power -- where no written constant turns one into the
  other (no phase in the argument, no additive constant beside it);
- shift_written (yes): the same swap where a written constant does (`sin(w*t + 0.4)` and
  `cos(w*t + c)`; `2*pi - arccos(z)` and `c - arcsin(z)`: arccos(z) = pi/2 - arcsin(z));
- narrow_approximation (no): a truncated series, a Pade approximant, a small-angle form or a
  linearisation, on a domain narrow enough that it is accurate there;
- narrow_domain (yes): the truth itself, its constants elsewhere, on those same narrow domains;
- float_exponent (yes): PySR-style floats, every exponent within a relative 1e-3 of the truth's;
- exponent_value (no): one exponent 0.5-3 % off the truth's;
- rows_on_line (yes): a correct rewrite of a material-science truth whose rows lie on the line
  T = 273 + 500*epsilon (as in the release);
- line_only (no): a form equal to that truth on the line only (T or epsilon written through the
  other).

A third, chosen by the same fixed hash of (truth, proposal) as the first builder's, is
`adversarial_heldout.jsonl`, scored once when the checker is final; the rest is
`adversarial.jsonl`.
"""

# ruff: noqa: B023  (each `add` closure is called inside the iteration that defines it)
from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_judge_pairs import (
    MAX_CHARS,
    OUT,
    PLACED,
    RANGES,
    _fmt,
    _join,
    _limit,
    _render,
    _renumber,
    _synth_truths,
    _transform_truths,
)

LABELS = {
    "function_swap": False,
    "narrow_approximation": False,
    "exponent_value": False,
    "line_only": False,
    "shift_written": True,
    "narrow_domain": True,
    "float_exponent": True,
    "rows_on_line": True,
}
LINE = {"T": ["epsilon", 273.0, 500.0]}  # T = 273 + 500*epsilon on every row
LINE_RANGES = {"epsilon": [0.01, 0.3], "T": [278.0, 423.0]}
FUNCS = {"arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan, "Abs": sympy.Abs, "pi": sympy.pi}
BACK = re.compile(r"\ba(sin|cos|tan|sinh|cosh|tanh)\(")


def txt(expr: Any) -> str:
    return BACK.sub(lambda m: f"arc{m.group(1)}(", sympy.sstr(expr))


def parse(text: str, names: list[str]) -> Any:
    syms = {k: sympy.Symbol(k, real=True) for k in names}
    return sympy.sympify(text, locals={**syms, **FUNCS})


def _numeric(a: Any, b: Any, ranges: dict[str, list[float]], n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    names = sorted(ranges)
    syms = [sympy.Symbol(k, real=True) for k in names]
    rng = np.random.default_rng(0)
    pts = [rng.uniform(lo, hi, n) for lo, hi in (ranges[k] for k in names)]
    with np.errstate(all="ignore"):
        fa = sympy.lambdify(syms, a, "numpy")(*pts)
        fb = sympy.lambdify(syms, b, "numpy")(*pts)
    return (
        np.broadcast_to(np.asarray(fa, dtype=complex), (n,)),
        np.broadcast_to(np.asarray(fb, dtype=complex), (n,)),
    )


def differs(a: Any, b: Any, ranges: dict[str, list[float]]) -> bool:
    """Whether two expressions are different functions (checked on a range ten times wider on
    each variable's side: an approximation is meant to agree on the pair's own)."""
    wide = {k: ([lo / 10, hi * 10] if lo > 0 else [lo * 10, hi * 10]) for k, (lo, hi) in ranges.items()}
    fa, fb = _numeric(a, b, wide)
    ok = np.isfinite(fa) & np.isfinite(fb)
    if ok.sum() < 5:
        return False
    return bool(np.max(np.abs(fa[ok] - fb[ok]) / np.maximum(np.abs(fa[ok]), 1e-12)) > 1e-3)


def finite_on(expr: Any, ranges: dict[str, list[float]]) -> bool:
    fa, _ = _numeric(expr, expr, ranges)
    return bool(np.mean(np.isfinite(fa) & (np.abs(fa.imag) < 1e-9 * (1 + np.abs(fa.real)))) >= 0.9)


# -- labels of a swap, by the identities that link the two functions -----------------------------


def _paths(expr: Any, target: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if expr == target:
        yield path
        return
    for a in expr.args:
        yield from _paths(a, target, (*path, expr))


def _has_constant_term(add: Any) -> bool:
    return any(not t.free_symbols for t in sympy.Add.make_args(add))


def _partnered(expr: Any, occ: Any) -> bool | None:
    """Whether a shift of `occ` by a constant (arccos = pi/2 - arcsin) is absorbed by a written
    constant: `occ` times its co-factor sits in a sum that also holds a number times that
    co-factor. None where the occurrence is under a power or a function (not labelled)."""
    verdicts = set()
    for path in _paths(expr, occ):
        node, cofactor, verdict = occ, sympy.Integer(1), False
        for anc in reversed(path):
            if anc.is_Mul:
                cofactor *= sympy.Mul(*[a for a in anc.args if a != node])
                node = anc
                continue
            if anc.is_Add:
                verdict = any(t != node and not (t / cofactor).free_symbols for t in sympy.Add.make_args(anc))
            else:
                return None
            break
        verdicts.add(verdict)
    return verdicts.pop() if len(verdicts) == 1 else None


def _trig_args(expr: Any) -> list[Any]:
    return [f.args[0] for f in expr.atoms(sympy.sin, sympy.cos)]


def _even_power(expr: Any, occ: Any) -> bool:
    return any(p.base == occ and p.exp.is_even for p in expr.atoms(sympy.Pow))


SWAPS: list[tuple[Any, Callable[[Any], Any], str]] = [
    (sympy.sin, sympy.cos, "sin -> cos"),
    (sympy.cos, sympy.sin, "cos -> sin"),
    (sympy.asin, sympy.acos, "arcsin -> arccos"),
    (sympy.acos, sympy.asin, "arccos -> arcsin"),
    (sympy.sinh, sympy.cosh, "sinh -> cosh"),
    (sympy.cosh, sympy.sinh, "cosh -> sinh"),
    (sympy.tanh, lambda z: z / (1 + sympy.Abs(z)), "tanh -> z/(1 + |z|)"),
    (sympy.tanh, lambda z: z / sympy.sqrt(1 + z**2), "tanh -> z/sqrt(1 + z**2)"),
    (sympy.tanh, sympy.atan, "tanh -> arctan"),
]


def swap_label(expr: Any, occ: Any, name: str) -> bool | None:
    """The label of replacing `occ` (a function application of `expr`) by its sibling: True
    where a written constant links the two, False where none does, None where not labelled here
    (an even power: sin**2 = 1 - cos**2 needs the partner analysis of the arcsin case)."""
    if _even_power(expr, occ):
        return None
    if name.startswith(("sin", "cos")):
        phased = [z for z in _trig_args(expr) if z.is_Add and _has_constant_term(z)]
        if not phased:
            return False
        if phased == [occ.args[0]] and len(_trig_args(expr)) == 1:
            return True  # the phase is written: cos(z + c) = sin(z + c + pi/2)
        return None
    if name.startswith(("arcsin", "arccos")):
        return _partnered(expr, occ)
    return False  # sinh/cosh, tanh/rational/arctan: no constant links them


def swaps(expr: Any) -> Iterator[tuple[Any, bool, str]]:
    for func, other, name in SWAPS:
        occs = sorted(expr.atoms(func), key=sympy.srepr)
        if not occs:
            continue
        labels = [swap_label(expr, o, name) for o in occs]
        for o, label in zip(occs, labels, strict=True):
            if label is not None:
                yield expr.xreplace({o: other(o.args[0])}), label, f"{name} ({txt(o)})"
        first = labels[0]
        if len(occs) > 1 and first is not None and all(label is first for label in labels):
            yield expr.xreplace({o: other(o.args[0]) for o in occs}), first, f"{name} (every one)"


def exp_to_power(expr: Any) -> Iterator[tuple[Any, str]]:
    """exp(k*w) -> w**k (no constant turns one into the other); not where the argument holds a log
    (exp(k*log(w)) is w**k)."""
    for occ in sorted(expr.atoms(sympy.exp), key=sympy.srepr):
        z = occ.args[0]
        if z.has(sympy.log) or len(z.free_symbols) != 1 or z.is_Add:
            continue
        (w,) = z.free_symbols
        k = z / w
        if k.free_symbols or not k.is_number:
            continue
        yield expr.xreplace({occ: w**k}), f"exp({txt(z)}) -> {txt(w)}**{txt(k)}"


# -- floats, exponents ---------------------------------------------------------------------------


def _rebuild(expr: Any, new: dict[Any, Any]) -> Any:
    """`expr` with each power in `new` given its new exponent, inner ones first."""
    if not expr.args:
        return expr
    args = [_rebuild(a, new) for a in expr.args]
    if expr in new:
        return sympy.Pow(args[0], new[expr], evaluate=False)
    return expr.func(*args)


def _positive(base: Any, ranges: dict[str, list[float]]) -> bool:
    values, _ = _numeric(base, base, ranges)
    finite = np.isfinite(values)
    return bool(finite.any() and (values[finite].real > 0).all())


def perturb_exponents(
    expr: Any, rng: np.random.Generator, lo: float, hi: float, one: bool, ranges: dict[str, list[float]]
) -> Any:
    """Exponents of variable-bearing powers (not -1, a division) moved by a relative lo..hi, each
    (or, `one`, only the first); every number printed with 6 digits, as PySR prints them. Only
    powers of a base positive on the ranges (PySR's `x**2.9989` of a negative x is nan: no search
    returns it)."""
    pows = sorted(
        [
            p
            for p in expr.atoms(sympy.Pow)
            if p.exp.is_number and p.exp != -1 and p.base.free_symbols and _positive(p.base, ranges)
        ],
        key=sympy.srepr,
    )
    if not pows:
        return None
    new = {}
    for p in pows[:1] if one else pows:
        e = float(p.exp)
        moved = e * (1 + float(rng.choice([-1, 1])) * float(rng.uniform(lo, hi)))
        new[p] = sympy.Float(f"{moved:.6g}")
    out = _rebuild(expr, new)
    return out.xreplace({f: sympy.Float(f"{float(f):.6g}") for f in out.atoms(sympy.Float)})


# -- narrow domains ------------------------------------------------------------------------------


def narrowed(ranges: dict[str, list[float]], var: str, rel: float) -> dict[str, list[float]]:
    lo, hi = ranges[var]
    mid = (lo + hi) / 2
    if lo <= 0 <= hi or mid == 0:
        mid = hi if abs(hi) >= abs(lo) else lo
    half = abs(mid) * rel
    out = dict(ranges)
    out[var] = [float(f"{mid - half:.6g}"), float(f"{mid + half:.6g}")]
    return out


def series_in(expr: Any, var: Any, x0: float, order: int) -> Any:
    try:
        with _limit(5):
            poly = sympy.series(expr, var, sympy.Float(x0), order + 1).removeO()
            poly = sympy.N(sympy.expand(poly), 8)
    except Exception:
        return None
    if poly.has(sympy.Order) or poly.has(sympy.zoo) or poly.has(sympy.nan) or var not in poly.free_symbols:
        return None
    return poly


def named_constants(expr: Any) -> Any:
    """Every number but the exponents and +-1 a named constant c0, c1, ... (a reparametrisation)."""
    exps = {p.exp for p in expr.atoms(sympy.Pow)}
    nums = sorted(
        {n for n in expr.atoms(sympy.Number) if n not in exps and abs(n) != 1 and n != 0},
        key=lambda n: float(n),
    )
    return expr.xreplace({n: sympy.Symbol(f"c{i}") for i, n in enumerate(nums)})


class Pairs:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(
        self,
        truth: str,
        proposal: Any,
        category: str,
        ranges: dict[str, list[float]],
        source: str,
        note: str,
        line: dict[str, list[Any]] | None = None,
    ) -> None:
        text = proposal if isinstance(proposal, str) else txt(proposal)
        row: dict[str, Any] = {
            "truth": truth,
            "proposal": text,
            "category": category,
            "label": LABELS[category],
            "ranges": ranges,
            "source": source,
            "note": note,
        }
        if line:
            row["line"] = line
        self.rows.append(row)


def truth_pairs(out: Pairs, truth: str, ranges: dict[str, list[float]], source: str, rng: Any) -> None:
    """Swaps, floats and narrow domains of one truth."""
    names = list(ranges)
    expr = parse(truth, names)
    for proposal, label, note in swaps(expr):
        if proposal.free_symbols == expr.free_symbols and differs(expr, proposal, ranges):
            out.add(truth, proposal, "shift_written" if label else "function_swap", ranges, source, note)
    for proposal, note in exp_to_power(expr):
        if differs(expr, proposal, ranges):
            out.add(truth, proposal, "function_swap", ranges, source, note)
    floats = perturb_exponents(expr, rng, 1e-4, 8e-4, one=False, ranges=ranges)
    if floats is not None:
        out.add(truth, floats, "float_exponent", ranges, source, "exponents within 1e-3 (PySR floats)")
    off = perturb_exponents(expr, rng, 5e-3, 3e-2, one=True, ranges=ranges)
    if off is not None and differs(expr, off, ranges):
        out.add(truth, off, "exponent_value", ranges, source, "one exponent 0.5-3 % off")
    # a narrow domain in one variable that enters a function: a series there, and the truth
    inner = sorted(
        {
            s
            for f in expr.atoms(sympy.Function, sympy.Pow)
            if not (isinstance(f, sympy.Pow) and f.exp.is_Integer and f.exp > 0)
            for s in f.free_symbols
        },
        key=str,
    )
    if not inner:
        return
    w = inner[int(rng.integers(len(inner)))]
    for rel, order in ((0.005, 2), (0.03, 4)):
        box = narrowed(ranges, str(w), rel)
        x0 = (box[str(w)][0] + box[str(w)][1]) / 2
        poly = series_in(expr, w, x0, order)
        if (
            poly is None
            or len(txt(poly)) > MAX_CHARS
            or not finite_on(expr, box)
            or not differs(expr, poly, box)
        ):
            continue
        out.add(truth, poly, "narrow_approximation", box, source, f"order-{order} series in {w} on ±{rel:g}")
        named = named_constants(expr)
        named = named if named != expr else sympy.Symbol("c0") * expr
        out.add(truth, named, "narrow_domain", box, source, f"constants named, {w} on ±{rel:g}")
        break


# -- rows on a line (material science as released) -------------------------------------------------


def line_pairs(out: Pairs, rng: np.random.Generator, per_domain: int) -> None:
    """Material-science truths scored on rows with T = 273 + 500*epsilon: correct rewrites (yes)
    and forms that hold on the line only (no)."""
    eps, T = sympy.Symbol("epsilon", real=True), sympy.Symbol("T", real=True)
    for domain, terms in _synth_truths(rng, per_domain):
        if domain != "matsci":
            continue
        truth = _join([_render(t.template, v) for t, v in terms])
        expr = parse(truth, ["epsilon", "T"])

        def add(proposal: Any, category: str, note: str) -> None:
            out.add(truth, proposal, category, LINE_RANGES, "matsci_line", note, LINE)

        add(named_constants(expr), "rows_on_line", "constants named")
        placed = _renumber(
            [PLACED[t.tag].format(n=_fmt(v["n"])) if "n" in v else PLACED[t.tag] for t, v in terms]
        )
        add(_join(placed), "rows_on_line", "constants moved, combined or into arguments")
        floats = perturb_exponents(expr, rng, 1e-4, 8e-4, one=False, ranges=LINE_RANGES)
        if floats is not None:
            add(floats, "rows_on_line", "PySR floats")
        if T in expr.free_symbols and eps in expr.free_symbols:
            add(
                sympy.expand(expr.xreplace({T: 273 + 500 * eps})),
                "line_only",
                "T written as 273 + 500*epsilon",
            )
            add(
                sympy.expand(expr.xreplace({eps: (T - 273) / 500})),
                "line_only",
                "epsilon written as (T - 273)/500",
            )


# -- by hand: the review's cases and the approximations physics uses -----------------------------

X1 = {"x": [0.01, 0.1]}
REL_SMALL = {"v": [1.0, 10.0], "c": [1000.0, 3000.0]}
OSC = {"t": [0.0, 20.0], "x": [-1.5, 1.5], "v": [-1.0, 1.0]}
HAND: list[tuple[str, str, str, dict[str, list[float]], str]] = [
    # function swaps no written constant links
    ("sin(theta)*cos(theta)", "c*sin(theta)**2", "function_swap", {"theta": [0.1, 1.4]}, "a factor swapped"),
    ("cos(w*t)**2", "cos(w*t)*sin(w*t)", "function_swap", {"w": [0.5, 2.0], "t": [0.0, 10.0]}, "a factor"),
    (
        "sin(theta1)/sin(theta2)",
        "cos(theta1)/cos(theta2)",
        "function_swap",
        {"theta1": [0.1, 1.2], "theta2": [0.1, 1.2]},
        "Snell, both",
    ),
    (
        "d*n*sin(theta)",
        "d*n*cos(theta)",
        "function_swap",
        {"d": [2.0, 5.0], "n": [1.0, 5.0], "theta": [0.06, 0.64]},
        "grating",
    ),
    (
        "arcsin(tau/(F*r))",
        "arccos(tau/(F*r))",
        "function_swap",
        {"tau": [0.1, 1.0], "F": [1.0, 2.0], "r": [1.0, 2.0]},
        "an angle",
    ),
    ("-x - 0.1*v + 0.3*sin(t)", "c0*x + c1*v + c2*cos(t)", "function_swap", OSC, "the forcing term"),
    ("F*sin(w*t)", "c0*cos(c1*t)", "function_swap", {"t": [0.0, 10.0]}, "sin vs cos, no phase written"),
    ("sin(x)**2", "cos(x)**2", "function_swap", {"x": [-2.0, 2.0]}, "squares, no constant written"),
    ("sin(x)**2*y", "c0*cos(c1*x)**2*y", "function_swap", {"x": [0.2, 2.0], "y": [0.5, 3.0]}, "squares"),
    ("sinh(x)", "cosh(x)", "function_swap", {"x": [3.0, 6.0]}, "sinh vs cosh"),
    ("sinh(x)*y", "c0*cosh(c1*x)*y", "function_swap", {"x": [4.0, 8.0], "y": [0.5, 3.0]}, "sinh vs cosh"),
    ("cosh(x)", "c0*exp(c1*x)", "function_swap", {"x": [6.0, 10.0]}, "cosh vs one exponential"),
    ("tanh(x)", "x/(1 + abs(x))", "function_swap", {"x": [0.01, 0.3]}, "a saturating rational"),
    ("tanh(x)", "c0*x/sqrt(1 + c1*x**2)", "function_swap", {"x": [0.5, 3.0]}, "a saturating rational"),
    ("tanh(x)", "c0*x/(c1 + x)", "function_swap", {"x": [0.5, 3.0]}, "Michaelis-Menten for tanh"),
    (
        "A*x/(K + x)",
        "c0*tanh(c1*x)",
        "function_swap",
        {"A": [1.0, 2.0], "K": [1.0, 2.0], "x": [0.1, 5.0]},
        "tanh for Michaelis-Menten",
    ),
    ("arctan(x)", "tanh(x)", "function_swap", {"x": [0.01, 0.1]}, "arctan vs tanh"),
    ("exp(-x)", "(1 + x)**c0", "function_swap", {"x": [0.001, 0.01]}, "exp vs a power"),
    ("exp(-x)", "c0*x**c1", "function_swap", {"x": [1.0, 1.1]}, "exp vs a power"),
    ("exp(-1000/T)", "c0*T**c1", "function_swap", {"T": [300.0, 310.0]}, "Arrhenius vs a power law"),
    ("x*sin(y)", "x*cos(y) + c0", "function_swap", {"x": [0.5, 3.0], "y": [0.1, 1.5]}, "a constant beside"),
    # a written constant links them
    ("F*sin(2*t)", "c0*sin(c1*t + c2)", "shift_written", {"t": [0.0, 10.0]}, "a fitted phase"),
    ("sin(2*t + 0.5)", "cos(2*t)", "shift_written", {"t": [0.0, 10.0]}, "the truth's phase"),
    ("F*sin(w*t + 0.4)", "c0*cos(c1*t + c2)", "shift_written", {"t": [0.0, 10.0]}, "both phased"),
    ("A*cos(w*t - 0.3)", "c0*sin(c1*t)", "shift_written", {"t": [0.0, 10.0]}, "the truth's phase"),
    ("cos(x + 1)", "sin(x + c0)", "shift_written", {"x": [-2.0, 2.0]}, "phases"),
    ("2*pi - arccos(z)", "c0 - arcsin(z)", "shift_written", {"z": [-0.9, 0.9]}, "arccos = pi/2 - arcsin"),
    (
        "pi - arcsin(sin(x)/y)",
        "c0 + arccos(sin(x)/y)",
        "shift_written",
        {"x": [0.1, 1.2], "y": [1.5, 3.0]},
        "arcsin = pi/2 - arccos",
    ),
    ("sin(x)**2 + 0.5", "c0*cos(x)**2 + c1", "shift_written", {"x": [-2.0, 2.0]}, "sin**2 = 1 - cos**2"),
    # approximations on a narrow domain
    ("sin(x)", "x - x**3/6 + x**5/120", "narrow_approximation", X1, "Taylor"),
    ("sin(x)", "c0*x + c1*x**3 + c2*x**5 + c3*x**7", "narrow_approximation", X1, "Taylor, free"),
    ("exp(x)", "1 + x + x**2/2 + c0*x**3 + c1*x**4", "narrow_approximation", X1, "Taylor, partly free"),
    ("1/sqrt(1 - v**2/c**2)", "1 + c0*v**2/c**2 + c1*v**4/c**4", "narrow_approximation", REL_SMALL, "v << c"),
    (
        "m*sqrt(1 - v**2/c**2)",
        "m*(1 - 0.5*v**2/c**2 - 0.125*v**4/c**4)",
        "narrow_approximation",
        {"m": [1.0, 5.0], **REL_SMALL},
        "v << c",
    ),
    (
        "m/sqrt(1 - v**2/c**2)",
        "m + c0*m*v**2/c**2",
        "narrow_approximation",
        {"m": [1.0, 5.0], "v": [0.1, 1.0], "c": [3000.0, 10000.0]},
        "kinetic energy limit",
    ),
    (
        "d*n*sin(theta)",
        "c0*d*n*theta",
        "narrow_approximation",
        {"d": [2.0, 5.0], "n": [1.0, 5.0], "theta": [0.0001, 0.001]},
        "small angle",
    ),
    (
        "sin(theta1)/sin(theta2)",
        "theta1/theta2",
        "narrow_approximation",
        {"theta1": [0.001, 0.01], "theta2": [0.001, 0.01]},
        "small angle",
    ),
    (
        "L*(1 - cos(theta))",
        "c0*L*theta**2",
        "narrow_approximation",
        {"L": [1.0, 2.0], "theta": [0.001, 0.01]},
        "small angle",
    ),
    ("tan(x)", "x + x**3/3 + c0*x**5", "narrow_approximation", {"x": [0.01, 0.05]}, "Taylor"),
    ("exp(x)", "(1 + x/2 + x**2/12)/(1 - x/2 + x**2/12)", "narrow_approximation", X1, "Pade [2/2]"),
    ("exp(x)", "(c0 + c1*x + c2*x**2)/(1 + c3*x + c4*x**2)", "narrow_approximation", X1, "Pade, free"),
    ("log(1 + x)", "x*(6 + x)/(6 + 4*x)", "narrow_approximation", {"x": [0.001, 0.05]}, "Pade"),
    (
        "log(1 + x)",
        "(c0*x + c1*x**2)/(1 + c2*x + c3*x**2)",
        "narrow_approximation",
        {"x": [0.001, 0.05]},
        "Pade, free",
    ),
    ("tanh(x)", "x*(15 + x**2)/(15 + 6*x**2)", "narrow_approximation", {"x": [0.01, 0.2]}, "Pade"),
    ("arctan(x)", "x*(15 + 4*x**2)/(15 + 9*x**2)", "narrow_approximation", {"x": [0.01, 0.2]}, "Pade"),
    ("sqrt(1 + x)", "1 + x/2 - x**2/8 + c0*x**3", "narrow_approximation", {"x": [0.001, 0.02]}, "Taylor"),
    (
        "exp(-1000/T)",
        "c0 + c1*T + c2*T**2 + c3*T**3",
        "narrow_approximation",
        {"T": [300.0, 301.0]},
        "a cubic in T",
    ),
    (
        "n*exp(-m*g*x/(k*T))",
        "n*(1 - m*g*x/(k*T) + c0*m**2*g**2*x**2/(k**2*T**2))",
        "narrow_approximation",
        {
            "n": [1.0, 5.0],
            "m": [1.0, 5.0],
            "g": [1.0, 5.0],
            "x": [0.0001, 0.001],
            "k": [1.0, 5.0],
            "T": [1.0, 5.0],
        },
        "barometric, linearised",
    ),
    ("1/(exp(x) - 1)", "exp(-x)", "narrow_approximation", {"x": [20.0, 30.0]}, "Wien"),
    ("1/(exp(x) - 1)", "1/x - 1/2 + x/12", "narrow_approximation", {"x": [0.001, 0.01]}, "Rayleigh-Jeans"),
    ("cosh(x)", "1 + x**2/2 + c0*x**4", "narrow_approximation", X1, "Taylor"),
    ("sinh(x)", "c0*exp(x)", "narrow_approximation", {"x": [10.0, 15.0]}, "large argument"),
    ("log(x + 1)", "log(x)", "narrow_approximation", {"x": [100000.0, 1000000.0]}, "large argument"),
    (
        "sqrt(x**2 + y**2)",
        "x + y**2/(2*x)",
        "narrow_approximation",
        {"x": [100.0, 200.0], "y": [0.1, 1.0]},
        "y << x",
    ),
    ("x/(1 + x)", "x - x**2 + x**3", "narrow_approximation", {"x": [0.001, 0.01]}, "geometric series"),
    ("sqrt(1 + x)", "1 + c0*x", "narrow_approximation", {"x": [0.00001, 0.0001]}, "linearised"),
    ("arcsin(x)", "x + x**3/6 + 3*x**5/40", "narrow_approximation", X1, "Taylor"),
    # the same narrow domains, correct forms
    ("sin(x)", "c0*sin(c1*x)", "narrow_domain", X1, "constants"),
    ("exp(x)", "c0*exp(c1*x)", "narrow_domain", X1, "constants"),
    ("1/sqrt(1 - v**2/c**2)", "c0/sqrt(1 + c1*v**2/c**2)", "narrow_domain", REL_SMALL, "constants"),
    (
        "d*n*sin(theta)",
        "c0*d*n*sin(theta)",
        "narrow_domain",
        {"d": [2.0, 5.0], "n": [1.0, 5.0], "theta": [0.0001, 0.001]},
        "constants",
    ),
    ("tan(x)", "sin(x)/cos(x)", "narrow_domain", {"x": [0.01, 0.05]}, "identity"),
    ("log(1 + x)", "c0*log(1 + c1*x)", "narrow_domain", {"x": [0.001, 0.05]}, "constants"),
    ("tanh(x)", "(exp(2*x) - 1)/(exp(2*x) + 1)", "narrow_domain", {"x": [0.01, 0.2]}, "identity"),
    ("1/(exp(x) - 1)", "c0/(exp(c1*x) + c2)", "narrow_domain", {"x": [20.0, 30.0]}, "constants"),
    ("log(x + 1)", "c0*log(c1*x + c2)", "narrow_domain", {"x": [100000.0, 1000000.0]}, "constants"),
    (
        "sqrt(x**2 + y**2)",
        "c0*sqrt(x**2 + c1*y**2)",
        "narrow_domain",
        {"x": [100.0, 200.0], "y": [0.1, 1.0]},
        "constants",
    ),
    ("exp(-1000/T)", "c0*exp(c1/T)", "narrow_domain", {"T": [300.0, 301.0]}, "constants"),
    (
        "L*(1 - cos(theta))",
        "c0*L*sin(theta/2)**2",
        "narrow_domain",
        {"L": [1.0, 2.0], "theta": [0.001, 0.01]},
        "identity",
    ),
    ("sinh(x)", "c0*(exp(x) - exp(-x))", "narrow_domain", {"x": [10.0, 15.0]}, "identity"),
    # PySR floats
    ("A**2", "A**2.0002", "float_exponent", {"A": [0.5, 3.0]}, "PySR"),
    ("A**2*B", "1.0001*A**2.0002*B**0.99995", "float_exponent", {"A": [0.5, 3.0], "B": [0.5, 3.0]}, "PySR"),
    ("0.2*A**1.5", "0.2003*A**1.50012", "float_exponent", {"A": [0.1, 2.0]}, "PySR"),
    ("x**0.333333", "x**0.33345", "float_exponent", {"x": [5.0, 100.0]}, "PySR"),
    ("sqrt(x)", "x**0.50031", "float_exponent", {"x": [0.5, 3.0]}, "PySR"),
    ("1/x**2", "0.99*x**-2.0013", "float_exponent", {"x": [0.5, 3.0]}, "PySR"),
    ("exp(-0.5*x**2)", "exp(-0.4999*x**2.0009)", "float_exponent", {"x": [0.1, 2.0]}, "PySR"),
    ("A**2", "A**2.01", "exponent_value", {"A": [0.5, 3.0]}, "0.5 % off"),
    ("sqrt(x)", "x**0.51", "exponent_value", {"x": [0.5, 3.0]}, "2 % off"),
    ("x**0.333333", "x**0.335", "exponent_value", {"x": [5.0, 100.0]}, "0.5 % off"),
    # rows on the line, by hand
    ("120*epsilon - 0.3*epsilon*(T - 290)", "c0*epsilon + c1*epsilon*T", "rows_on_line", LINE_RANGES, "line"),
    ("120*epsilon - 0.3*epsilon*(T - 290)", "c0*epsilon + c1*epsilon**2", "line_only", LINE_RANGES, "line"),
]


def hand_pairs(out: Pairs) -> None:
    for truth, proposal, category, ranges, note in HAND:
        line = LINE if ranges is LINE_RANGES else None
        out.add(truth, proposal, category, ranges, "hand", note, line)


def _keys(path: Path) -> set[tuple[str, str]]:
    if not path.is_file():
        return set()
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["truth"], r["proposal"]) for r in rows}


def _parses(row: dict[str, Any]) -> bool:
    from pytest_lsrb.equations import EquationError, parse_expression

    try:
        for text in (row["truth"], row["proposal"]):
            parse_expression(text, list(row["ranges"]), free_params=True)
    except EquationError:
        return False
    return True


def main(csv: Path) -> None:
    rng = np.random.default_rng(2048)
    out = Pairs()
    hand_pairs(out)
    for domain, terms in _synth_truths(rng, per_domain=8):
        truth_pairs(out, _join([_render(t.template, v) for t, v in terms]), RANGES[domain], domain, rng)
    line_pairs(out, rng, per_domain=10)
    for item in _transform_truths(csv):
        truth_pairs(out, item["truth"], item["ranges"], "lsr_transform", rng)
    seen = set().union(*(_keys(OUT / f"{n}.jsonl") for n in ("dev", "heldout", "fresh")))
    dev: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for row in out.rows:
        key = (row["truth"], row["proposal"])
        if key in seen or row["truth"] == row["proposal"] or len(row["proposal"]) > MAX_CHARS:
            continue
        if not _parses(row):
            continue
        seen.add(key)
        digest = hashlib.sha256("\x00".join(key).encode()).digest()
        (held if digest[0] % 3 == 0 else dev).append(row)
    for name, rows in (("adversarial.jsonl", dev), ("adversarial_heldout.jsonl", held)):
        with (OUT / name).open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
    print(f"{len(dev)} adversarial dev, {len(held)} held-out pairs -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
