"""What a run's process keeps of pytest's reports once the terminal showed them (issue #27,
`session.seams.reports`): passed reports become one shared stand-in, failures and skips keep theirs,
the summary line and `-rA` read the same, and the terminal's per-test id set stays small."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
INSPECT_CONFTEST = """
import json, os
import pytest

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    if hasattr(terminalreporter.config, "workerinput"):
        return
    stats = terminalreporter.stats
    kinds = {key: sorted({type(r).__name__ for r in reports}) for key, reports in stats.items()}
    counts = {key: len(reports) for key, reports in stats.items()}
    out = {
        "kinds": kinds,
        "counts": counts,
        # pytest >= 8.1 (the count its progress reads); None on 8.0, which reads the set's size
        "reported_progress": getattr(terminalreporter, "reported_progress", None),
        "ids_held": sum(1 for _ in set.__iter__(terminalreporter._progress_nodeids_reported)),
        "stash_entries": sum(len(item.stash._storage) for item in terminalreporter._session.items),
    }
    with open(os.environ["LSRB_INSPECT_OUT"], "w") as fh:
        json.dump(out, fh)
"""


@pytest.fixture(scope="module")
def suite_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite") / SUITE.name
    shutil.copytree(SUITE, root, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (root / "conftest.py").write_text(INSPECT_CONFTEST, encoding="utf-8")
    return root


def run(suite: Path, tmp: Path, *extra: str) -> tuple[dict[str, Any], str]:
    out = tmp / "inspect.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "--lsrb-max-items=6"]
    cmd += ["--lsrb-samples=2", f"--lsrb-output-dir={tmp / 'run'}", "--lsrb-overwrite", *extra]
    done = subprocess.run(
        cmd, cwd=tmp, env={**env, "LSRB_INSPECT_OUT": str(out)}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


@pytest.mark.parametrize("extra", [(), ("-n", "2")])
def test_passed_reports_are_counted_not_kept(
    suite_copy: Path, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    seen, stdout = run(suite_copy, tmp_path, *extra)
    assert seen["counts"]["passed"] == 12
    assert seen["kinds"]["passed"] == ["Counted"]
    assert seen["kinds"].get("", ["Counted"]) == ["Counted"]
    if seen["reported_progress"] is not None:  # pytest >= 8.1: ids go as tests finish
        assert seen["reported_progress"] == 12 and seen["ids_held"] == 0
    else:  # pytest 8.0 adds a test's id after its last report: the set is left as pytest keeps it
        assert seen["ids_held"] == 12
    assert seen["stash_entries"] == 0  # a serial run's finished items keep no stash entry
    assert "12 passed" in stdout.splitlines()[-1]
    assert "[100%]" in stdout


def test_listing_passes_keeps_their_reports(suite_copy: Path, tmp_path: Path) -> None:
    seen, stdout = run(suite_copy, tmp_path, "-rA")
    assert seen["kinds"]["passed"] == ["TestReport"]
    assert stdout.count("PASSED suites/") + stdout.count("PASSED ") >= 12
