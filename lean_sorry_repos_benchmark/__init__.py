"""The Lean sorry-repos benchmark's entry point: `python -m lean_sorry_repos_benchmark [args]`
runs the built-in Lean tactic suite (goal_to_tactic_proposal_v1) exactly like
`lsrb run goal_to_tactic_proposal_v1 [args]`; every argument goes to pytest, so `--lsrb-*`
options, `-k`, `-n` and the rest work as in the README.

PYTEST_DONT_REWRITE: imported before `pytest.main`, like `pytest_lsrb` (whose docstring says why)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pytest_lsrb import __version__

SUITE = "goal_to_tactic_proposal_v1"

__all__ = ["SUITE", "__version__", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    from pytest_lsrb.cli import main as lsrb

    return lsrb(["run", SUITE, *(sys.argv[1:] if argv is None else argv)])
