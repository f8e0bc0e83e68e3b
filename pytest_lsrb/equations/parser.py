"""Model text -> IR, by walking Python's `ast` against a whitelist. Nothing is ever executed.

Two entry shapes:
- an expression: `c0*x**2 + np.sin(v)`, `params[0]*exp(-params[1]*t)`;
- a function: `def equation(x, v, params): a = params[0]*x; return a + params[1]*v`, with a
  docstring, annotations, local (also tuple and augmented) assignments and one final return.

Everything not explicitly allowed is refused with a classified `EquationError`.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import keyword
import math
import re
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_lsrb.equations.errors import EquationError
from pytest_lsrb.equations.ir import (
    BARE_CONSTANTS,
    FUNCTION_ALIASES,
    MODULE_CONSTANTS,
    MODULE_NAMES,
    OPS,
    Node,
    Num,
    Op,
    Param,
    Var,
    dag_nodes,
    depth,
    tree_size,
)

MAX_SOURCE_CHARS = 20_000
MAX_DEPTH = 100  # nesting of the source AST and of the resulting IR
MAX_TREE_NODES = 2_000  # expression-tree size after inlining local assignments
MAX_DAG_NODES = 500
MAX_CONST_EXPONENT = 100.0  # |constant exponent|; beyond this sympy would build huge integers
MAX_PARAMS = 10
PARAMS_NAME = "params"

_CONST_PARAM = re.compile(r"^c(\d+)$")
_DANGEROUS_BUILTINS = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "open",
        "getattr",
        "setattr",
        "delattr",
        "globals",
        "locals",
        "vars",
        "input",
        "breakpoint",
        "exit",
        "quit",
        "type",
        "object",
        "dir",
        "help",
        "memoryview",
        "super",
        "classmethod",
        "staticmethod",
        "property",
        "print",
        "format",
    }
)
_ALLOWED_IMPORTS = frozenset({"numpy", "math"})

# What LLM-SR programs write that is sugar for the language's own operations: parsed into them,
# never run. `clip(x, lo, hi)` = minimum(maximum(x, lo), hi); `reciprocal(x)` = 1/x;
# `heaviside(x, h0)` = 0 below 0, h0 at 0, 1 above; the casts (`np.float64(2.0)`, `float(p)`,
# `np.asarray(x)`) leave a number a number. Keyword spellings of clip's bounds: numpy's old
# `a_min`/`a_max` and its 2.1 `min`/`max`.
_SUGAR_ARITY: dict[str, int] = {"clip": 3, "reciprocal": 1, "heaviside": 2}
_CLIP_KEYWORDS: dict[str, int] = {"a_min": 1, "a_max": 2, "min": 1, "max": 2}
_CASTS = frozenset({"float", "float64", "float32", "float16", "double", "longdouble", "asarray", "array"})
# Python's builtins a program may call that the language does not express (`round`, `sum`,
# `range`...): the reference runs them, so refusing one is our limit, not the model's error.
_OTHER_BUILTINS = frozenset(
    name for name in dir(builtins) if not name.startswith("_") and name not in _DANGEROUS_BUILTINS
)

_BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.Pow: "pow",
}
_CMPOPS: dict[type[ast.cmpop], str] = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


@dataclass
class ParseResult:
    root: Node
    variables: tuple[str, ...]
    n_params: int
    param_names: tuple[str, ...]
    kind: str
    used_variables: frozenset[str] = field(default_factory=frozenset)


def _forbid(what: str, node: ast.AST | None = None) -> EquationError:
    line = getattr(node, "lineno", None)
    where = f" (line {line}, column {getattr(node, 'col_offset', 0)})" if line is not None else ""
    return EquationError("forbidden_construct", f"{what} is not allowed{where}")


# CPython keeps the AST constructor's recursion depth in interpreter-wide state, so two threads
# parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
# (python/cpython#106905; seen on 3.11 here). Attempts run in threads (--lsrb-concurrency) and
# parse model answers there: every parse of model-written text takes this lock.
_AST_LOCK = threading.Lock()


def parse_python(text: str) -> ast.Module:
    """`ast.parse(text)`, one thread at a time (see _AST_LOCK), quietly: a model's text with an
    invalid escape (`'\\q'`) or `1if x` makes Python warn, which is no warning of the user's run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _AST_LOCK:
            return ast.parse(text)


