"""The two ways a suite test gets its attempt give the same records: `lsrb_attempt` as the test's
own argument (a direct parameter filled by a setup hook, the fast path) and `lsrb_attempt`
reached through another fixture (the fixture path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pytest_lsrb.engine.records import strip_timing

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"

THROUGH_A_FIXTURE = """
import pytest


@pytest.fixture
def answer(lsrb_attempt):
    return lsrb_attempt


def test_goal_to_tactic(answer, lsrb_case):
    assert answer.case == lsrb_case
    answer.check()
"""


def run(suite: Path, out: Path, *extra: str) -> list[dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(suite),
            "-q",
            "-p",
            "no:cacheprovider",
            "--lsrb-max-items=12",
            "--lsrb-samples=2",
            "--lsrb-outcome=record",
            f"--lsrb-output-dir={out}",
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=out.parent,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "24 passed" in proc.stdout
    lines = (out / "attempts.jsonl").read_text("utf-8").splitlines()
    return sorted(
        (strip_timing(json.loads(line)) for line in lines),
        key=lambda r: (str(r["item_id"]), int(str(r["sample_index"]))),
    )


def test_direct_and_fixture_paths_write_the_same_attempts(tmp_path: Path) -> None:
    other = tmp_path / "suite"
    shutil.copytree(SUITE, other, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (other / "test_goal_to_tactic_proposal_v1.py").write_text(THROUGH_A_FIXTURE, encoding="utf-8")
    direct = run(SUITE, tmp_path / "direct")
    assert run(other, tmp_path / "fixture") == direct
    assert run(SUITE, tmp_path / "xdist", "-n", "2") == direct
