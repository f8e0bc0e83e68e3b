"""`Program`: one parsed equation, compiled once, evaluated on data with numpy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pytest_lsrb.equations.compiler import BoundProgram, Instr, compile_ir
from pytest_lsrb.equations.ir import Node, tree_size
from pytest_lsrb.equations.parser import (
    MAX_PARAMS,
    ParseResult,
    parse_expression_ir,
    parse_function_ir,
)

DataLike = Mapping[str, Any] | np.ndarray


class Program:
    """A safe equation: `y = f(variables, params)`.

    - `variables`: the input names, in the column order `evaluate` expects for a 2-D array;
    - `n_params`: how many parameters it reads (`params[0]` .. `params[n_params-1]`);
    - `param_names`: how each parameter was written (`c0`, `params[2]`, or a free name like `k`);
    - `node_count`: size of the expression tree (the complexity measure);
    - `kind`: "expression" or "function" (how the source was written).
    """

    def __init__(self, parsed: ParseResult, source: str) -> None:
        self.source = source
        self.root: Node = parsed.root
        self.variables: tuple[str, ...] = parsed.variables
        self.n_params: int = parsed.n_params
        self.param_names: tuple[str, ...] = parsed.param_names
        self.kind: str = parsed.kind
        self.used_variables: frozenset[str] = parsed.used_variables
        self.node_count: int = tree_size(parsed.root)
        self._instrs: list[Instr]
        self._result: int
        self._instrs, self._result = compile_ir(parsed.root)

    @classmethod
    def from_ir(
        cls,
        root: Node,
        variables: Sequence[str],
        n_params: int = 0,
        param_names: Sequence[str] | None = None,
        source: str = "",
    ) -> Program:
        names = tuple(param_names) if param_names is not None else tuple(f"c{i}" for i in range(n_params))
        parsed = ParseResult(
            root=root, variables=tuple(variables), n_params=n_params, param_names=names, kind="expression"
        )
        prog = cls(parsed, source)
        prog.used_variables = frozenset(_used_variables(root))
        if not source:
            prog.source = prog.to_expression()
        return prog

    # -- evaluation -----------------------------------------------------------------------------

    def columns(self, X: DataLike) -> tuple[dict[str, np.ndarray], int]:
        """The data as float64 columns by variable name, and the number of rows."""
        if isinstance(X, np.ndarray):
            arr = np.asarray(X, dtype=np.float64)
            if arr.ndim == 1 and len(self.variables) == 1:
                arr = arr[:, None]
            if arr.ndim != 2 or arr.shape[1] != len(self.variables):
                raise ValueError(
                    f"expected an array of shape (n, {len(self.variables)}) for variables "
                    f"{self.variables}, got {arr.shape}"
                )
            return {name: arr[:, i] for i, name in enumerate(self.variables)}, arr.shape[0]
        cols: dict[str, np.ndarray] = {}
        n: int | None = None
        for name in self.variables:
            if name not in X:
                if name in self.used_variables:
                    raise ValueError(f"the data has no column '{name}'")
                continue
            col = np.asarray(X[name], dtype=np.float64).reshape(-1)
            if n is not None and col.shape[0] != n:
                raise ValueError(f"column '{name}' has {col.shape[0]} rows, expected {n}")
            n = col.shape[0]
            cols[name] = col
        if n is None:
            first = next(iter(X.values()), None)
            n = 1 if first is None else int(np.asarray(first).reshape(-1).shape[0])
        return cols, n

    def bind(self, X: DataLike) -> BoundProgram:
        """Precompute everything that does not depend on the parameters for these rows."""
        cols, n = self.columns(X)
        return BoundProgram(self._instrs, self._result, self.n_params, cols, n)

    def evaluate(self, X: DataLike, params: Any = None) -> np.ndarray:
        """y for every row: shape (n,), float64; non-finite where the math breaks down."""
        return self.bind(X).evaluate(params)

    def value_and_jacobian(self, X: DataLike, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        return self.bind(X).value_and_jacobian(params)

    # -- symbolic -------------------------------------------------------------------------------

    def to_sympy(self, symbols: Mapping[str, Any] | None = None, params: Sequence[Any] | None = None) -> Any:
        """A sympy expression. `symbols` maps variable names to sympy symbols (default: plain
        symbols named like the variables); `params` gives parameter values or symbols (default:
        symbols named by `param_names`, `params[i]` written as `c<i>`)."""
        import sympy

        from pytest_lsrb.equations.sympy_bridge import to_sympy

        syms = dict(symbols or {})
        for name in self.variables:
            if name not in syms:
                syms[name] = sympy.Symbol(name)
        if params is None:
            params = [sympy.Symbol(self._param_symbol_name(i)) for i in range(self.n_params)]
        elif len(params) < self.n_params:
            raise ValueError(f"this equation needs {self.n_params} parameter value(s), got {len(params)}")
        return to_sympy(self.root, syms, list(params))

    def _param_symbol_name(self, i: int) -> str:
        name = self.param_names[i] if i < len(self.param_names) else f"c{i}"
        return f"c{i}" if name.startswith("params[") else name

    def to_expression(self, params: Sequence[float] | None = None) -> str:
        """The equation as an expression in the equation language (parameters written as
        `c<i>`/their free names, or substituted by `params`)."""
        from pytest_lsrb.equations.sympy_bridge import _num_text, to_text

        if params is not None:
            values = [float(v) for v in params]

            def ptext(i: int) -> str:
                s = _num_text(values[i])
                return f"({s})" if s.startswith("-") else s
        else:

            def ptext(i: int) -> str:
                return self._param_symbol_name(i)

        return to_text(self.root, ptext)

    def __repr__(self) -> str:
        return f"Program({self.to_expression()!r}, variables={self.variables}, n_params={self.n_params})"


def _used_variables(root: Node) -> set[str]:
    from pytest_lsrb.equations.ir import Var, dag_nodes

    return {n.name for n in dag_nodes(root) if isinstance(n, Var)}


def parse_expression(
    text: str,
    variables: Sequence[str],
    *,
    free_params: bool = False,
    max_params: int = MAX_PARAMS,
) -> Program:
    """Parse an expression such as `c0*x**2 + np.sin(v)` or `params[0]*exp(-params[1]*t)`.

    `c<i>` and `params[i]` are parameter i. With `free_params=True`, any other unknown name
    (`a`, `k`, `omega0`) becomes the next free parameter. Raises `EquationError`.
    """
    return Program(parse_expression_ir(text, variables, free_params=free_params, max_params=max_params), text)


def parse_function(text: str, variables: Sequence[str], *, max_params: int = MAX_PARAMS) -> Program:
    """Parse `def equation(<inputs>, params): ...; return ...` (LLM-SR skeleton style).

    Inputs bind to `variables` by name when they all match, else by position.
    Raises `EquationError`.
    """
    return Program(parse_function_ir(text, variables, max_params=max_params), text)


def parse_equation(
    text: str, variables: Sequence[str], *, free_params: bool = False, max_params: int = MAX_PARAMS
) -> Program:
    """A function if the text contains `def `, else an expression (an `y = ...`/`y: ...` prefix
    naming no variable is dropped)."""
    stripped = text.strip()
    if "def " in stripped:
        return parse_function(stripped, variables, max_params=max_params)
    return parse_expression(
        _drop_lhs(stripped, variables), variables, free_params=free_params, max_params=max_params
    )


def _drop_lhs(text: str, variables: Sequence[str]) -> str:
    import re

    m = re.match(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*(?:=|:)(?!=)\s*(.+)$", text, re.S)
    if m and m.group(1) not in variables:
        return m.group(2)
    return text
