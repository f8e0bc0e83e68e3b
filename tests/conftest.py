"""Fixtures shared by the project's tests.

- `shared_data`: the real public data in ../shared/data (tests skip cleanly when it is absent).
- `run_suite`: runs pytest on a suite in a subprocess, like a user would, and returns what it
  printed and wrote; `run_suite_here` the same in this process (pytest.main), ~10x cheaper, for
  tests about what a run writes and prints rather than about its process.

The end-to-end tests (they start processes or servers; `opt_in.py` finds them from their code)
are left out of the default run and run with `--run-slow` or `LSRB_RUN_SLOW=1`, as CI does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import long_first
import pytest
from lsrb_testing import SHARED_DATA, TACTIC_SUITE, RunSuite, SuiteResult
from opt_in import (  # noqa: F401  (the hooks that leave the end-to-end tests out by default)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_report_collectionfinish,
)

# hypothesis profiles (ci, explore) are registered in the repository's top-level conftest.py.

XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def pytest_configure(config: pytest.Config) -> None:
    # Under `-n` (CI runs these tests so) this process is a worker of the tests' run, never of a
    # suite run a test starts, in a child or in this process: xdist's variables, which the
    # adapters read to share a server's slots, would tell those runs they are one of N workers.
    if hasattr(config, "workerinput"):
        for name in XDIST_VARIABLES:
            os.environ.pop(name, None)
    # Under `--dist worksteal`, the long tests start first on every worker (long_first.py); its
    # own plugin, since opt_in's `pytest_collection_modifyitems` already has this module's name.
    if not config.pluginmanager.is_registered(long_first):
        config.pluginmanager.register(long_first, "lsrb-tests-long-first")


@pytest.fixture(autouse=True, scope="module")
def keys_stay_in_their_module() -> Iterator[None]:
    """Keys a test module registers are forgotten when it ends. The process's `KeyRing` redacts
    every key it was given, everywhere, to the end of the process (as a run wants); across the
    test modules of one process that made a later module's output masked or not by the order
    the tests ran in (`lsr***` in a printed command after the credential laws' keys)."""
    from pytest_lsrb.core.redaction import RUN_KEYS

    keys, secrets = RUN_KEYS._keys, RUN_KEYS._secrets
    yield
    RUN_KEYS._keys, RUN_KEYS._secrets = keys, secrets


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
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=tmp_path, env=full_env, timeout=timeout
        )
        return SuiteResult(proc.returncode, proc.stdout, proc.stderr, out_dir)

    return run


# what `run_suite` leaves out, for the same reason: plugins no suite run uses
NOT_USED = ("no:cacheprovider", "no:benchmark", "no:hypothesispytest", "no:syrupy", "no:anyio")


@pytest.fixture
def run_suite_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> RunSuite:
    """`run_suite`, in this process: `pytest.main` with the same command line (`api.run`'s way),
    its terminal output captured. `env` is set for the run's duration; `timeout` is not kept."""

    def run(
        *args: str,
        suite: Path = TACTIC_SUITE,
        out: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 300,
    ) -> SuiteResult:
        out_dir = out or tmp_path / "out"
        plugins = [arg for name in NOT_USED for arg in ("-p", name)]
        # The suite's test modules and conftest are imported by their bare names (pytest's
        # `prepend` mode): another copy of the suite, run before or after in this process (here,
        # by `api.run`), keeps its own under the same names; each run sees only its own.
        root = suite.resolve()
        others = {p.stem: sys.modules.pop(p.stem) for p in root.glob("*.py") if p.stem in sys.modules}
        before = set(sys.modules)
        with monkeypatch.context() as patch:
            patch.chdir(tmp_path)
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            capsys.readouterr()
            code = pytest.main([str(suite), "-q", *plugins, f"--lsrb-output-dir={out_dir}", *args])
            printed = capsys.readouterr()
        for name in set(sys.modules) - before:
            if Path(getattr(sys.modules[name], "__file__", None) or "/").resolve().is_relative_to(root):
                del sys.modules[name]
        sys.modules.update(others)
        return SuiteResult(int(code), printed.out, printed.err, out_dir)

    return run
