"""What to run next: a run that stopped early or met infrastructure errors ends with the exact
command that finishes it, and that command does."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama
from hypothesis import given
from hypothesis import strategies as st
from lsrb_testing import RunSuite

from pytest_lsrb.session.nextstep import resume_command, typed_command, why_unfinished

WORDS = st.sampled_from(
    [
        "--lsrb-resume",
        "--lsrb-resume-or-start",
        "--lsrb-retry-errors",
        "--lsrb-overwrite",
        "-n",
        "2",
        "-q",
        "x",
    ]
)


@given(st.lists(WORDS, max_size=8), st.booleans(), st.booleans())
def test_the_command_resumes_once_and_never_overwrites(words: list[str], retry: bool, own_dir: bool) -> None:
    run_dir = Path("/runs/r1") if own_dir else None
    command = resume_command(["pytest", *words], run_dir, retry_errors=retry)
    assert "--lsrb-overwrite" not in command
    assert sum(w in ("--lsrb-resume", "--lsrb-resume-or-start") for w in command) >= 1
    assert command.count("--lsrb-resume") <= max(1, words.count("--lsrb-resume"))
    if retry:
        assert "--lsrb-retry-errors" in command
    assert resume_command(command, run_dir, retry_errors=retry) == command  # already finishing


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/venv/bin/lsrb", "run", "s"], ["lsrb", "run", "s"]),
        (["/venv/bin/pytest", "s"], ["pytest", "s"]),
        (["/venv/lib/site-packages/pytest/__main__.py", "s"], ["python", "-m", "pytest", "s"]),
        (["/home/me/evaluate.py", "--my-flag"], ["python", "-m", "pytest", "suite", "-q"]),
    ],
)
def test_the_typed_command(argv: list[str], expected: list[str]) -> None:
    assert typed_command(argv, ["suite", "-q"]) == expected


def test_a_clean_run_needs_nothing_more() -> None:
    assert why_unfinished({"complete": True, "infrastructure_attempts": 0}, interrupted=False) is None
    assert why_unfinished({"complete": True}, interrupted=True) is not None
    assert why_unfinished({"complete": False}, interrupted=False) is not None


def test_after_infrastructure_errors_the_printed_command_finishes_the_run(run_suite: RunSuite) -> None:
    with FakeOllama() as fake:
        fake.queue(["server_500"] * 3)  # the first three calls fail on the server's side
        args = ["--lsrb-adapter=openai", f"--lsrb-base-url={fake.url}/v1", "--lsrb-model=smollm2:135m"]
        args += [
            "--lsrb-max-items=6",
            "--lsrb-max-retries=0",
            "--lsrb-concurrency=1",
            "--lsrb-outcome=record",
        ]
        first = run_suite(*args)
        assert first.summary()["infrastructure_attempts"] == 3
        last = first.stdout.strip().splitlines()[-1]
        assert last.startswith("lsrb: 3 attempt(s) ended in an infrastructure error; to finish it, run: ")
        command = shlex.split(last.split("run: ", 1)[1])
        assert command[:3] == ["python", "-m", "pytest"]
        assert command[-2:] == ["--lsrb-resume", "--lsrb-retry-errors"]
        calls = len(fake.chat_requests())
        proc = subprocess.run(
            [sys.executable, *command[1:]],
            cwd=first.out_dir.parent,
            env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(fake.chat_requests()) == calls + 3  # only the three were asked again
    summary = first.summary()  # (the same directory, rewritten by the resume)
    assert summary["infrastructure_attempts"] == 0 and summary["complete"] is True
    assert "to finish it, run" not in proc.stdout


def test_a_clean_run_prints_no_command(run_suite: RunSuite) -> None:
    result = run_suite("--lsrb-max-items=2")
    assert result.returncode == 0 and "to finish it, run" not in result.stdout


# -- a selection is a run (issue #42): -k / -m choose what the run is ---------------------------


def test_a_k_run_is_complete_when_its_selection_is_done(run_suite: RunSuite) -> None:
    result = run_suite("-k", "nat and s0", "--lsrb-max-items=30")
    assert result.returncode == 0, result.stdout
    summary = result.summary()
    assert 0 < summary["attempts"] < 30  # -k kept some of the 30 selected items
    assert summary["complete"] is True and summary["attempts_expected"] == summary["attempts"]
    assert summary["items_expected"] == summary["items"]
    assert "to finish it, run" not in result.stdout and "did not finish" not in result.stdout


@pytest.mark.slow
def test_an_unfinished_k_run_is_finished_by_its_printed_command_and_only_its_selection_runs(
    run_suite: RunSuite,
) -> None:
    with FakeOllama() as fake:
        fake.queue(["server_500"] * 2)
        args = ["--lsrb-adapter=openai", f"--lsrb-base-url={fake.url}/v1", "--lsrb-model=smollm2:135m"]
        args += [
            "--lsrb-max-items=30",
            "--lsrb-max-retries=0",
            "--lsrb-concurrency=1",
            "--lsrb-outcome=record",
        ]
        first = run_suite("-k", "nat", *args)
        selected = first.summary()["attempts_expected"]
        assert 2 < selected < 30 and first.summary()["complete"] is True  # errors are records too
        last = first.stdout.strip().splitlines()[-1]
        assert "2 attempt(s) ended in an infrastructure error; to finish it, run: " in last, last
        command = shlex.split(last.split("run: ", 1)[1])
        assert "-k" in command and "nat" in command
        calls = len(fake.chat_requests())
        proc = subprocess.run(
            [sys.executable, *command[1:]],
            cwd=first.out_dir.parent,
            env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(fake.chat_requests()) == calls + 2  # only the two, nothing outside -k
    summary = first.summary()
    assert summary["complete"] is True and summary["attempts"] == selected == summary["attempts_expected"]
    assert summary["infrastructure_attempts"] == 0
    assert "to finish it, run" not in proc.stdout and "did not finish" not in proc.stdout


@pytest.mark.slow
def test_a_killed_k_run_resumes_what_its_selection_left(run_suite: RunSuite) -> None:
    """Lines lost from attempts.jsonl are what a killed run leaves (it appends as attempts finish):
    the resume with the same -k runs exactly the missing ones and the run is complete."""
    first = run_suite("-k", "nat", "--lsrb-max-items=30")
    attempts = first.out_dir / "attempts.jsonl"
    lines = attempts.read_text(encoding="utf-8").splitlines(keepends=True)
    attempts.write_text("".join(lines[:-3]), encoding="utf-8")
    (first.out_dir / "summary.json").unlink()
    again = run_suite("-k", "nat", "--lsrb-max-items=30", "--lsrb-resume", out=first.out_dir)
    assert again.returncode == 0, again.stdout
    summary = again.summary()
    assert summary["complete"] is True and summary["attempts"] == len(lines) == summary["attempts_expected"]
    assert "did not finish" not in again.stdout


def test_an_xdist_workers_node_ids_name_the_selected_cases() -> None:
    from types import SimpleNamespace
    from typing import Any

    from pytest_lsrb.core.selection import Case
    from pytest_lsrb.session.cases import keys_of_nodeids

    cases: list[Case[Any]] = [Case(SimpleNamespace(item_id=i), s, 0) for i in ("a.b", "c[d]") for s in (0, 1)]
    where = "suites/x/test_x.py::test_goal_to_tactic"
    assert keys_of_nodeids(cases, [f"{where}[a.b#s1]", f"{where}[c[d]#s0]"]) == {("a.b", 1), ("c[d]", 0)}
    assert keys_of_nodeids(cases, []) == set()
    # an id that is no case's (pytest escaped it, another test module): the whole run, never a guess
    assert keys_of_nodeids(cases, [f"{where}[a.b#s1]", f"{where}[zz#s0]"]) is None
    assert keys_of_nodeids(cases, ["tests/test_other.py::test_plain"]) is None


@pytest.mark.slow
def test_a_narrower_k_resume_keeps_what_the_run_had_recorded(run_suite: RunSuite) -> None:
    """Resuming a whole run with -k (to redo a part) finishes that part; the summary still counts
    every attempt the run recorded, not only the -k part."""
    first = run_suite("--lsrb-max-items=12")
    total = first.summary()["attempts"]
    again = run_suite("-k", "nat", "--lsrb-max-items=12", "--lsrb-resume", out=first.out_dir)
    assert again.returncode == 0, again.stdout
    summary = again.summary()
    assert summary["attempts"] == total == summary["attempts_expected"] and summary["complete"] is True
