"""Expression trees for the evolutionary search (LaSR's operators), as equation-language IR.

A candidate is an IR tree (`equations.ir`) over LaSR's reference operator set — binary + - * / ^,
unary exp log sqrt sin cos — with input variables and numeric constants as leaves. Candidates are
scored through `Program.from_ir` (the safe language's compiler); nothing is ever executed as code.

This module holds what acts on one tree: its size (PySR's complexity: the node count), LaSR's
constraints (maximum size; argument-size caps and forbidden nestings from LLM-SRBench's LaSR
config), the random operators of SymbolicRegression.jl's mutation table, crossover, the text a
model sees (constants sketched as `C`, as LaSR's `render_expr` does) and reading a model's
expression back (`C` becomes a constant to optimise; operators outside the set are refused).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from pytest_lsrb.equations import EquationError, parse_expression
from pytest_lsrb.equations.ir import OPS, Node, Num, Op, Param, Var

BINARY: Final = ("add", "sub", "mul", "div", "pow")
UNARY: Final = ("exp", "log", "sqrt", "sin", "cos")
SYMBOL: Final = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "^"}
# The operator list as LaSR's `get_ops` writes it into its prompts.
OPERATORS_TEXT: Final = "binary operators: +, *, -, /, ^, and unary operators: exp, log, sqrt, sin, cos"

# LLM-SRBench's LaSR config: the largest subtree each operator may take as an argument
# (`pow`: base unconstrained, exponent at most 20) ...
ARG_SIZE_CAPS: Final[dict[str, tuple[int, ...]]] = {
    "sin": (10,),
    "cos": (10,),
    "exp": (20,),
    "log": (20,),
    "sqrt": (20,),
    "pow": (-1, 20),
}
# ... and the operators that may not appear anywhere inside each operator's argument.
FORBIDDEN_NESTING: Final[dict[str, frozenset[str]]] = {
    "sin": frozenset({"sin", "cos"}),
    "cos": frozenset({"sin", "cos"}),
    "exp": frozenset({"exp", "log"}),
    "log": frozenset({"exp", "log"}),
    "sqrt": frozenset({"sqrt"}),
}

Path = tuple[int, ...]


def size(node: Node) -> int:
    """PySR's complexity: every node counts 1."""
    if isinstance(node, Op):
        return 1 + sum(size(a) for a in node.args)
    return 1


def evaluate(node: Node, X: Mapping[str, np.ndarray]) -> np.ndarray | float:
    """The tree's values on the data, through the equation language's operation table
    (`ir.OPS`, the same numpy functions `Program` compiles to). Overflow and invalid math give
    inf/nan, never an exception (call under `np.errstate(all="ignore")`)."""
    if isinstance(node, Var):
        return X[node.name]
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Op):
        result: np.ndarray | float = OPS[node.name].np_fn(*(evaluate(a, X) for a in node.args))
        return result
    raise ValueError("a search tree holds no parameters")


def walk(node: Node, path: Path = ()) -> list[tuple[Path, Node]]:
    """Every (path, node) in prefix order."""
    out = [(path, node)]
    if isinstance(node, Op):
        for i, arg in enumerate(node.args):
            out += walk(arg, (*path, i))
    return out


def replace(node: Node, path: Path, new: Node) -> Node:
    if not path:
        return new
    assert isinstance(node, Op)
    i = path[0]
    args = list(node.args)
    args[i] = replace(args[i], path[1:], new)
    return Op(node.name, tuple(args))


def admissible(node: Node, maxsize: int) -> bool:
    """LaSR's constraints: size, argument-size caps, forbidden nestings (one bottom-up pass)."""
    try:
        total, _ = _check(node)
    except _Refused:
        return False
    return total <= maxsize


class _Refused(Exception):
    pass


def _check(node: Node) -> tuple[int, frozenset[str]]:
    """(size, operators inside) of a subtree; `_Refused` at the first broken constraint."""
    if not isinstance(node, Op):
        return 1, frozenset()
    parts = [_check(a) for a in node.args]
    caps = ARG_SIZE_CAPS.get(node.name)
    if caps is not None:
        for (n, _), cap in zip(parts, caps, strict=False):
            if cap >= 0 and n > cap:
                raise _Refused
    banned = FORBIDDEN_NESTING.get(node.name)
    if banned and parts[0][1] & banned:
        raise _Refused
    ops = frozenset({node.name}).union(*(p[1] for p in parts))
    return 1 + sum(p[0] for p in parts), ops


