"""--lsrb-resume-or-start: one command that starts a run where there is none and continues it where
there is one (what a requeued job or a retried pod runs again), with the same options only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsrb_testing import TACTIC_SUITE, RunSuite


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_the_same_command_starts_then_continues_the_run(run_suite: RunSuite) -> None:
    first = run_suite("--lsrb-resume-or-start", "--lsrb-max-items=5")
    assert first.returncode == 0, first.stdout + first.stderr
    assert len(first.attempts()) == 5 and first.summary()["complete"] is True
    again = run_suite("--lsrb-resume-or-start", "--lsrb-max-items=5")
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(again.attempts()) == 5  # nothing was asked again
    assert again.summary()["complete"] is True


def test_it_continues_only_a_run_of_the_same_options(run_suite: RunSuite) -> None:
    assert run_suite("--lsrb-resume-or-start", "--lsrb-max-items=3").returncode == 0
    other = run_suite("--lsrb-resume-or-start", "--lsrb-max-items=3", "--lsrb-seed=7")
    assert other.returncode == 4  # pytest's usage error: nothing ran
    assert "was written by a different run" in other.stdout + other.stderr
    assert "changed: seed" in other.stdout + other.stderr
    assert len(other.attempts()) == 3


def test_it_does_not_go_with_overwrite(run_suite: RunSuite) -> None:
    result = run_suite("--lsrb-resume-or-start", "--lsrb-overwrite")
    assert result.returncode == 4
    assert (
        "--lsrb-resume-or-start and --lsrb-overwrite contradict each other" in result.stdout + result.stderr
    )


def test_in_the_runs_folder_it_keeps_one_run(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    argv = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider"]
    argv += ["--lsrb-resume-or-start", "--lsrb-max-items=3"]
    for _ in range(2):
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = tmp_path / "lsrb-out" / TACTIC_SUITE.name
    runs = [p for p in folder.iterdir() if p.name != "latest"]
    assert len(runs) == 1 and os.readlink(folder / "latest") == runs[0].name
