"""The ways in: `python -m lean_sorry_repos_benchmark` (the benchmark card's entry point) runs the
Lean tactic suite like `lsrb run goal_to_tactic_proposal_v1`, and `lsrb --version` answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)  # fmt: skip


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_python_m_lean_sorry_repos_benchmark_runs_the_tactic_suite(tmp_path: Path) -> None:
    proc = run("lean_sorry_repos_benchmark", "--lsrb-max-items=3", "--lsrb-output-dir=o", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "3 passed" in proc.stdout
    summary = json.loads((tmp_path / "o" / "summary.json").read_text("utf-8"))
    assert summary["suite"] == "goal_to_tactic_proposal_v1" and summary["complete"] is True
    bad = run("lean_sorry_repos_benchmark", "--lsrb-samples=0", cwd=tmp_path)
    assert (
        bad.returncode == 2 and "--lsrb-samples: expected a whole number" in bad.stderr
    )  # lsrb's usage status


def test_lsrb_version_is_the_installed_version(tmp_path: Path) -> None:
    proc = run("pytest_lsrb", "--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"lsrb (pytest-lsrb) {version('pytest-lsrb')}\n"