# -- text ---------------------------------------------------------------------------------------


def sketch_constant(value: float) -> str:
    """LaSR's `_sketch_const`: integers below 5 in magnitude stay (exponents), others are `C`."""
    if float(value).is_integer() and abs(value) < 5:
        return str(int(value))
    return "C"


def render(node: Node, constant: bool = False) -> str:
    """The expression as a model sees it (constants sketched as `C`, `^` for powers); with
    `constant=True` the numbers themselves (for records)."""
    if isinstance(node, Var):
        return node.name
    if isinstance(node, Num):
        return repr(float(node.value)) if constant else sketch_constant(node.value)
    if isinstance(node, Param):
        return f"params[{node.index}]"
    assert isinstance(node, Op)
    args = [render(a, constant) for a in node.args]
    if node.name in SYMBOL:
        return f"({args[0]} {SYMBOL[node.name]} {args[1]})"
    return f"{node.name}({', '.join(args)})"


_CONSTANT_NAME = re.compile(r"\b[cC]\d*\b")


def read_expression(text: str, variables: Sequence[str]) -> Node:
    """A model's expression as a search tree, or `EquationError`.

    As LaSR's `parse_expr`: `^` is a power, `C`/`C1`/`c2` are constants (value 1, optimised
    later), an `y = ` prefix is dropped. Anything outside the operator set is refused
    (`bad_call`), as LaSR refuses an operator it was not given.
    """
    body = text.strip().strip("\"'`").strip()
    if "=" in body and "==" not in body:
        body = body.split("=", 1)[1]
    body = body.replace("^", "**")
    taken = set(variables)
    body = _CONSTANT_NAME.sub(lambda m: m.group(0) if m.group(0) in taken else "1.0", body)
    program = parse_expression(body, list(variables))
    if program.n_params:
        raise EquationError("unknown_name", "parameters are written as C in this search")
    return to_search_tree(program.root)


def to_search_tree(node: Node) -> Node:
    """The IR restricted to the search's operators (`-x` becomes `-1 * x`); `EquationError`
    for any other operation."""
    if isinstance(node, (Var, Num)):
        return node
    if isinstance(node, Param):
        raise EquationError("unknown_name", "parameters are written as C in this search")
    assert isinstance(node, Op)
    args = tuple(to_search_tree(a) for a in node.args)
    if node.name == "neg":
        return Op("mul", (Num(-1.0), args[0]))
    if node.name not in BINARY and node.name not in UNARY:
        raise EquationError("bad_call", f"'{node.name}' is not one of this search's operators")
    return Op(node.name, args)


def parametrise(node: Node, max_params: int = 10) -> tuple[Node, list[float]]:
    """The tree with its constants as parameters (small-integer exponents stay numbers), and
    their values, for fitting and for the record (`params`)."""
    values: list[float] = []

    def go(n: Node, exponent: bool = False) -> Node:
        if isinstance(n, Num):
            keep = exponent and float(n.value).is_integer() and abs(n.value) < 5
            if keep or len(values) >= max_params:
                return n
            values.append(float(n.value))
            return Param(len(values) - 1)
        if isinstance(n, Op):
            return Op(n.name, tuple(go(a, n.name == "pow" and i == 1) for i, a in enumerate(n.args)))
        return n

    return go(node), values


def with_constants(node: Node, values: Sequence[float]) -> Node:
    """Parameters written back as constants."""
    if isinstance(node, Param):
        return Num(float(values[node.index]))
    if isinstance(node, Op):
        return Op(node.name, tuple(with_constants(a, values) for a in node.args))
    return node


# -- random operators (SymbolicRegression.jl's mutation table) ----------------------------------

