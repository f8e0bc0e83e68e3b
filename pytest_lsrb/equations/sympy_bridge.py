"""IR <-> sympy, and IR -> text. No string ever goes through `sympify`/`eval`.

`to_sympy` builds sympy objects node by node (shared subtrees are converted once);
`from_sympy` walks a sympy expression back into the IR (used for ground truths produced by
the generators); `to_text` prints the IR in the equation language, so `parse(to_text(p))`
evaluates exactly like `p`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sympy

from pytest_lsrb.equations.errors import EquationError
from pytest_lsrb.equations.ir import OPS, Node, Num, Op, Param, Var, dag_nodes

_COMPARE = {
    "lt": sympy.StrictLessThan,
    "le": sympy.LessThan,
    "gt": sympy.StrictGreaterThan,
    "ge": sympy.GreaterThan,
}


def sympy_number(value: float) -> sympy.Expr:
    if value.is_integer() and abs(value) < 1e12:
        return sympy.Integer(int(value))
    return sympy.Float(value)


def _as_condition(node: Node, expr: Any) -> Any:
    if isinstance(node, Op) and node.name in _COMPARE:
        return expr
    return sympy.Ne(expr, 0)


def to_sympy(
    root: Node,
    symbols: Mapping[str, sympy.Symbol],
    params: Sequence[Any],
) -> sympy.Expr:
    """`symbols`: variable name -> symbol; `params[i]`: what parameter i becomes (a symbol or a
    number)."""
    memo: dict[int, Any] = {}
    relations: dict[int, Any] = {}
    for node in dag_nodes(root):
        if isinstance(node, Num):
            out: Any = sympy_number(node.value)
        elif isinstance(node, Var):
            out = symbols[node.name]
        elif isinstance(node, Param):
            value = params[node.index]
            out = sympy_number(float(value)) if isinstance(value, (int, float)) else value
        else:
            a = [memo[id(arg)] for arg in node.args]
            out = _sympy_op(node, a, relations)
        memo[id(node)] = out
    result = memo[id(root)]
    if id(root) in relations:
        result = sympy.Piecewise((1, relations[id(root)]), (0, True))
    return result


def _sympy_op(node: Op, a: list[Any], relations: dict[int, Any]) -> Any:
    name = node.name
    if name in _COMPARE:
        rel = _COMPARE[name](a[0], a[1])
        relations[id(node)] = rel
        return sympy.Piecewise((1, rel), (0, True))
    if name == "where":
        cond_node = node.args[0]
        cond = relations.get(id(cond_node))
        if cond is None:
            cond = _as_condition(cond_node, a[0])
        return sympy.Piecewise((a[1], cond), (a[2], True))
    simple: dict[str, Callable[..., Any]] = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "neg": lambda x: -x,
        "pow": lambda x, y: x**y,
        "square": lambda x: x**2,
        "log10": lambda x: sympy.log(x, 10),
        "log2": lambda x: sympy.log(x, 2),
        "log1p": lambda x: sympy.log(1 + x),
        "expm1": lambda x: sympy.exp(x) - 1,
        "exp2": lambda x: sympy.Integer(2) ** x,
        "hypot": lambda x, y: sympy.sqrt(x**2 + y**2),
        "cbrt": lambda x: sympy.cbrt(x),
    }
    if name in simple:
        return simple[name](*a)
    fn = getattr(sympy, OPS[name].sympy_name)
    return fn(*a)


# -- sympy -> IR -------------------------------------------------------------------------------

_SYMPY_FUNCS: dict[str, str] = {
    "exp": "exp",
    "log": "log",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "Abs": "abs",
    "sign": "sign",
    "atan2": "arctan2",
}


def from_sympy(expr: Any, variables: Sequence[str], param_symbols: Mapping[str, int] | None = None) -> Node:
    """A sympy expression over `variables` (and optional parameter symbols) as IR."""
    params = dict(param_symbols or {})
    memo: dict[Any, Node] = {}

    def conv(e: Any) -> Node:
        if e in memo:
            return memo[e]
        out = _conv(e)
        memo[e] = out
        return out

    def chain(op: str, items: list[Node]) -> Node:
        node = items[0]
        for item in items[1:]:
            node = Op(op, (node, item))
        return node

    def _conv(e: Any) -> Node:
        if e.is_Symbol:
            name = str(e)
            if name in params:
                return Param(params[name])
            if name in variables:
                return Var(name)
            raise EquationError("unknown_name", f"'{name}' is not a variable")
        if e.is_Atom and e.is_number and e.is_real is False:
            raise EquationError("bad_constant", f"{e} is not a real number")
        if e is sympy.pi:
            return Num(math.pi)
        if e is sympy.E:
            return Num(math.e)
        if e.is_Number:
            if not e.is_real or not e.is_finite:
                raise EquationError("bad_constant", f"{e} is not a finite real number")
            return Num(float(e))
        if e.is_Add:
            terms = sorted(e.args, key=lambda t: t.could_extract_minus_sign())
            node = conv(terms[0])
            for t in terms[1:]:
                if t.could_extract_minus_sign():
                    node = Op("sub", (node, conv(-t)))
                else:
                    node = Op("add", (node, conv(t)))
            return node
        if e.is_Mul and e.args[0] == -1:
            return Op("neg", (conv(-e),))
        if e.is_Mul:
            num: list[Node] = []
            den: list[Node] = []
            for factor in e.args:
                if factor.is_Pow and factor.exp.is_Number and factor.exp < 0:
                    den.append(conv(factor.base ** (-factor.exp)))
                elif factor.is_Rational and factor.q != 1 and factor.p == 1:
                    den.append(Num(float(factor.q)))
                else:
                    num.append(conv(factor))
            top = chain("mul", num) if num else Num(1.0)
            return Op("div", (top, chain("mul", den))) if den else top
        if e.is_Pow:
            base, exp = conv(e.base), e.exp
            if exp == sympy.Rational(1, 2):
                return Op("sqrt", (base,))
            if exp.is_Number and exp < 0:
                return Op("div", (Num(1.0), conv(e.base ** (-exp))))
            return Op("pow", (base, conv(exp)))
        if isinstance(e, sympy.Piecewise):
            pieces = list(e.args)
            node = conv(pieces[-1][0]) if pieces[-1][1] == sympy.true else Num(float("nan"))
            for value, cond in reversed(pieces[:-1] if pieces[-1][1] == sympy.true else pieces):
                node = Op("where", (_cond(cond), conv(value), node))
            return node
        if isinstance(e, (sympy.Max, sympy.Min)):
            return chain("maximum" if isinstance(e, sympy.Max) else "minimum", [conv(t) for t in e.args])
        fname = type(e).__name__
        if fname in _SYMPY_FUNCS and len(e.args) == OPS[_SYMPY_FUNCS[fname]].arity:
            return Op(_SYMPY_FUNCS[fname], tuple(conv(a) for a in e.args))
        if fname == "log" and len(e.args) == 2:
            return Op("div", (Op("log", (conv(e.args[0]),)), Op("log", (conv(e.args[1]),))))
        raise EquationError("forbidden_construct", f"the sympy construct {fname} has no equation form")

    def _cond(c: Any) -> Node:
        names = {
            sympy.StrictLessThan: "lt",
            sympy.LessThan: "le",
            sympy.StrictGreaterThan: "gt",
            sympy.GreaterThan: "ge",
        }
        for cls, name in names.items():
            if isinstance(c, cls):
                return Op(name, (conv(c.lhs), conv(c.rhs)))
        raise EquationError("forbidden_construct", f"the condition {c} has no equation form")

    return conv(expr)


# -- IR -> text --------------------------------------------------------------------------------

_ATOM = 100


def _num_text(value: float) -> str:
    if math.isnan(value):
        return "(0.0/0.0)"
    if math.isinf(value):
        return "(1e308*10)" if value > 0 else "(-1e308*10)"
    if value == math.pi:
        return "pi"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def to_text(root: Node, param_text: Callable[[int], str]) -> str:
    texts: dict[int, tuple[str, int]] = {}
    for node in dag_nodes(root):
        texts[id(node)] = _text(node, texts, param_text)
    return texts[id(root)][0]


def _text(node: Node, texts: dict[int, tuple[str, int]], param_text: Callable[[int], str]) -> tuple[str, int]:
    if isinstance(node, Num):
        s = _num_text(node.value)
        return s, (30 if s.startswith("-") else _ATOM)
    if isinstance(node, Var):
        return node.name, _ATOM
    if isinstance(node, Param):
        return param_text(node.index), _ATOM
    spec = OPS[node.name]
    args = [texts[id(a)] for a in node.args]
    if node.name == "neg":
        s, p = args[0]
        return ("-" + (s if p >= 40 else f"({s})")), 30
    if spec.infix is not None:
        prec = spec.precedence
        (ls, lp), (rs, rp) = args
        if node.name == "pow":
            left = ls if lp > prec else f"({ls})"
            right = rs if rp >= prec else f"({rs})"
            return f"{left}**{right}", prec
        left = ls if lp >= prec else f"({ls})"
        right = rs if rp > prec else f"({rs})"
        sep = f" {spec.infix} " if prec <= 10 else spec.infix
        return f"{left}{sep}{right}", prec
    return f"{node.name}({', '.join(s for s, _ in args)})", _ATOM
