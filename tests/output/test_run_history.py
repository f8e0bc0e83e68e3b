"""Without --lsrb-output-dir every run gets its own directory: the README's first command works
twice in a row, `latest` names the last run, and `--lsrb-resume` finds the unfinished one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from lsrb_testing import TACTIC_SUITE

from pytest_lsrb.output.runs import follow_latest, new_run_dir, point_latest

RUN_NAME = re.compile(r"^\d{8}T\d{6}Z(\.\d+)?-[0-9a-f]{12}$")
UNUSED = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest", "-p", "no:syrupy")


def run(cwd: Path, *args: str, module: str = "pytest") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [sys.executable, "-m", module, *args]
    if module == "pytest":
        cmd = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", *UNUSED, *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def runs_of(cwd: Path) -> list[Path]:
    folder = cwd / "lsrb-out" / TACTIC_SUITE.name
    return sorted(p for p in folder.iterdir() if p.name != "latest")


def test_the_readme_command_twice_keeps_two_runs_and_latest_names_the_second(tmp_path: Path) -> None:
    first, second = run(tmp_path), run(tmp_path)
    assert first.returncode == 0 and second.returncode == 0, second.stdout[-2000:] + second.stderr
    runs = runs_of(tmp_path)
    assert len(runs) == 2 and all(RUN_NAME.match(p.name) for p in runs), runs
    latest = tmp_path / "lsrb-out" / TACTIC_SUITE.name / "latest"
    assert latest.resolve() == runs[1].resolve()
    summary = json.loads((latest / "summary.json").read_text("utf-8"))
    assert summary["complete"] is True and runs[1].name.endswith(summary["config_hash"][:12])
    assert f"output               lsrb-out/{TACTIC_SUITE.name}/{runs[1].name}/" in second.stdout


def test_workers_write_into_the_directory_their_controller_chose(tmp_path: Path) -> None:
    proc = run(tmp_path, "--lsrb-max-items=6", "--lsrb-samples=2", "-n", "2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    (only,) = runs_of(tmp_path)
    lines = (only / "attempts.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 12 and json.loads((only / "summary.json").read_text("utf-8"))["complete"]


def test_resume_without_a_directory_continues_the_latest_unfinished_run_of_the_same_options(
    tmp_path: Path,
) -> None:
    assert run(tmp_path, "--lsrb-max-items=5").returncode == 0
    assert run(tmp_path, "--lsrb-max-items=4").returncode == 0  # another config: not a candidate
    five = next(
        p for p in runs_of(tmp_path) if len((p / "attempts.jsonl").read_text("utf-8").splitlines()) == 5
    )
    # As if killed after two attempts: no summary, three attempts missing.
    attempts = five / "attempts.jsonl"
    attempts.write_text("".join(attempts.read_text("utf-8").splitlines(keepends=True)[:2]), "utf-8")
    (five / "summary.json").unlink()
    proc = run(tmp_path, "--lsrb-max-items=5", "--lsrb-resume")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert len(runs_of(tmp_path)) == 2  # no new directory
    assert json.loads((five / "summary.json").read_text("utf-8"))["complete"] is True
    assert len(attempts.read_text("utf-8").splitlines()) == 5
    again = run(tmp_path, "--lsrb-max-items=5", "--lsrb-resume")
    assert again.returncode == 4
    assert "holds no unfinished run of this configuration (config hash " in again.stderr
    assert "Traceback" not in again.stderr


def test_every_reader_of_a_run_takes_latest(tmp_path: Path) -> None:
    assert run(tmp_path, "--lsrb-max-items=5").returncode == 0
    (older,) = runs_of(tmp_path)
    latest = f"lsrb-out/{TACTIC_SUITE.name}/latest"
    # The baseline `latest` is the run before this one, though this run moves `latest` to itself.
    gated = run(tmp_path, "--lsrb-max-items=5", f"--lsrb-baseline={latest}")
    assert gated.returncode == 0, gated.stdout[-2000:] + gated.stderr
    assert f"ok against baseline lsrb-out/{TACTIC_SUITE.name}/{older.name}" in gated.stdout
    newer = runs_of(tmp_path)[1]
    assert (newer / "gate.json").is_file()
    report = run(tmp_path, "report", latest, module="pytest_lsrb")
    assert report.returncode == 0 and (newer / "report.html").is_file(), report.stderr
    compare = run(tmp_path, "compare", str(older), latest, module="pytest_lsrb")
    assert compare.returncode == 0, compare.stderr
    merged = run(tmp_path, "merge", latest, "--out", "merged", module="pytest_lsrb")
    assert merged.returncode == 0 and (tmp_path / "merged" / "summary.json").is_file(), merged.stderr


def test_latest_as_a_file_where_symlinks_are_not_allowed(tmp_path: Path) -> None:
    run_dir = new_run_dir(tmp_path, "ab" * 32)
    run_dir.mkdir()
    assert RUN_NAME.match(run_dir.name) and new_run_dir(tmp_path, "ab" * 32) != run_dir
    point_latest(run_dir)
    assert follow_latest(tmp_path / "latest") == run_dir
    (tmp_path / "latest").unlink()
    (tmp_path / "latest").write_text(run_dir.name + "\n", encoding="utf-8")
    assert follow_latest(tmp_path / "latest") == run_dir
    assert follow_latest(run_dir) == run_dir
