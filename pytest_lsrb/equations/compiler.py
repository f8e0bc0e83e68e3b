"""IR -> a flat list of register operations, compiled once and evaluated many times.

Structurally equal subtrees share one register and constant subtrees are folded at compile time.
`bind(columns)` evaluates everything that does not depend on the parameters once, so a fit that
evaluates the same program on the same rows hundreds of times only recomputes the parameter-
dependent registers. The forward-mode Jacobian (d y / d params) rides along the same list.

All arithmetic runs under `np.errstate(all="ignore")` on float64: overflow, division by zero and
invalid values give inf/nan in the result, never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_lsrb.equations.ir import (
    CONST_POWERS,
    INTERNAL_OPS,
    OPS,
    Node,
    Num,
    OpSpec,
    Param,
    Var,
    dag_nodes,
)

_NUM, _VAR, _PARAM, _OP = 0, 1, 2, 3


@dataclass(frozen=True)
class Instr:
    kind: int
    payload: Any  # float | column name | param index | op name
    args: tuple[int, ...]
    param_dependent: bool


def fold_constant(node: Node) -> float | None:
    """The float value of a subtree without variables or parameters, else None."""
    memo: dict[int, float | None] = {}
    with np.errstate(all="ignore"):
        for n in dag_nodes(node):
            if isinstance(n, Num):
                memo[id(n)] = n.value
            elif isinstance(n, (Var, Param)):
                memo[id(n)] = None
            else:
                vals = [memo[id(a)] for a in n.args]
                if any(v is None for v in vals):
                    memo[id(n)] = None
                else:
                    memo[id(n)] = float(OPS[n.name].np_fn(*[np.float64(v) for v in vals]))
    return memo[id(node)]


def compile_ir(root: Node) -> tuple[list[Instr], int]:
    """(instructions, index of the result register)."""
    instrs: list[Instr] = []
    by_key: dict[tuple[Any, ...], int] = {}
    reg_of: dict[int, int] = {}
    consts: dict[int, float] = {}  # register -> value, for folding

    def emit(key: tuple[Any, ...], instr: Instr) -> int:
        if key in by_key:
            return by_key[key]
        instrs.append(instr)
        by_key[key] = len(instrs) - 1
        return len(instrs) - 1

    with np.errstate(all="ignore"):
        for node in dag_nodes(root):
            if isinstance(node, Num):
                reg = emit(("num", node.value), Instr(_NUM, np.float64(node.value), (), False))
                consts[reg] = node.value
            elif isinstance(node, Var):
                reg = emit(("var", node.name), Instr(_VAR, node.name, (), False))
            elif isinstance(node, Param):
                reg = emit(("param", node.index), Instr(_PARAM, node.index, (), True))
            else:
                args = tuple(reg_of[id(a)] for a in node.args)
                if all(a in consts for a in args):
                    value = float(OPS[node.name].np_fn(*[np.float64(consts[a]) for a in args]))
                    reg = emit(("num", value), Instr(_NUM, np.float64(value), (), False))
                    consts[reg] = value
                else:
                    name = node.name
                    if name == "pow" and args[1] in consts and consts[args[1]] in CONST_POWERS:
                        name, args = CONST_POWERS[consts[args[1]]], args[:1]
                    dep = any(instrs[a].param_dependent for a in args)
                    reg = emit(("op", name, args), Instr(_OP, name, args, dep))
            reg_of[id(node)] = reg
    return instrs, reg_of[id(root)]


class BoundProgram:
    """A compiled program bound to one set of rows: evaluate it for many parameter vectors."""

    def __init__(
        self,
        instrs: Sequence[Instr],
        result: int,
        n_params: int,
        columns: Mapping[str, np.ndarray],
        n_rows: int,
    ) -> None:
        self.n_rows = n_rows
        self.n_params = n_params
        self._result = result
        self._instrs = list(instrs)
        regs: list[Any] = [None] * len(self._instrs)
        with np.errstate(all="ignore"):
            for i, ins in enumerate(self._instrs):
                if ins.param_dependent:
                    continue
                if ins.kind == _NUM:
                    regs[i] = ins.payload
                elif ins.kind == _VAR:
                    regs[i] = columns[ins.payload]
                else:
                    regs[i] = _spec(ins.payload).np_fn(*[regs[a] for a in ins.args])
        self._fixed = regs
        self._dynamic = [i for i, ins in enumerate(self._instrs) if ins.param_dependent]

    def _params(self, params: Any) -> np.ndarray:
        if self.n_params == 0:
            return np.zeros(0)
        if params is None:
            raise ValueError(f"this equation needs {self.n_params} parameter value(s), got none")
        p = np.asarray(params, dtype=np.float64).reshape(-1)
        if p.size < self.n_params:
            raise ValueError(f"this equation needs {self.n_params} parameter value(s), got {p.size}")
        return p

    def _shape(self, value: Any) -> np.ndarray:
        out = np.asarray(value, dtype=np.float64)
        if out.shape != (self.n_rows,):
            out = np.broadcast_to(out, (self.n_rows,))
        return np.array(out, dtype=np.float64)  # a fresh, writable array

    def _forward(self, p: np.ndarray) -> list[Any]:
        regs = list(self._fixed)
        instrs = self._instrs
        with np.errstate(all="ignore"):
            for i in self._dynamic:
                ins = instrs[i]
                if ins.kind == _PARAM:
                    regs[i] = p[ins.payload]
                else:
                    regs[i] = _spec(ins.payload).np_fn(*[regs[a] for a in ins.args])
        return regs

    def evaluate(self, params: Any = None) -> np.ndarray:
        try:
            regs = self._forward(self._params(params))
        except ArithmeticError:
            return np.full(self.n_rows, np.nan)
        return self._shape(regs[self._result])

    def _backward(self, regs: list[Any], seed: Any) -> dict[int, Any]:
        """Reverse pass: parameter index -> d(seed . y)/d param, kept per row (no reduction).

        The operations are elementwise, so seeding with 1.0 gives each row's own derivative:
        the whole Jacobian in one pass."""
        instrs = self._instrs
        adj: dict[int, Any] = {self._result: seed}
        out: dict[int, Any] = {}
        with np.errstate(all="ignore"):
            for i in reversed(self._dynamic):
                a = adj.pop(i, None)
                if a is None:
                    continue
                ins = instrs[i]
                if ins.kind == _PARAM:
                    out[ins.payload] = out[ins.payload] + a if ins.payload in out else a
                    continue
                spec = _spec(ins.payload)
                if spec.partial is None:
                    continue
                args = [regs[j] for j in ins.args]
                for k, j in enumerate(ins.args):
                    if not instrs[j].param_dependent:
                        continue
                    part = spec.partial(k, args, regs[i])
                    contrib = a * part
                    adj[j] = adj[j] + contrib if j in adj else contrib
        return out

    def value_and_jacobian(self, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(y of shape (n,), d y / d params of shape (n, n_params))."""
        p = self._params(params)
        jac = np.zeros((self.n_rows, self.n_params))
        try:
            regs = self._forward(p)
            cols = self._backward(regs, 1.0)
        except ArithmeticError:
            return np.full(self.n_rows, np.nan), np.full((self.n_rows, self.n_params), np.nan)
        for k, col in cols.items():
            jac[:, k] = col
        return self._shape(regs[self._result]), jac

    def value_and_grad(self, params: Any, weights: Any) -> tuple[np.ndarray, np.ndarray]:
        """(y, J^T weights): the gradient of sum(weights * y) in one reverse pass. With
        weights = 2*(y - target)/n it is the gradient of the mean squared error."""
        p = self._params(params)
        grad = np.zeros(self.n_params)
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), (self.n_rows,))
        try:
            regs = self._forward(p)
            cols = self._backward(regs, w)
        except ArithmeticError:
            return np.full(self.n_rows, np.nan), np.full(self.n_params, np.nan)
        for k, col in cols.items():
            grad[k] = float(np.sum(col))
        return self._shape(regs[self._result]), grad

    def mse_and_grad(self, params: Any, target: Any) -> tuple[float, np.ndarray]:
        """(mean((y - target)²), its gradient) with one forward and one reverse pass; inf and
        a nan gradient when the equation is not finite on every row."""
        p = self._params(params)
        t = np.asarray(target, dtype=np.float64).reshape(-1)
        try:
            regs = self._forward(p)
            resid = self._shape(regs[self._result]) - t
            with np.errstate(all="ignore"):
                mse = float(np.mean(resid * resid))
            if not np.isfinite(mse):
                return math.inf, np.full(self.n_params, np.nan)
            cols = self._backward(regs, (2.0 / self.n_rows) * resid)
        except ArithmeticError:
            return math.inf, np.full(self.n_params, np.nan)
        grad = np.zeros(self.n_params)
        for k, col in cols.items():
            grad[k] = float(np.sum(col))
        return mse, grad


def _spec(name: str) -> OpSpec:
    return OPS[name] if name in OPS else INTERNAL_OPS[name]