# The mutation weights the reference ran with: LaSR's PySR fork (`pysr/sr.py` on LaSR's
# lasr-experiments branch, which LLM-SRBench's LaSR searcher calls) with the searcher's
# `weight_randomize=0.1`. `optimize` (weight 0 there) is left out; SymbolicRegression.jl's newer
# `rotate_tree` and graph-only form/break_connection do not exist in that version.
MUTATION_WEIGHTS: Final[dict[str, float]] = {
    "mutate_constant": 0.048,
    "mutate_operator": 0.47,
    "swap_operands": 0.1,
    "add_node": 0.79,
    "insert_node": 5.1,
    "delete_node": 1.7,
    "simplify": 0.0020,
    "randomize": 0.1,
    "do_nothing": 0.21,
}


def is_constant(node: Node) -> bool:
    """SymbolicRegression.jl's `check_constant`: the tree is a single constant."""
    return isinstance(node, Num)


def simplify(node: Node) -> Node:
    """SymbolicRegression.jl's `simplify_tree!` + `combine_operators`, on our trees: an operator
    whose arguments are all constants becomes its (finite) value, and a constant meeting a
    constant through two nested + or two nested * is folded into one (`c1 + (c2 + x)` ->
    `(c1 + c2) + x`). A tree with nothing to fold comes back as the same object."""
    if not isinstance(node, Op):
        return node
    args = tuple(simplify(a) for a in node.args)
    if all(isinstance(a, Num) for a in args):
        with np.errstate(all="ignore"):
            value = float(OPS[node.name].np_fn(*(np.float64(a.value) for a in args if isinstance(a, Num))))
        if math.isfinite(value):
            return Num(value)
    if node.name in ("add", "mul") and len(args) == 2:
        const, other = (args[0], args[1]) if isinstance(args[0], Num) else (args[1], args[0])
        if isinstance(const, Num) and isinstance(other, Op) and other.name == node.name:
            inner_const, rest = (
                (other.args[0], other.args[1])
                if isinstance(other.args[0], Num)
                else (other.args[1], other.args[0])
            )
            if isinstance(inner_const, Num):
                fold = (
                    const.value + inner_const.value if node.name == "add" else const.value * inner_const.value
                )
                if math.isfinite(fold):
                    return Op(node.name, (Num(fold), rest))
    if all(a is b for a, b in zip(args, node.args, strict=True)):
        return node  # unchanged: the same node (trees compare by identity)
    return Op(node.name, args)