def _parse_python(text: str, mode: str) -> ast.AST:
    if not isinstance(text, str):
        raise EquationError("parse_error", f"expected text, got {type(text).__name__}")
    if len(text) > MAX_SOURCE_CHARS:
        raise EquationError("too_complex", f"{len(text)} characters (limit {MAX_SOURCE_CHARS})")
    if not text.strip():
        raise EquationError("parse_error", "empty equation")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for `1if x else 2`
            with _AST_LOCK:
                return ast.parse(text, mode=mode)
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if "too many nested" in msg:
            raise EquationError("too_complex", msg) from None
        raise EquationError("parse_error", f"{msg} (line {exc.lineno})") from None
    except (RecursionError, MemoryError):
        raise EquationError("too_complex", "nested too deeply to parse") from None
    except ValueError as exc:  # e.g. null bytes
        raise EquationError("parse_error", str(exc)) from None


class _Builder:
    """Turns whitelisted AST nodes into IR nodes; `env` holds locals (function mode)."""

    def __init__(
        self,
        variables: Sequence[str],
        *,
        free_params: bool,
        max_params: int,
        const_names: bool,
        first_free_index: int,
    ) -> None:
        self.variables = set(variables)
        self.free_params = free_params
        self.max_params = max_params
        self.const_names = const_names
        self.env: dict[str, Node] = {}
        self.params: dict[int, str] = {}
        self.next_free = first_free_index
        self.free_names: dict[str, int] = {}
        self._var_nodes: dict[str, Var] = {}
        self._param_nodes: dict[int, Param] = {}

    # -- leaves ---------------------------------------------------------------------------------

    def param(self, index: int, name: str, node: ast.AST | None = None) -> Param:
        if index < 0:
            raise _forbid("a negative parameter index", node)
        if index >= self.max_params:
            raise EquationError(
                "too_many_params", f"parameter index {index} (at most {self.max_params} parameters)"
            )
        self.params.setdefault(index, name)
        if index not in self._param_nodes:
            self._param_nodes[index] = Param(index)
        return self._param_nodes[index]

    def var(self, name: str) -> Var:
        if name not in self._var_nodes:
            self._var_nodes[name] = Var(name)
        return self._var_nodes[name]

    def name(self, node: ast.Name) -> Node:
        ident = node.id
        if ident.startswith("__"):
            raise _forbid(f"the name '{ident}'", node)
        if ident in self.env:
            return self.env[ident]
        if ident in self.variables:
            return self.var(ident)
        if ident == PARAMS_NAME:
            raise _forbid("using 'params' other than as params[i]", node)
        m = _CONST_PARAM.match(ident)
        if self.const_names and m:
            return self.param(int(m.group(1)), ident, node)
        if ident in BARE_CONSTANTS:
            return Num(BARE_CONSTANTS[ident])
        if ident in _DANGEROUS_BUILTINS or ident in FUNCTION_ALIASES or ident in MODULE_NAMES:
            raise _forbid(f"using '{ident}' as a value", node)
        if self.free_params:
            if ident not in self.free_names:
                self.free_names[ident] = self.next_free
                self.next_free += 1
            return self.param(self.free_names[ident], ident, node)
        known = ", ".join(sorted(self.variables | set(self.env))) or "none"
        raise EquationError("unknown_name", f"'{ident}' is not an input variable or local (known: {known})")

    # -- expressions ----------------------------------------------------------------------------

    def expr(self, node: ast.AST, depth: int = 0) -> Node:
        if depth > MAX_DEPTH:
            raise EquationError("too_complex", f"nested deeper than {MAX_DEPTH} levels")
        d = depth + 1
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise _forbid(f"the operator '{type(node.op).__name__}'", node)
            left, right = self.expr(node.left, d), self.expr(node.right, d)
            if op == "pow":
                _check_exponent(right)
            return Op(op, (left, right))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, d)
            if isinstance(node.op, ast.USub):
                if isinstance(operand, Num):
                    return Num(-operand.value)
                return Op("neg", (operand,))
            if isinstance(node.op, ast.UAdd):
                return operand
            raise _forbid(f"the operator '{type(node.op).__name__}'", node)
        if isinstance(node, ast.Call):
            return self.call(node, d)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Attribute):
            return self.attribute_constant(node)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise _forbid("a chained comparison", node)
            cmp = _CMPOPS.get(type(node.ops[0]))
            if cmp is None:
                raise _forbid(f"the comparison '{type(node.ops[0]).__name__}'", node)
            return Op(cmp, (self.expr(node.left, d), self.expr(node.comparators[0], d)))
        if isinstance(node, ast.IfExp):
            return Op("where", (self.expr(node.test, d), self.expr(node.body, d), self.expr(node.orelse, d)))
        if isinstance(node, _RUNNABLE_EXPRESSIONS):
            raise _unsupported(_describe(node), node)
        raise _forbid(_describe(node), node)

    def constant(self, node: ast.Constant) -> Num:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _forbid(f"the literal {_short(repr(value))}", node)
        try:
            number = float(value)
        except OverflowError:
            raise EquationError("bad_constant", f"the literal {_short(repr(value))} is too large") from None
        if not math.isfinite(number):
            raise EquationError("bad_constant", f"the literal {_short(repr(value))} is not finite")
        return Num(number)

    def subscript(self, node: ast.Subscript) -> Node:
        if not (isinstance(node.value, ast.Name) and node.value.id == PARAMS_NAME):
            raise _forbid("indexing anything but params", node)
        index = _int_literal(node.slice)
        if index is None:
            raise _forbid("a params index that is not a non-negative integer literal", node)
        return self.param(index, f"params[{index}]", node)

    def attribute_constant(self, node: ast.Attribute) -> Node:
        module = _module_attr(node)
        if module is not None and node.attr in MODULE_CONSTANTS:
            return Num(MODULE_CONSTANTS[node.attr])
        if module is not None and not node.attr.startswith("_"):
            raise EquationError("unknown_name", f"'{module}.{node.attr}' is not a whitelisted constant")
        raise _forbid(f"the attribute access '.{node.attr}'", node)

    def call(self, node: ast.Call, depth: int) -> Node:
        fname = self.function_name(node.func)
        if fname in _SUGAR_ARITY or fname in _CASTS or fname == "len":
            return self.sugar(fname, node, depth)
        if node.keywords:
            raise EquationError("bad_call", f"keyword arguments to {fname}()")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise _forbid("a starred argument", node)
        op = FUNCTION_ALIASES[fname]
        arity = OPS[op].arity
        if len(node.args) != arity:
            raise EquationError("bad_call", f"{fname}() takes {arity} argument(s), got {len(node.args)}")
        args = tuple(self.expr(a, depth) for a in node.args)
        if op == "pow":
            _check_exponent(args[1])
        return Op(op, args)

    def function_name(self, func: ast.AST) -> str:
        if isinstance(func, ast.Name):
            ident = func.id
            if ident.startswith("__") or ident in _DANGEROUS_BUILTINS:
                raise _forbid(f"calling '{ident}'", func)
            if ident in FUNCTION_ALIASES or ident in ("float", "len"):
                return ident
            if ident in _OTHER_BUILTINS and ident not in self.env:
                raise _unsupported(f"Python's '{ident}()'", func)
            raise EquationError("unknown_name", f"'{ident}' is not a whitelisted function")
        if isinstance(func, ast.Attribute):
            module = _module_attr(func)
            if module is None or func.attr.startswith("_"):
                raise _forbid(f"calling the attribute '.{func.attr}'", func)
            if func.attr in FUNCTION_ALIASES or func.attr in _SUGAR_ARITY or func.attr in _CASTS:
                return func.attr
            if _module_has(module, func.attr):
                raise _unsupported(f"'{module}.{func.attr}()'", func)
            raise EquationError("unknown_name", f"'{module}.{func.attr}' is not a whitelisted function")
        raise _forbid(f"calling {_describe(func)}", func)

    def sugar(self, fname: str, node: ast.Call, depth: int) -> Node:
        """clip, reciprocal, heaviside, the casts and `len(params)`, in the language's own terms."""
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise _forbid("a starred argument", node)
        if fname == "len":
            (arg,) = node.args if len(node.args) == 1 and not node.keywords else (None,)
            if isinstance(arg, ast.Name) and arg.id == PARAMS_NAME:
                # The reference calls the program with a params array of its full length.
                return Num(float(self.max_params))
            raise _unsupported("len() of anything but params", node)
        args: list[ast.expr | None] = list(node.args)
        if fname == "clip":
            return self.clip(node, depth)
        if node.keywords:
            raise EquationError("bad_call", f"keyword arguments to {fname}()")
        arity = 1 if fname in _CASTS else _SUGAR_ARITY[fname]
        if len(args) != arity or any(a is None for a in args):
            raise EquationError("bad_call", f"{fname}() takes {arity} argument(s), got {len(node.args)}")
        if fname in _CASTS and isinstance(args[0], (ast.List, ast.Tuple)):
            raise _unsupported(f"{fname}() of a sequence", node)
        values = [self.expr(a, depth) for a in args if a is not None]
        if fname in _CASTS:
            return values[0]
        if fname == "reciprocal":
            return Op("div", (Num(1.0), values[0]))
        x, at_zero = values  # heaviside
        zero = Num(0.0)
        return Op("where", (Op("gt", (x, zero)), Num(1.0), Op("where", (Op("lt", (x, zero)), zero, at_zero))))

    def clip(self, node: ast.Call, depth: int) -> Node:
        """`clip(x, lo, hi)` = minimum(maximum(x, lo), hi), numpy's way: a bound written as the
        literal None is no bound (numpy 2 also takes both as None: x itself)."""
        if len(node.args) > 3:
            raise EquationError("bad_call", f"clip() takes 3 argument(s), got {len(node.args)}")
        args: list[ast.expr | None] = [*node.args, None, None, None][:3]
        for kw in node.keywords:
            slot = _CLIP_KEYWORDS.get(kw.arg or "")
            if slot is None or args[slot] is not None:
                raise EquationError("bad_call", f"clip() got an unexpected keyword {kw.arg!r}")
            args[slot] = kw.value
        x, lo, hi = args
        if x is None or lo is None or hi is None:
            given = sum(a is not None for a in args)
            raise EquationError("bad_call", f"clip() takes 3 argument(s), got {given}")
        clipped = self.expr(x, depth)
        for op, bound in (("maximum", lo), ("minimum", hi)):
            if not (isinstance(bound, ast.Constant) and bound.value is None):
                clipped = Op(op, (clipped, self.expr(bound, depth)))
        return clipped


