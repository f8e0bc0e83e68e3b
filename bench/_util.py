"""Helpers shared by the bench scripts: timed subprocess runs with peak RSS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TACTIC_SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"


@dataclass
class Measured:
    seconds: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    cpu_seconds: float = 0.0  # user + system, with the waited-for children (xdist workers)


def run_measured(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Run `cmd` in a fresh process; wall time and the peak RSS of the process (via wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    # wait4 gives this child's own peak RSS (getrusage(RUSAGE_CHILDREN) would be a running max).
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(seconds, usage.ru_maxrss / 1024.0, proc.returncode, out, cpu)


def synthetic_index(path: Path, n_items: int) -> Path:
    """`n_items` rows made from the built-in goals with fresh ids (same shapes, more of them)."""
    base = [json.loads(line) for line in (TACTIC_SUITE / "index.jsonl").read_text().splitlines() if line]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n_items):
            row = dict(base[i % len(base)])
            row["item_id"] = f"{row['item_id']}_{i:07d}"
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def pytest_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


BARE = """
import pytest

@pytest.mark.parametrize("case", range({n}))
def test_noop(case):
    pass
"""


def bare_test_file(path: Path, n: int) -> Path:
    """A pytest file of `n` parametrized no-op tests: the baseline the benches compare against."""
    path.write_text(BARE.format(n=n), encoding="utf-8")
    return path
