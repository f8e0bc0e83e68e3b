"""Interchangeable inputs of an equation: which variables a renaming can swap without changing it.

LSR-Transform solves an equation for each input. When a renaming σ of the inputs leaves the
equation unchanged (`q1*q2/(4*pi*epsilon*r**2)` under q1 ↔ q2), solving for q2 gives σ applied to
the solution for q1: the same formula with the inputs renamed. Such a problem is a duplicate; one
pivot per orbit of the symmetry group is kept (its first input in the table's order).

The symmetries looked for are the transpositions and the products of two disjoint transpositions
of the inputs (`x1*y1 + x2*y2`: x1 ↔ x2 together with y1 ↔ y2). A renaming counts as a symmetry
when the equation takes the same value before and after it at 64 points drawn on the variables'
ranges (a swapped pair on the hull of both ranges), to 1e-9 relative, on at least 16 points where
both values are finite. The orbits are the connected components of the graph joining every input
to its image under every symmetry found.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Final

import numpy as np

from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.equations import Program

POINTS: Final = 64
MIN_FINITE_POINTS: Final = 16
REL_TOL: Final = 1e-9

Renaming = dict[str, str]  # input -> the input whose column it takes


def _candidate_renamings(names: Sequence[str]) -> list[Renaming]:
    swaps = [(a, b) for a, b in combinations(names, 2)]
    out: list[Renaming] = [{a: b, b: a} for a, b in swaps]
    for (a, b), (c, d) in combinations(swaps, 2):
        if len({a, b, c, d}) == 4:
            out.append({a: b, b: a, c: d, d: c})
    return out


def is_symmetry(
    program: Program, ranges: dict[str, tuple[float, float]], renaming: Renaming, seed: int = 0
) -> bool:
    """Whether swapping the inputs as `renaming` says leaves `program` unchanged (numerically)."""
    rng = np.random.default_rng(stable_hash("symmetry", seed, sorted(renaming.items())) % 2**63)
    moved = set(renaming)
    lo = min(ranges[n][0] for n in moved)
    hi = max(ranges[n][1] for n in moved)
    X = {
        n: rng.uniform(lo, hi, POINTS) if n in moved else rng.uniform(*ranges[n], POINTS)
        for n in program.variables
    }
    swapped = {n: X[renaming.get(n, n)] for n in program.variables}
    with np.errstate(all="ignore"):
        f = np.broadcast_to(program.evaluate(X), (POINTS,))
        g = np.broadcast_to(program.evaluate(swapped), (POINTS,))
    ok = np.isfinite(f) & np.isfinite(g)
    if ok.sum() < MIN_FINITE_POINTS:
        return False
    scale = np.maximum(np.abs(f[ok]), np.abs(g[ok]))
    return bool(np.all(np.abs(f[ok] - g[ok]) <= REL_TOL * scale))


def symmetries(program: Program, ranges: dict[str, tuple[float, float]]) -> list[Renaming]:
    """The candidate renamings of the inputs `program` reads that leave it unchanged."""
    names = [n for n in program.variables if n in program.used_variables]
    return [r for r in _candidate_renamings(names) if is_symmetry(program, ranges, r)]


def orbit_representatives(program: Program, ranges: dict[str, tuple[float, float]]) -> dict[str, str]:
    """{input: the first input (in `program.variables` order) of its orbit}."""
    order = list(program.variables)
    parent = {n: n for n in order}

    def find(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for renaming in symmetries(program, ranges):
        for a, b in renaming.items():
            ra, rb = find(a), find(b)
            if ra != rb:
                first, second = sorted((ra, rb), key=order.index)
                parent[second] = first
    return {n: find(n) for n in order}
