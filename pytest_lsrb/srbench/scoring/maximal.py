"""An equation's *maximal parametrisation*: its form with every constant it writes free.

The paper compares forms "after removing parameters and constants" (LLM-SRBench §2.3): values of
the hypothesis's constants must exist that make it the ground truth. Here that is one rewrite,
applied to both sides alike, with one rule: a constant either side *writes* is free, a constant
neither side writes is not invented (`Written` says what a side writes; docs/srbench.md):

- every additive term, at the top and inside any sum, gets its own free coefficient (the implicit
  1, -1 or 2 included: `x - y` is `c0*x + c1*y`); constant factors of a term fold into it;
- a sum's constant term is a term: free in value, but it is there or not (`sqrt(1 - u)` and
  `sqrt(u)` differ: `sqrt(c + u)` fitted with c ~ 0 is refused, as a term fitted to ~0 is),
  unless what it adds is a constant the top's free additive constant holds anyway
  (`c1*(c2 + exp(u)) + c3`). At the top it is free where either side writes one (`x**2 + 1.2` and
  `x**2`), and absent where neither does: no shift turns `arcsin` into `arccos`;
- every function argument gets a free scale (`exp(-u)` is `exp(c*u)`). An offset only where it is
  written: `sin`/`cos` get a phase where either side writes a constant in a `sin`/`cos` argument
  over the same variables (`sin(w*t + 0.4)` and `cos(c*t)`), never otherwise (`sin(t)` is not
  `cos(t)`); other functions never (a shift moves a root, a pole or a centre: `log(1 + A)` is not
  `log(A)`);
- `log`'s argument gets no overall scale where the log multiplies a variable factor: `log(c*u)` is
  `log(c) + log(u)`, and beside `A` (`A*log(c*(1 + A))`) that constant would stand for a term `A`
  of its own. Elsewhere (`sqrt(log(c/f))`) it is scaled like any argument;
- an exponent that is a number is part of the form (`x**2`, `A**1.5`, `P**(1/3)`, compared by
  value; a printed `0.333333` is 1/3), and a proposal's exponent within a relative 1e-3 of one the
  truth writes is that one (PySR's `A**2.0002` is `A**2`); an exponent that is a parameter stays a
  free constant.

`maximal_form` returns the rewritten program, starting values (near the original constants),
which constants carry a variable-bearing term or a function's argument (`works`: a proposal
whose match needs one of those at ~0 matched by dropping a term, a superset), and its `skeleton`
(the form with every constant one placeholder: two equal skeletons are one family, decided
without numbers). Bounded by the caller (sympy on model text runs under `core.bounded`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

import numpy as np
import sympy

from pytest_lsrb.equations import Program
from pytest_lsrb.equations.ir import Node, Num, Op, Var, dag_nodes
from pytest_lsrb.equations.sympy_bridge import from_sympy

PHASED: Final = frozenset({sympy.sin, sympy.cos})
LOGS: Final = frozenset({sympy.log})
# A printed exponent within this of a fraction with a small denominator is that fraction
# (0.333333 is how 1/3 prints); the denominators a writer uses for roots and half powers.
EXPONENT_SNAP: Final = 1e-5
EXPONENT_DENOMINATORS: Final = 12
# A proposal's exponent within this (relative) of one the truth writes is that one (PySR floats).
EXPONENT_MATCH: Final = 1e-3
SKELETON_CONSTANT: Final = sympy.Symbol("_C")


@dataclass(frozen=True)
class Written:
    """The constants one side writes that decide what the other side's form may hold."""

    additive: bool = False  # an additive constant at the top
    phases: frozenset[frozenset[str]] = frozenset()  # variables of sin/cos arguments with an offset
    exponents: tuple[float, ...] = ()  # numeric exponents of variable-bearing powers (and 1)

    def __or__(self, other: Written) -> Written:
        return Written(
            self.additive or other.additive,
            self.phases | other.phases,
            tuple(sorted({*self.exponents, *other.exponents})),
        )


