"""The original AI-Feynman problems (problem set `feynman`): each equation as written, its inputs
sampled uniformly on the table's ranges, points where it is not finite dropped.

LSR-Transform rewrites these same equations; running both sets lets the analyses compare them by
the ground truth's complexity (the paper's Fig. 4, `sr_complexity` in the summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np

from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, Problem, output_first
from pytest_lsrb.srbench.generate.feynman import FeynmanEquation, describe_symbol, read_feynman_csv

FEYNMAN_SET: Final = "feynman"


def feynman_problem(eq: FeynmanEquation, seed: int, n_train: int, n_test: int) -> Problem | None:
    """One equation as a problem, or None when fewer than n_train + n_test sampled points are finite."""
    rng = np.random.default_rng([stable_hash(FEYNMAN_SET, seed, eq.name) & 0xFFFFFFFF])
    wanted = n_train + n_test
    X = {v.name: rng.uniform(v.low, v.high, 2 * wanted) for v in eq.variables}
    with np.errstate(all="ignore"):
        y = np.broadcast_to(eq.program().evaluate(X), (2 * wanted,))
    ok = np.flatnonzero(np.isfinite(y))[:wanted]
    if len(ok) < wanted:
        return None
    output = eq.output if eq.output not in eq.names else f"{eq.output}_out"
    table = np.column_stack([y[ok], *[X[n][ok] for n in eq.names]])
    return Problem(
        name=f"{GENERATED_PREFIX}{eq.name}_feynman",
        symbols=[output, *eq.names],
        symbol_descs=[describe_symbol(eq.output), *[describe_symbol(n) for n in eq.names]],
        symbol_properties=output_first(len(eq.names)),
        expression=eq.formula,
        desc=f"Physics (a relation from the Feynman Lectures): find {describe_symbol(eq.output)} ({output}).",
        problem_set=FEYNMAN_SET,
        train=table[:n_train],
        test=table[n_train:],
    )


def generate_feynman(
    csv_path: Path,
    *,
    seed: int = 0,
    n_train: int = 500,
    n_test: int = 250,
    equations: Sequence[str] | None = None,
) -> list[Problem]:
    chosen = [e for e in read_feynman_csv(csv_path) if not equations or e.name in equations]
    found = (feynman_problem(eq, seed, n_train, n_test) for eq in chosen)
    return [p for p in found if p is not None]