def _unsupported(what: str, node: ast.AST | None = None) -> EquationError:
    line = getattr(node, "lineno", None)
    where = f" (line {line})" if line is not None else ""
    return EquationError("unsupported_form", f"{what}{where} is not in the equation language")


def _module_has(module: str, attr: str) -> bool:
    """Whether `module.attr` exists in the real module (numpy or math): a name the reference
    would find, as opposed to one the model made up."""
    import numpy

    real = math if module == "math" else numpy
    return hasattr(real, attr)


def _module_attr(node: ast.Attribute) -> str | None:
    """'np' for `np.exp`: the attribute sits directly on an allowed module name."""
    if isinstance(node.value, ast.Name) and node.value.id in MODULE_NAMES:
        return node.value.id
    return None


def _int_literal(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
        return int(node.value)
    return None


def _check_exponent(exponent: Node) -> None:
    value = _constant_value(exponent)
    if value is not None and not abs(value) <= MAX_CONST_EXPONENT:
        raise EquationError(
            "too_complex", f"a constant exponent of {value:g} (limit ±{MAX_CONST_EXPONENT:g})"
        )


def _constant_value(node: Node) -> float | None:
    """The value of a constant subtree (no variables or parameters), else None."""
    from pytest_lsrb.equations.compiler import fold_constant

    return fold_constant(node)


# Python the reference would run (LLM-SR executes the program) but the language has no node for.
_RUNNABLE_EXPRESSIONS = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _describe(node: ast.AST) -> str:
    names = {
        ast.Lambda: "a lambda",
        ast.ListComp: "a list comprehension",
        ast.SetComp: "a set comprehension",
        ast.DictComp: "a dict comprehension",
        ast.GeneratorExp: "a generator expression",
        ast.JoinedStr: "an f-string",
        ast.BoolOp: "'and'/'or'",
        ast.List: "a list",
        ast.Tuple: "a tuple",
        ast.Dict: "a dict",
        ast.Set: "a set",
        ast.Await: "await",
        ast.Yield: "yield",
        ast.YieldFrom: "yield",
        ast.NamedExpr: "an assignment expression",
        ast.Starred: "a starred expression",
    }
    return names.get(type(node), f"a {type(node).__name__} expression")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _explicit_param_indices(tree: ast.AST, variables: set[str], const_names: bool) -> list[int]:
    found: list[int] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == PARAMS_NAME
        ):
            idx = _int_literal(node.slice)
            if idx is not None:
                found.append(idx)
        elif const_names and isinstance(node, ast.Name) and node.id not in variables:
            m = _CONST_PARAM.match(node.id)
            if m:
                found.append(int(m.group(1)))
    return found