@dataclass(frozen=True)
class MaximalForm:
    program: Program  # the form, its constants parameters 0..n-1
    start: np.ndarray  # constants near the original's values (the fit starts here)
    works: tuple[int, ...]  # constants of variable-bearing terms and argument scales
    linear: tuple[int, ...]  # the top-level coefficients and offset: the form is linear in them
    arguments: tuple[Node, ...]  # function arguments that hold a variable (IR nodes of `program`)
    skeleton: Any = None  # the sympy form, every constant one placeholder (`SKELETON_CONSTANT`)
    additive: int | None = None  # the free additive constant at the top, where there is one


def snap_exponent(value: float, targets: Sequence[float] = ()) -> sympy.Expr:
    """The exponent as the one of `targets` (the other side's) within a relative
    `EXPONENT_MATCH`, then as the fraction it prints (1/3 for 0.333333), else as written."""
    near = [t for t in targets if abs(value - t) <= EXPONENT_MATCH * abs(t)]
    if near:
        value = min(near, key=lambda t: abs(value - t))
    frac = Fraction(value).limit_denominator(EXPONENT_DENOMINATORS)
    if abs(float(frac) - value) <= EXPONENT_SNAP * max(1.0, abs(value)):
        return sympy.Rational(frac.numerator, frac.denominator)
    return sympy.Float(value)


def _symbols(program: Program) -> tuple[dict[str, Any], list[Any]]:
    return {n: sympy.Symbol(n, real=True) for n in program.variables}, [
        sympy.Symbol(f"_p{i}") for i in range(program.n_params)
    ]


def _has_constant_term(expr: Any, variables: set[Any]) -> bool:
    return any(not (t.free_symbols & variables) for t in sympy.Add.make_args(expr))


def written(program: Program) -> Written:
    """What the program writes (its `Written`)."""
    syms, own = _symbols(program)
    expr = program.to_sympy(syms, own)
    variables = set(syms.values())
    phases = frozenset(
        frozenset(str(v) for v in f.args[0].free_symbols & variables)
        for f in expr.atoms(sympy.sin, sympy.cos)
        if f.args[0].is_Add and _has_constant_term(f.args[0], variables)
    )
    exponents = {1.0} | {
        float(p.exp) for p in expr.atoms(sympy.Pow) if p.exp.is_Number and p.base.free_symbols & variables
    }
    return Written(
        additive=bool(expr.free_symbols & variables) and _has_constant_term(expr, variables),
        phases=phases,
        exponents=tuple(sorted(exponents)),
    )


