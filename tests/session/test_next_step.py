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
