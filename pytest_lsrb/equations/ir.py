"""The equation IR: four node types and one table of operations.

A parsed equation is a DAG of `Num`, `Var`, `Param` and `Op` nodes (local assignments make shared
subtrees). Every operation lives once in `OPS` with its arity, its numpy implementation, its
sympy counterpart, its partial derivatives (for the forward-mode Jacobian used when fitting
parameters) and how it is written back as text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Union

import numpy as np


@dataclass(frozen=True, eq=False)
class Num:
    value: float


@dataclass(frozen=True, eq=False)
class Var:
    name: str


@dataclass(frozen=True, eq=False)
class Param:
    index: int


@dataclass(frozen=True, eq=False)
class Op:
    name: str
    args: tuple[Node, ...]


Node = Union[Num, Var, Param, Op]  # noqa: UP007 (a runtime alias on Python 3.10)

Array = Any  # np.ndarray or a numpy scalar
Partial = Callable[[int, Sequence[Array], Array], Array]


@dataclass(frozen=True)
class OpSpec:
    name: str
    arity: int
    np_fn: Callable[..., Array]
    sympy_name: str  # attribute of the sympy module (or a special form handled in sympy_bridge)
    partial: Partial | None  # d out / d arg_i; None: piecewise constant (zero derivative)
    infix: str | None = None  # binary operator text, e.g. "+"
    precedence: int = 100  # for printing: higher binds tighter


def _one_over(x: Array) -> Array:
    return 1.0 / x


def _pow_partial(i: int, a: Sequence[Array], out: Array) -> Array:
    base, exp = a
    if i == 0:
        return exp * np.power(base, exp - 1.0)
    return out * np.log(base)


def _where(c: Array, a: Array, b: Array) -> Array:
    return np.where(c != 0, a, b)


def _where_partial(i: int, a: Sequence[Array], out: Array) -> Array:
    cond = a[0] != 0
    if i == 0:
        return np.zeros_like(out, dtype=float)
    return np.where(cond, 1.0, 0.0) if i == 1 else np.where(cond, 0.0, 1.0)


def _cmp(fn: Callable[[Array, Array], Array]) -> Callable[[Array, Array], Array]:
    def run(a: Array, b: Array) -> Array:
        return np.asarray(fn(a, b), dtype=float)

    return run


_LN10: Final = math.log(10.0)
_LN2: Final = math.log(2.0)

_SPECS: list[OpSpec] = [
    # arithmetic
    OpSpec("add", 2, np.add, "Add", lambda i, a, o: 1.0, "+", 10),
    OpSpec("sub", 2, np.subtract, "Add", lambda i, a, o: 1.0 if i == 0 else -1.0, "-", 10),
    OpSpec("mul", 2, np.multiply, "Mul", lambda i, a, o: a[1] if i == 0 else a[0], "*", 20),
    OpSpec("div", 2, np.divide, "Mul", lambda i, a, o: 1.0 / a[1] if i == 0 else -o / a[1], "/", 20),
    OpSpec("neg", 1, np.negative, "Mul", lambda i, a, o: -1.0, "-", 30),
    OpSpec("pow", 2, np.power, "Pow", _pow_partial, "**", 40),
    # comparisons: 1.0 or 0.0, only useful inside where()
    OpSpec("lt", 2, _cmp(np.less), "StrictLessThan", None, "<", 5),
    OpSpec("le", 2, _cmp(np.less_equal), "LessThan", None, "<=", 5),
    OpSpec("gt", 2, _cmp(np.greater), "StrictGreaterThan", None, ">", 5),
    OpSpec("ge", 2, _cmp(np.greater_equal), "GreaterThan", None, ">=", 5),
    OpSpec("where", 3, _where, "Piecewise", _where_partial),
    # functions
    OpSpec("exp", 1, np.exp, "exp", lambda i, a, o: o),
    OpSpec("expm1", 1, np.expm1, "expm1", lambda i, a, o: o + 1.0),
    OpSpec("exp2", 1, np.exp2, "exp2", lambda i, a, o: o * _LN2),
    OpSpec("log", 1, np.log, "log", lambda i, a, o: _one_over(a[0])),
    OpSpec("log10", 1, np.log10, "log10", lambda i, a, o: 1.0 / (a[0] * _LN10)),
    OpSpec("log2", 1, np.log2, "log2", lambda i, a, o: 1.0 / (a[0] * _LN2)),
    OpSpec("log1p", 1, np.log1p, "log1p", lambda i, a, o: 1.0 / (1.0 + a[0])),
    OpSpec("sqrt", 1, np.sqrt, "sqrt", lambda i, a, o: 0.5 / o),
    OpSpec("cbrt", 1, np.cbrt, "cbrt", lambda i, a, o: 1.0 / (3.0 * o * o)),
    OpSpec("square", 1, np.square, "square", lambda i, a, o: 2.0 * a[0]),
    OpSpec("abs", 1, np.abs, "Abs", lambda i, a, o: np.sign(a[0])),
    OpSpec("sign", 1, np.sign, "sign", None),
    OpSpec("sin", 1, np.sin, "sin", lambda i, a, o: np.cos(a[0])),
    OpSpec("cos", 1, np.cos, "cos", lambda i, a, o: -np.sin(a[0])),
    OpSpec("tan", 1, np.tan, "tan", lambda i, a, o: 1.0 + o * o),
    OpSpec("arcsin", 1, np.arcsin, "asin", lambda i, a, o: 1.0 / np.sqrt(1.0 - a[0] * a[0])),
    OpSpec("arccos", 1, np.arccos, "acos", lambda i, a, o: -1.0 / np.sqrt(1.0 - a[0] * a[0])),
    OpSpec("arctan", 1, np.arctan, "atan", lambda i, a, o: 1.0 / (1.0 + a[0] * a[0])),
    OpSpec(
        "arctan2",
        2,
        np.arctan2,
        "atan2",
        lambda i, a, o: (a[1] if i == 0 else -a[0]) / (a[0] * a[0] + a[1] * a[1]),
    ),
    OpSpec("sinh", 1, np.sinh, "sinh", lambda i, a, o: np.cosh(a[0])),
    OpSpec("cosh", 1, np.cosh, "cosh", lambda i, a, o: np.sinh(a[0])),
    OpSpec("tanh", 1, np.tanh, "tanh", lambda i, a, o: 1.0 - o * o),
    OpSpec("arcsinh", 1, np.arcsinh, "asinh", lambda i, a, o: 1.0 / np.sqrt(a[0] * a[0] + 1.0)),
    OpSpec("arccosh", 1, np.arccosh, "acosh", lambda i, a, o: 1.0 / np.sqrt(a[0] * a[0] - 1.0)),
    OpSpec("arctanh", 1, np.arctanh, "atanh", lambda i, a, o: 1.0 / (1.0 - a[0] * a[0])),
    OpSpec("hypot", 2, np.hypot, "hypot", lambda i, a, o: a[i] / o),
    OpSpec(
        "maximum",
        2,
        np.maximum,
        "Max",
        lambda i, a, o: np.where(a[0] >= a[1], 1.0, 0.0) if i == 0 else np.where(a[0] >= a[1], 0.0, 1.0),
    ),
    OpSpec(
        "minimum",
        2,
        np.minimum,
        "Min",
        lambda i, a, o: np.where(a[0] <= a[1], 1.0, 0.0) if i == 0 else np.where(a[0] <= a[1], 0.0, 1.0),
    ),
]

OPS: Final[dict[str, OpSpec]] = {spec.name: spec for spec in _SPECS}

# Compile-time specialisations of `pow` with a constant exponent (never in the IR itself):
# np.power is several times slower than multiplication for the common small exponents.
INTERNAL_OPS: Final[dict[str, OpSpec]] = {
    spec.name: spec
    for spec in [
        OpSpec("pow2", 1, np.square, "", lambda i, a, o: 2.0 * a[0]),
        OpSpec("pow3", 1, lambda x: x * x * x, "", lambda i, a, o: 3.0 * a[0] * a[0]),
        OpSpec("recip", 1, lambda x: 1.0 / x, "", lambda i, a, o: -o * o),
        OpSpec("pow_half", 1, np.sqrt, "", lambda i, a, o: 0.5 / o),
    ]
}
CONST_POWERS: Final[dict[float, str]] = {2.0: "pow2", 3.0: "pow3", -1.0: "recip", 0.5: "pow_half"}

# Names a model may call (bare, or as np./numpy./math. attributes) -> canonical op name.
FUNCTION_ALIASES: Final[dict[str, str]] = {
    **{name: name for name in OPS if OPS[name].infix is None},
    "ln": "log",
    "fabs": "abs",
    "absolute": "abs",
    "Abs": "abs",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "power": "pow",
    "pow": "pow",
    "max": "maximum",
    "min": "minimum",
}

# Named constants: bare names (when not a variable) and module attributes.
BARE_CONSTANTS: Final[dict[str, float]] = {"pi": math.pi, "E": math.e}  # sympy prints e as E
MODULE_CONSTANTS: Final[dict[str, float]] = {"pi": math.pi, "e": math.e}
MODULE_NAMES: Final[frozenset[str]] = frozenset({"np", "numpy", "math"})


def tree_size(root: Node) -> int:
    """Nodes in the expression tree (shared subtrees counted at each use), without expanding it."""
    memo: dict[int, int] = {}
    for node in dag_nodes(root):
        memo[id(node)] = 1 + sum(memo[id(a)] for a in node.args) if isinstance(node, Op) else 1
    return memo[id(root)]


def dag_nodes(root: Node) -> list[Node]:
    """Unique nodes in post-order (arguments before their operation)."""
    seen: set[int] = set()
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in seen:
            continue
        if expanded or not isinstance(node, Op):
            seen.add(id(node))
            order.append(node)
            continue
        stack.append((node, True))
        for arg in reversed(node.args):
            if id(arg) not in seen:
                stack.append((arg, False))
    return order


def depth(root: Node) -> int:
    memo: dict[int, int] = {}
    for node in dag_nodes(root):
        memo[id(node)] = 1 + max((memo[id(a)] for a in node.args), default=0) if isinstance(node, Op) else 1
    return memo[id(root)]