@dataclass
class TreeOps:
    """Random tree operators over one problem's variables, drawing from one run's generator."""

    variables: tuple[str, ...]
    rng: random.Random
    perturbation_factor: float = 0.076  # LaSR's PySR fork defaults
    probability_negate_constant: float = 0.01
    binary: tuple[str, ...] = BINARY
    unary: tuple[str, ...] = UNARY
    _ops: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self._ops = self.binary + self.unary

    def leaf(self) -> Node:
        """A variable or a constant (PySR: half and half), constants ~ N(0, 1)."""
        if self.rng.random() < 0.5:
            return Var(self.variables[self.rng.randrange(len(self.variables))])
        return Num(float(self.rng.gauss(0.0, 1.0)))

    def random_op(self, child: Node) -> Node:
        name = self._ops[self.rng.randrange(len(self._ops))]
        if name in self.unary:
            return Op(name, (child,))
        other = self.leaf()
        return Op(name, (child, other) if self.rng.random() < 0.5 else (other, child))

    def random_tree(self, nodes: int) -> Node:
        """SymbolicRegression.jl's `gen_random_tree_fixed_size`: grow from a leaf by appending
        random operators at random leaves until the size is reached."""
        tree = self.leaf()
        while size(tree) < nodes:
            leaves = [p for p, n in walk(tree) if not isinstance(n, Op)]
            path = leaves[self.rng.randrange(len(leaves))]
            grown = replace(tree, path, self.random_op(_at(tree, path)))
            if size(grown) > nodes:
                break
            tree = grown
        return tree

    def mutate(self, tree: Node, kind: str, maxsize: int) -> Node:
        """One named mutation (the tree unchanged when it does not apply)."""
        nodes = walk(tree)
        if kind == "mutate_constant":
            consts = [(p, n) for p, n in nodes if isinstance(n, Num)]
            if not consts:
                return tree
            path, const = consts[self.rng.randrange(len(consts))]
            assert isinstance(const, Num)
            return replace(tree, path, Num(const.value * self.mutate_factor()))
        if kind == "mutate_operator":
            ops = [(p, n) for p, n in nodes if isinstance(n, Op)]
            if not ops:
                return tree
            path, node = ops[self.rng.randrange(len(ops))]
            assert isinstance(node, Op)
            pool = self.unary if len(node.args) == 1 else self.binary
            return replace(tree, path, Op(pool[self.rng.randrange(len(pool))], node.args))
        if kind == "swap_operands":
            ops = [(p, n) for p, n in nodes if isinstance(n, Op) and len(n.args) == 2]
            if not ops:
                return tree
            path, node = ops[self.rng.randrange(len(ops))]
            assert isinstance(node, Op)
            return replace(tree, path, Op(node.name, (node.args[1], node.args[0])))
        if kind == "rotate_tree":
            # (a op1 (b op2 c)) -> ((a op1 b) op2 c), at a random binary node with a binary right child
            spots = [
                (p, n)
                for p, n in nodes
                if isinstance(n, Op)
                and len(n.args) == 2
                and isinstance(n.args[1], Op)
                and len(n.args[1].args) == 2
            ]
            if not spots:
                return tree
            path, node = spots[self.rng.randrange(len(spots))]
            assert isinstance(node, Op) and isinstance(node.args[1], Op)
            inner = node.args[1]
            return replace(
                tree, path, Op(inner.name, (Op(node.name, (node.args[0], inner.args[0])), inner.args[1]))
            )
        if kind == "add_node":
            if self.rng.random() < 0.5:
                return self.random_op(tree)  # a new operator at the root
            leaves = [p for p, n in nodes if not isinstance(n, Op)]
            path = leaves[self.rng.randrange(len(leaves))]
            return replace(tree, path, self.random_op(_at(tree, path)))
        if kind == "insert_node":
            path, target = nodes[self.rng.randrange(len(nodes))]
            return replace(tree, path, self.random_op(target))
        if kind == "delete_node":
            ops = [(p, n) for p, n in nodes if isinstance(n, Op)]
            if not ops:
                return tree
            path, node = ops[self.rng.randrange(len(ops))]
            assert isinstance(node, Op)
            return replace(tree, path, node.args[self.rng.randrange(len(node.args))])
        if kind == "randomize":
            return self.random_tree(self.rng.randint(1, maxsize))
        return tree  # do_nothing

    def mutate_factor(self, temperature: float = 1.0) -> float:
        """SymbolicRegression.jl's `mutate_factor` as the reference ran it (no annealing, so the
        temperature is 1): a factor up to `perturbation_factor * T + 1.1`, applied or divided,
        and negated when `rand() > probability_negate_constant` (so 99 % of the time: the
        comparison is written that way in that version, MutationFunctions.jl)."""
        max_change = self.perturbation_factor * temperature + 1.0 + 0.1
        factor: float = max_change ** self.rng.random()
        if self.rng.random() < 0.5:
            factor = 1.0 / factor
        if self.rng.random() > self.probability_negate_constant:
            factor = -factor
        return factor

    def append_random_op(self, tree: Node) -> Node:
        """SymbolicRegression.jl's `append_random_op`: a random operator at a random leaf."""
        leaves = [p for p, n in walk(tree) if not isinstance(n, Op)]
        path = leaves[self.rng.randrange(len(leaves))]
        return replace(tree, path, self.random_op(_at(tree, path)))

    def initial_tree(self, length: int = 3) -> Node:
        """SymbolicRegression.jl's `gen_random_tree(3, ...)`, the first members of a population:
        a leaf and `length` operators appended at random leaves."""
        tree = self.leaf()
        for _ in range(length):
            tree = self.append_random_op(tree)
        return tree

    def crossover(self, a: Node, b: Node) -> tuple[Node, Node]:
        """Swap a random subtree of each (SymbolicRegression.jl's `crossover_trees`)."""
        pa, na = walk(a)[self.rng.randrange(size(a))]
        pb, nb = walk(b)[self.rng.randrange(size(b))]
        return replace(a, pa, nb), replace(b, pb, na)


def _at(node: Node, path: Path) -> Node:
    for i in path:
        assert isinstance(node, Op)
        node = node.args[i]
    return node