def _finish(builder: _Builder, root: Node, variables: Sequence[str], kind: str) -> ParseResult:
    if isinstance(root, Op) and root.name in ("lt", "le", "gt", "ge"):
        raise _forbid("a comparison as the equation's value")
    nodes = dag_nodes(root)
    if len(nodes) > MAX_DAG_NODES:
        raise EquationError("too_complex", f"{len(nodes)} distinct nodes (limit {MAX_DAG_NODES})")
    if depth(root) > MAX_DEPTH * 2:
        raise EquationError("too_complex", f"the expression is nested deeper than {MAX_DEPTH * 2} levels")
    size = tree_size(root)
    if size > MAX_TREE_NODES:
        raise EquationError("too_complex", f"{size} expression nodes (limit {MAX_TREE_NODES})")
    n_params = max(builder.params) + 1 if builder.params else 0
    names = tuple(builder.params.get(i, f"c{i}") for i in range(n_params))
    return ParseResult(
        root=root,
        variables=tuple(variables),
        n_params=n_params,
        param_names=names,
        kind=kind,
        used_variables=frozenset(n.name for n in nodes if isinstance(n, Var)),
    )


def _check_variables(variables: Sequence[str]) -> None:
    for name in variables:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
            raise ValueError(f"not a usable variable name: {name!r}")
        if name == PARAMS_NAME:
            raise ValueError("'params' cannot be a variable name")
        if name in STRUCTURAL_KEYWORDS:
            raise ValueError(f"{name!r} cannot be a variable name: equation programs are written with it")


