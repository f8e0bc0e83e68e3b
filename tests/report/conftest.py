"""Runs the report tests read: one real mock-suite run (as a user runs it) and synthetic runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_runs import equation_run, tactic_run  # noqa: E402


@pytest.fixture(scope="session")
def mock_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in tactic suite run with the mock adapter, 2 samples per item, in a subprocess."""
    out = tmp_path_factory.mktemp("mock-run") / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(REPO / "suites" / "goal_to_tactic_proposal_v1"),
            "-q",
            "-p",
            "no:cacheprovider",
            f"--lsrb-output-dir={out}",
            "--lsrb-samples=2",
        ],
        capture_output=True,
        text=True,
        cwd=out.parent,
        env=env,
        timeout=300,
    )
    assert (out / "summary.json").exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


@pytest.fixture(scope="session")
def tactic_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(baseline, current) synthetic tactic runs over the same items; the baseline holds a hostile output."""
    root = tmp_path_factory.mktemp("tactic-pair")
    base = tactic_run(root / "base", seed=1, skill=0.35, hostile_item=True, model="model-a")
    cur = tactic_run(root / "cur", seed=1, skill=0.6, hostile_item=True, model="model-b")
    return base, cur


@pytest.fixture(scope="session")
def equation_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("equation-pair")
    return equation_run(root / "base", seed=5, model="model-a"), equation_run(root / "cur", seed=1)