class _Builder:
    def __init__(self, variables: set[Any], values: dict[Any, float], other: Written) -> None:
        self.variables = variables
        self.values = values
        self.other = other
        self.symbols: list[Any] = []
        self.start: list[float] = []
        self.works: list[int] = []
        self.linear: list[int] = []
        self.additive: int | None = None

    def new(self, value: float, works: bool, linear: bool = False) -> Any:
        symbol = sympy.Symbol(f"_c{len(self.symbols)}")
        if linear:
            self.linear.append(len(self.symbols))
        if works:
            self.works.append(len(self.symbols))
        self.symbols.append(symbol)
        self.start.append(value if math.isfinite(value) else 1.0)
        return symbol

    def value(self, expr: Any) -> float:
        try:
            out = complex(sympy.N(expr.xreplace(self.values)))
        except (TypeError, ValueError, ZeroDivisionError):
            return 1.0
        return out.real if abs(out.imag) <= 1e-12 * max(1.0, abs(out.real)) else 1.0

    def has_var(self, expr: Any) -> bool:
        return bool(expr.free_symbols & self.variables)

    # -- sums and terms --------------------------------------------------------------------------

    def top(self, expr: Any, strict: bool = False) -> Any:
        """The sum of terms and a free additive constant where either side writes one (`strict`:
        only where this side writes one, and then a term like the others, which must not be
        fitted to ~0)."""
        terms = sympy.Add.make_args(expr)
        constant = [t for t in terms if not self.has_var(t)]
        out = sympy.Add(*[self.term(t, linear=True) for t in terms if self.has_var(t)])
        if not constant and (strict or not self.other.additive):
            return out
        self.additive = len(self.symbols)
        return out + self.new(self.value(sympy.Add(*constant)), works=strict, linear=True)

    def term(self, expr: Any, linear: bool = False) -> Any:
        coeff, rest = expr.as_independent(*self.variables, as_Add=False)
        return self.new(self.value(coeff), works=True, linear=linear) * self.body(rest)

    def inner_sum(self, expr: Any, shift: bool = True) -> Any:
        """A sum inside the form, each term with its coefficient; its constant term a term, free
        in value but there or not (`shift`; fitted to ~0 it idles), or, in an exponential's
        argument, a scale like any other (`exp(u + c)` is `e**c * exp(u)`)."""
        terms = sympy.Add.make_args(expr)
        constant = [t for t in terms if not self.has_var(t)]
        out = sympy.Add(*[self.term(t) for t in terms if self.has_var(t)])
        if constant:
            out += self.new(self.value(sympy.Add(*constant)), works=shift)
        return out

    def scaled(self, arg: Any, shift: bool = True) -> Any:
        """A function's argument with its own scale (a sum: each term's coefficient is one)."""
        if arg.is_Add:
            return self.inner_sum(arg, shift)
        return self.term(arg)

    # -- bodies: a variable-bearing expression without its constant factor --------------------------

    def body(self, expr: Any) -> Any:
        if not self.has_var(expr):
            return sympy.Integer(1)
        if expr.is_Symbol:
            return expr
        if expr.is_Add:
            return self.inner_sum(expr)
        if expr.is_Mul:
            factors = [f for f in expr.args if self.has_var(f)]
            if len(factors) > 1:  # a log beside a variable factor: no scale (the module's note)
                return sympy.Mul(*[self.log_factor(f) if f.func in LOGS else self.body(f) for f in factors])
            return sympy.Mul(*[self.body(f) for f in factors])
        if expr.is_Pow:
            return self.power(expr)
        return self.function(expr)

    def power(self, expr: Any) -> Any:
        base, exp = expr.args
        if not self.has_var(exp):
            if exp.is_Number:
                return self.body(base) ** snap_exponent(float(exp), self.other.exponents)
            return self.body(base) ** self.new(self.value(exp), works=False)
        if not self.has_var(base):  # a**u is exp(u*log(a)): a scale of the exponent's argument
            return sympy.exp(self.scaled(exp, shift=False))
        return self.body(base) ** self.body(exp)

    def function(self, expr: Any) -> Any:
        func, args = expr.func, expr.args
        if func is sympy.exp and len(args) == 1:
            return sympy.exp(self.scaled(args[0], shift=False))
        if func in PHASED:
            arg = self.scaled(args[0])
            unphased = not args[0].is_Add or all(self.has_var(t) for t in args[0].args)
            names = frozenset(str(v) for v in args[0].free_symbols & self.variables)
            if unphased and names in self.other.phases:  # the other side writes a phase
                arg += self.new(0.0, works=False)
            return func(arg)
        if func in LOGS and len(args) == 1:
            return sympy.log(self.scaled(args[0]))
        if func is sympy.Abs:
            return sympy.Abs(self.body(args[0]) if not args[0].is_Add else self.inner_sum(args[0]))
        if len(args) == 1 and isinstance(expr, sympy.Function):
            return func(self.scaled(args[0]))
        return func(*[self.inner_sum(a) if self.has_var(a) else a for a in args])

    def log_factor(self, expr: Any) -> Any:
        return sympy.log(self.log_argument(expr.args[0])) if len(expr.args) == 1 else self.body(expr)

    def log_argument(self, arg: Any) -> Any:
        """The argument up to an overall factor: its first term (the constant one, if any) is 1."""
        if not arg.is_Add:
            return self.body(arg)
        terms = sympy.Add.make_args(arg)
        constant = sympy.Add(*[t for t in terms if not self.has_var(t)])
        variable = [t for t in terms if self.has_var(t)]
        lead = self.value(constant) if constant != 0 else None
        out = sympy.Integer(1) if lead is not None else None
        for t in variable:
            coeff, rest = t.as_independent(*self.variables, as_Add=False)
            value = self.value(coeff)
            if out is None:
                out, lead = self.body(rest), value
                continue
            out = out + self.new(value / lead if lead else value, works=True) * self.body(rest)
        return out