# The words every equation program is written with (`def equation(...)`, `return`, `import numpy
# as np`): a variable so named would take them from the program, so it is refused (`_check_variables`;
# a problem file's `symbols` say so at load). Every other keyword is aliased, `if`/`and`/`in`
# included: in a problem with such an input the word means the input, not the syntax.
STRUCTURAL_KEYWORDS = frozenset({"def", "return", "import", "from", "as"})
KEYWORD_ALIAS_PREFIX = "lsrb_kw_"


def keyword_aliases(variables: Sequence[str]) -> dict[str, str]:
    """alias -> name for the input names that are Python keywords (`lambda`, a wavelength;
    `yield`; `in`): Python cannot parse them as names, so the text is parsed with each renamed to its
    alias and the equation's variables keep the names as written."""
    return {
        f"{KEYWORD_ALIAS_PREFIX}{v}": v
        for v in variables
        if keyword.iskeyword(v) and v not in STRUCTURAL_KEYWORDS
    }


def alias_keywords(text: str, aliases: dict[str, str]) -> str:
    for alias, name in aliases.items():
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", alias, text)
    return text


def _unalias(result: ParseResult, aliases: dict[str, str], variables: Sequence[str]) -> ParseResult:
    """The parse with every aliased variable named as written again."""
    if not aliases:
        return result
    memo: dict[int, Node] = {}
    renamed: dict[str, Var] = {}
    for node in dag_nodes(result.root):
        if isinstance(node, Var) and node.name in aliases:
            memo[id(node)] = renamed.setdefault(node.name, Var(aliases[node.name]))
        elif isinstance(node, Op):
            memo[id(node)] = Op(node.name, tuple(memo[id(a)] for a in node.args))
        else:
            memo[id(node)] = node
    return dataclasses.replace(
        result,
        root=memo[id(result.root)],
        variables=tuple(variables),
        used_variables=frozenset(aliases.get(v, v) for v in result.used_variables),
    )


