"""The repository-level test setup (top-level conftest.py): hypothesis is deterministic unless
asked to explore, and listing the tests succeeds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsrb_testing import REPO

DRAWN: list[int] = []


@given(st.integers())
def _draw(x: int) -> None:
    DRAWN.append(x)


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci", reason="another profile chosen")
def test_ci_profile_is_active_and_draws_the_same_examples_every_time() -> None:
    active = settings()
    assert active.derandomize and active.deadline is None and active.print_blob
    _draw()
    first = list(DRAWN)
    DRAWN.clear()
    _draw()
    assert first == DRAWN and len(first) > 10


def test_an_unknown_profile_is_one_sentence(tmp_path: os.PathLike[str]) -> None:
    env = {**os.environ, "HYPOTHESIS_PROFILE": "nope"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            str(REPO / "tests" / "test_repo_setup.py"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "HYPOTHESIS_PROFILE='nope': no such hypothesis profile (ci or explore)." in proc.stderr


def test_collect_only_exits_0_with_snapshots_on_disk() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            str(REPO / "tests" / "engine" / "test_summary_snapshot.py"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 tests collected" in proc.stdout  # the mock summary and the openai identity
