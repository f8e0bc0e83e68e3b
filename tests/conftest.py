"""Fixtures shared by the project's tests.

- `shared_data`: the real public data in ../shared/data (tests skip cleanly when it is absent).
- `run_suite`: runs pytest on a suite in a subprocess, like a user would, and returns what it
  printed and wrote.

The end-to-end tests (they start processes or servers; `opt_in.py` finds them from their code)
are left out of the default run and run with `--run-slow` or `LSRB_RUN_SLOW=1`, as CI does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsrb_testing import SHARED_DATA, TACTIC_SUITE, RunSuite, SuiteResult
from opt_in import (  # noqa: F401  (the hooks that leave the end-to-end tests out by default)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_report_collectionfinish,
)

# hypothesis profiles (ci, explore) are registered in the repository's top-level conftest.py.


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared public data is not present at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def run_suite(tmp_path: Path) -> RunSuite:
    """`run_suite(*pytest_args, suite=TACTIC_SUITE, out=None, env=None)` in a subprocess."""

    def run(
        *args: str,
        suite: Path = TACTIC_SUITE,
        out: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 300,
    ) -> SuiteResult:
        out_dir = out or tmp_path / "out"
        # Plugins the suite run does not use are left out: half the start-up cost of each run.
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            str(suite),
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:benchmark",
            "-p",
            "no:hypothesispytest",
            "-p",
            "no:syrupy",
            "-p",
            "no:anyio",
            f"--lsrb-output-dir={out_dir}",
            *args,
        ]
        full_env = {**os.environ, **(env or {})}
        full_env.pop("PYTEST_ADDOPTS", None)
        # a worker's place, when these tests themselves run under xdist: a serial run is no worker
        for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
            full_env.pop(name, None)
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=tmp_path, env=full_env, timeout=timeout
        )
        return SuiteResult(proc.returncode, proc.stdout, proc.stderr, out_dir)

    return run