def parse_expression_ir(
    text: str,
    variables: Sequence[str],
    *,
    free_params: bool = False,
    max_params: int = MAX_PARAMS,
) -> ParseResult:
    _check_variables(variables)
    aliases = keyword_aliases(variables)
    if aliases:
        written = list(variables)
        variables = [next((a for a, n in aliases.items() if n == v), v) for v in variables]
        result = parse_expression_ir(
            alias_keywords(text, aliases), variables, free_params=free_params, max_params=max_params
        )
        return _unalias(result, aliases, written)
    tree = _parse_python(text.strip(), "eval")
    assert isinstance(tree, ast.Expression)
    explicit = _explicit_param_indices(tree, set(variables), const_names=True)
    builder = _Builder(
        variables,
        free_params=free_params,
        max_params=max_params,
        const_names=True,
        first_free_index=max(explicit) + 1 if explicit else 0,
    )
    root = builder.expr(tree.body)
    return _finish(builder, root, variables, "expression")


def parse_function_ir(
    text: str,
    variables: Sequence[str],
    *,
    max_params: int = MAX_PARAMS,
) -> ParseResult:
    """Parse `def f(<variables...>, params): ...`. Arguments bind to variables by name when all
    names match, else by position when the count matches."""
    _check_variables(variables)
    aliases = keyword_aliases(variables)
    if aliases:
        written = list(variables)
        variables = [next((a for a, n in aliases.items() if n == v), v) for v in variables]
        result = parse_function_ir(alias_keywords(text, aliases), variables, max_params=max_params)
        return _unalias(result, aliases, written)
    tree = _parse_python(_dedent(text), "exec")
    assert isinstance(tree, ast.Module)
    func: ast.FunctionDef | None = None
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef):
            if func is not None:
                raise EquationError("bad_signature", "more than one function definition")
            func = stmt
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _check_import(stmt)
        elif i == 0 and _is_docstring(stmt):
            continue
        else:
            raise _forbid(f"a top-level {type(stmt).__name__} statement", stmt)
    if func is None:
        raise EquationError("bad_signature", "no function definition found")
    if func.decorator_list:
        raise _forbid("a decorator", func)
    args = func.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults or args.kw_defaults:
        raise EquationError("bad_signature", "only plain positional arguments are allowed")
    for a in args.args:
        _check_annotation(a.annotation)
    _check_annotation(func.returns)
    arg_names = [a.arg for a in args.args]
    if PARAMS_NAME not in arg_names:
        raise EquationError("bad_signature", "the function has no 'params' argument")
    inputs = [n for n in arg_names if n != PARAMS_NAME]
    if len(set(arg_names)) != len(arg_names):
        raise EquationError("bad_signature", "duplicate argument names")
    builder = _Builder(
        variables, free_params=False, max_params=max_params, const_names=False, first_free_index=0
    )
    if set(inputs) <= set(variables):
        binding = {n: n for n in inputs}
    elif len(inputs) == len(variables):
        binding = dict(zip(inputs, variables, strict=True))
    else:
        raise EquationError(
            "bad_signature",
            f"arguments ({', '.join(inputs)}) do not match the variables ({', '.join(variables)})",
        )
    builder.variables = set()  # inside the body only arguments and locals are names
    for arg_name, var_name in binding.items():
        builder.env[arg_name] = builder.var(var_name)
    body = list(func.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    root = _block(builder, body, top=True)
    if root is None:
        raise EquationError("bad_signature", "the function never returns a value")
    return _finish(builder, root, variables, "function")


# Statements the reference runs that the language cannot follow (the number of iterations, or
# which branch, can depend on anything).
_RUNNABLE_STATEMENTS = (ast.For, ast.While, ast.With, ast.Try)


def _block(builder: _Builder, body: list[ast.stmt], *, top: bool = False, depth: int = 0) -> Node | None:
    """Bind a block's assignments in `builder.env`; the value of its `return`, if it reaches one
    (`depth`: the ifs it is inside, early returns included, bounded like the source's nesting)."""
    if depth > MAX_DEPTH:
        raise EquationError("too_complex", f"if statements nested deeper than {MAX_DEPTH} levels")
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Return):
            if i != len(body) - 1 and top:
                raise EquationError("bad_signature", "statements after the return")
            if stmt.value is None:
                raise EquationError("bad_signature", "the return has no value")
            return builder.expr(stmt.value)
        if isinstance(stmt, ast.If):
            if _returns(stmt.body) != _returns(stmt.orelse):
                # An early return (`if t: return a` then `return b`): the way that does not
                # return goes on with the rest of the block, as Python does.
                rest = body[i + 1 :]
                stmt = ast.If(test=stmt.test, body=[*stmt.body, *rest], orelse=[*stmt.orelse, *rest])
                ast.copy_location(stmt, body[i])
                return _branch(builder, stmt, depth)
            returned = _branch(builder, stmt, depth)
            if returned is not None:  # an early return: what follows never runs
                return returned
        elif isinstance(stmt, ast.Assign):
            _assign(builder, stmt.targets, stmt.value, stmt)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                continue
            _check_annotation(stmt.annotation)
            _assign(builder, [stmt.target], stmt.value, stmt)
        elif isinstance(stmt, ast.AugAssign):
            op = _BINOPS.get(type(stmt.op))
            if op is None or not isinstance(stmt.target, ast.Name):
                raise _forbid("this augmented assignment", stmt)
            current = builder.name(stmt.target)
            value = builder.expr(stmt.value)
            if op == "pow":
                _check_exponent(value)
            _bind(builder, stmt.target.id, Op(op, (current, value)), stmt)
        elif isinstance(stmt, ast.Raise):
            raise _forbid("a raise that the program always reaches", stmt)
        elif isinstance(stmt, ast.Pass) or _is_docstring(stmt):
            continue
        elif isinstance(stmt, _RUNNABLE_STATEMENTS):
            raise _unsupported(f"a {type(stmt).__name__.lower()} statement", stmt)
        else:
            raise _forbid(f"a {type(stmt).__name__} statement", stmt)
    return None


