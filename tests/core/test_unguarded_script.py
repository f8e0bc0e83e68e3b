"""A user's script that calls `pytest.main()` without an `if __name__ == "__main__":` guard runs
one session: the symbolic checker's children (core.bounded) start from our own fork host and never
run the script again, so there is one run directory and `latest` names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lsrb_testing import SUITES

SCRIPT = """
import pytest

# no `if __name__ == "__main__":` guard, as many notebooks and CI scripts are written
print("script body ran", flush=True)
code = pytest.main([{suite!r}, "-q", "-p", "no:cacheprovider", "--lsrb-adapter=mock",
                    "--lsrb-max-items=3", "--lsrb-outcome=record"])
print("pytest.main returned", int(code), flush=True)
"""


def test_an_unguarded_pytest_main_script_makes_one_run(tmp_path: Path) -> None:
    script = tmp_path / "evaluate.py"
    script.write_text(SCRIPT.format(suite=str(SUITES / "llm_srbench")), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("script body ran") == 1, proc.stdout
    assert proc.stdout.count("pytest.main returned 0") == 1, proc.stdout
    folder = tmp_path / "lsrb-out" / "llm_srbench"
    runs = sorted(p.name for p in folder.iterdir() if p.name != "latest")
    assert len(runs) == 1, runs
    assert os.readlink(folder / "latest") == runs[0]
    summary = json.loads((folder / runs[0] / "summary.json").read_text("utf-8"))
    assert summary["complete"] is True and summary["attempts"] == 3
    # the checker did run in a child: every record carries its symbolic verdict
    records = [
        json.loads(line) for line in (folder / runs[0] / "attempts.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(records) == 3 and all(r.get("symbolic_method") for r in records), records
