"""The `lsrb` command as a user runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsrb_testing import RunSuite, lsrb


def test_import_sorrydb_then_run_the_mock_suite_over_it(
    shared_data: Path, run_suite: RunSuite, tmp_path: Path
) -> None:
    index = tmp_path / "index.jsonl"
    proc = lsrb(
        "import",
        "sorrydb",
        str(shared_data / "sorrydb" / "SorryDB_2601_sample.json"),
        "-o",
        str(index),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "wrote 291 index rows" in proc.stdout
    result = run_suite(f"--lsrb-index={index}", "--lsrb-outcome=record", "-n", "2")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    assert len(result.attempts()) == 291
    assert result.summary()["complete"] is True


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_lsrb_run_finds_a_builtin_suite_by_name(tmp_path: Path) -> None:
    proc = lsrb(
        "run",
        "goal_to_tactic_proposal_v1",
        f"--lsrb-output-dir={tmp_path / 'o'}",
        "--lsrb-max-items=5",
        "-q",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 passed" in proc.stdout
    assert (tmp_path / "o" / "summary.json").exists()


def test_lsrb_run_names_the_suites_it_knows(tmp_path: Path) -> None:
    proc = lsrb("run", "no_such_suite", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no suite 'no_such_suite' (built-in suites: " in proc.stderr
    assert "goal_to_tactic_proposal_v1" in proc.stderr