def _returns(body: list[ast.stmt]) -> bool:
    """Whether a block returns on every way through it (a `return`, or an `if` whose two ways
    both do), read from its statements alone: what follows it never runs."""
    return any(
        isinstance(stmt, ast.Return)
        or (isinstance(stmt, ast.If) and _returns(stmt.body) and _returns(stmt.orelse))
        for stmt in body
    )


def _branch(builder: _Builder, stmt: ast.If, depth: int = 0) -> Node | None:
    """An `if` statement. Its test decided by constants alone (`len(params) < 3`, with the
    reference's full-length params) takes its branch; a test on parameters only is a `where` of
    both branches (they must both return, or bind the same names); a test on the data's values
    raises in the reference (numpy's truth value of an array is ambiguous): the model's error."""
    test = builder.expr(stmt.test)
    decided = _constant_value(test)
    if decided is not None:
        return _block(builder, stmt.body if decided != 0 else stmt.orelse, depth=depth + 1)
    if any(isinstance(n, Var) for n in dag_nodes(test)):
        raise _forbid("an if statement on the data's values (numpy cannot take an array's truth value)", stmt)
    before = dict(builder.env)
    then_value = _block(builder, stmt.body, depth=depth + 1)
    then_env, builder.env = builder.env, dict(before)
    else_value = _block(builder, stmt.orelse, depth=depth + 1)
    else_env = builder.env
    if then_value is not None and else_value is not None:
        return Op("where", (test, then_value, else_value))
    if then_value is not None or else_value is not None:
        raise _unsupported("an if statement that returns in one branch only", stmt)
    merged = dict(before)
    for name in set(then_env) | set(else_env):
        a, b = then_env.get(name), else_env.get(name)
        if a is b:
            if a is not None:
                merged[name] = a
            continue
        if a is None or b is None:
            raise _unsupported(f"an if statement that binds '{name}' in one branch only", stmt)
        merged[name] = Op("where", (test, a, b))
    builder.env = merged
    return None