def maximal_form(
    program: Program,
    params: Sequence[float] | None = None,
    strict: bool = False,
    other: Written | None = None,
) -> MaximalForm:
    """The program's maximal parametrisation (the module's note); `params`: its own parameters'
    values (fitted constants or a template's), which the starting values are computed from;
    `strict`: an additive constant alone is a term (`--lsrb-sr-sa-scale strict`); `other`: what
    the other side writes (an additive constant, phases; its exponents, which this side's snap
    to: pass them for the proposal's form only)."""
    syms, own = _symbols(program)
    values = (
        list(params) if params is not None and len(params) == program.n_params else [1.0] * program.n_params
    )
    expr = program.to_sympy(syms, own)
    builder = _Builder(
        set(syms.values()), {s: float(v) for s, v in zip(own, values, strict=True)}, other or Written()
    )
    form = builder.top(expr, strict)
    index = {str(s): i for i, s in enumerate(builder.symbols)}
    root = from_sympy(form, program.variables, index)
    out = Program.from_ir(root, program.variables, len(builder.symbols))
    return MaximalForm(
        program=out,
        start=np.asarray(builder.start, dtype=np.float64),
        works=tuple(builder.works),
        linear=tuple(builder.linear),
        arguments=_variable_arguments(out),
        skeleton=form.xreplace(dict.fromkeys(builder.symbols, SKELETON_CONSTANT)),
        additive=builder.additive,
    )


_FUNCTIONS: Final = frozenset(
    {
        "exp",
        "log",
        "sin",
        "cos",
        "tan",
        "tanh",
        "sinh",
        "cosh",
        "arcsin",
        "arccos",
        "arctan",
        "arcsinh",
        "arccosh",
        "arctanh",
        "sqrt",
        "pow",
    }
)


def _variable_arguments(program: Program) -> tuple[Node, ...]:
    """The arguments of the functions, the bases of the powers and the denominators that hold a
    variable: where a fit could push its constants into a linear regime (`(c1*T + c2)**2` with
    c1 -> 0 is a line)."""
    out: list[Node] = []
    for node in dag_nodes(program.root):
        if not isinstance(node, Op):
            continue
        if node.name in _FUNCTIONS:
            arg = node.args[0]
        elif node.name == "div":
            arg = node.args[1]
        else:
            continue
        if node.name == "pow" and isinstance(node.args[1], Num) and node.args[1].value == 1.0:
            continue
        if _holds_variable(arg):
            out.append(arg)
    return tuple(out)


def _holds_variable(node: Node) -> bool:
    return any(isinstance(n, Var) for n in dag_nodes(node))


def snap_exponents(program: Program) -> Program:
    """The program with each numeric exponent as the fraction it prints (`snap_exponent`), so a
    truth written `P**0.333333` is the cube root a proposal's `cbrt(P)` is."""
    memo: dict[int, Node] = {}
    changed = False
    for node in dag_nodes(program.root):
        if isinstance(node, Op):
            args = tuple(memo[id(a)] for a in node.args)
            if node.name == "pow" and isinstance(args[1], Num) and math.isfinite(args[1].value):
                snapped = float(snap_exponent(args[1].value))
                if snapped != args[1].value:
                    args, changed = (args[0], Num(snapped)), True
            memo[id(node)] = Op(node.name, args) if args != node.args else node
        else:
            memo[id(node)] = node
    if not changed:
        return program
    return Program.from_ir(memo[id(program.root)], program.variables, program.n_params)
