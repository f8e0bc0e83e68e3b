"""The gate in a session reads each run once: the baseline when its options are checked (one read:
the reader's two passes over attempts.jsonl), and the current run's records from the session,
never reading its attempts.jsonl back. Counted with an audit hook on open() in the pytest process,
serially and under xdist (whose controller follows the file the workers append to)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsrb_testing import TACTIC_SUITE

# A plugin given with -p: counts read-only opens of every attempts.jsonl, written at the end.
COUNTER = """
import json, os, sys

OPENS = {}


def _hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        mode, flags = args[1], args[2]
        reading = (mode is not None and "r" in mode and "+" not in mode) or (
            mode is None and isinstance(flags, int) and flags & os.O_ACCMODE == os.O_RDONLY
        )
        if path.endswith("attempts.jsonl") and reading:
            key = os.path.realpath(path)
            OPENS[key] = OPENS.get(key, 0) + 1


sys.addaudithook(_hook)


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open(os.environ["LSRB_TEST_OPENS"], "w") as fh:
            json.dump(OPENS, fh)
"""


def run(tmp_path: Path, out: Path, *args: str) -> dict[str, int]:
    plugins = tmp_path / "plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "count_opens.py").write_text(COUNTER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugins), env.get("PYTHONPATH")]))
    env["LSRB_TEST_OPENS"] = str(tmp_path / "opens.json")
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "count_opens",
        str(TACTIC_SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    argv += [f"--lsrb-output-dir={out}", "--lsrb-max-items=20", "--lsrb-outcome=record", *args]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    opens: dict[str, int] = json.loads((tmp_path / "opens.json").read_text("utf-8"))
    return opens


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_gate_reads_the_baseline_once_and_the_current_run_not_at_all(
    tmp_path: Path, workers: tuple[str, ...]
) -> None:
    baseline = tmp_path / "baseline"
    run(tmp_path, baseline)
    current = tmp_path / "current"
    opens = run(tmp_path, current, f"--lsrb-baseline={baseline}", "--lsrb-max-drop=pass_at_1=0.05", *workers)
    base_file = os.path.realpath(baseline / "attempts.jsonl")
    current_file = os.path.realpath(current / "attempts.jsonl")
    assert opens.get(base_file) == 2, opens  # one read: the reader's two passes
    # serially the session never reads its own file; the controller of xdist workers follows it,
    # once per look, and the gate adds nothing
    follows = opens.get(current_file, 0)
    assert follows == 0 if not workers else follows >= 1, opens
    gate = json.loads((current / "gate.json").read_text("utf-8"))
    assert gate["regressed"] is False and gate["paired_items"] == 20