def _assign(builder: _Builder, targets: list[ast.expr], value: ast.expr, stmt: ast.stmt) -> None:
    if len(targets) != 1:
        raise _forbid("chained assignment", stmt)
    target = targets[0]
    if isinstance(target, ast.Name):
        _bind(builder, target.id, builder.expr(value), stmt)
        return
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts):
        names = [t.id for t in target.elts if isinstance(t, ast.Name)]
        values = _unpack(builder, value, len(names), stmt)
        for name, node in zip(names, values, strict=True):
            _bind(builder, name, node, stmt)
        return
    raise _forbid("assigning to anything but a name or a tuple of names", stmt)


def _unpack(builder: _Builder, value: ast.expr, count: int, stmt: ast.stmt) -> list[Node]:
    if isinstance(value, (ast.Tuple, ast.List)):
        if len(value.elts) != count:
            raise _forbid("unpacking a different number of values", stmt)
        return [builder.expr(v) for v in value.elts]
    if (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and value.value.id == PARAMS_NAME
        and isinstance(value.slice, ast.Slice)
    ):
        sl = value.slice
        if sl.step is not None:
            raise _forbid("a params slice with a step", stmt)
        lo = 0 if sl.lower is None else _int_literal(sl.lower)
        hi = (
            lo + count
            if sl.upper is None and lo is not None
            else (_int_literal(sl.upper) if sl.upper is not None else None)
        )
        if lo is None or hi is None or hi - lo != count:
            raise _forbid("a params slice that does not match the names it unpacks into", stmt)
        return [builder.param(i, f"params[{i}]", stmt) for i in range(lo, hi)]
    raise _forbid("unpacking anything but a tuple or a params slice", stmt)


def _bind(builder: _Builder, name: str, node: Node, stmt: ast.stmt) -> None:
    if name.startswith("__"):
        raise _forbid(f"the name '{name}'", stmt)
    if name == PARAMS_NAME:
        raise _forbid("reassigning params", stmt)
    if name in FUNCTION_ALIASES or name in MODULE_NAMES or name in _DANGEROUS_BUILTINS:
        raise _forbid(f"shadowing '{name}'", stmt)
    builder.env[name] = node


def _check_import(stmt: ast.Import | ast.ImportFrom) -> None:
    if isinstance(stmt, ast.ImportFrom):
        raise _forbid("'from ... import'", stmt)
    for alias in stmt.names:
        if alias.name not in _ALLOWED_IMPORTS or (alias.asname not in (None, "np")):
            raise _forbid(f"importing '{alias.name}'", stmt)
        if alias.asname == "np" and alias.name != "numpy":
            raise _forbid(f"importing '{alias.name}' as np", stmt)


def _check_annotation(node: ast.expr | None) -> None:
    """Annotations are never evaluated, but only plain dotted names are accepted anyway."""
    if node is None:
        return
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        if current.attr.startswith("_"):
            raise _forbid(f"the annotation attribute '.{current.attr}'", node)
        current = current.value
    if not isinstance(current, ast.Name) or current.id.startswith("__"):
        raise _forbid("an annotation that is not a plain type name", node)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text.strip("\n"))
