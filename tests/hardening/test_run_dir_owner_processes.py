"""Issue #38's attacks on run-directory ownership, with real processes against a local stand-in
server: the same command twice at once on one run, an `lsrb run` of several models killed with
SIGKILL, and Ctrl-C on it. Each counts what the server was asked and what attempts.jsonl holds."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama
from lsrb_testing import TACTIC_SUITE

pytestmark = pytest.mark.slow
ITEMS = 20  # x 2 samples


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama(latency_s=0.1) as fake:
        yield fake


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}


def options(fake: FakeOllama) -> list[str]:
    return [
        "--lsrb-adapter=openai", f"--lsrb-base-url={fake.url}/v1", "--lsrb-allow-model-alias",
        f"--lsrb-max-items={ITEMS}", "--lsrb-samples=2", "--lsrb-outcome=record", "--lsrb-concurrency=2",
        "-q", "-p", "no:cacheprovider",
    ]  # fmt: skip


def chats(fake: FakeOllama) -> int:
    return len(fake.chat_requests())


def keys(run_dir: Path) -> Counter[tuple[str, int]]:
    lines = (run_dir / "attempts.jsonl").read_text().splitlines()
    return Counter((r["item_id"], r["sample_index"]) for r in map(json.loads, lines))


def live_processes(marker: str) -> list[int]:
    """Processes of this machine whose command line names `marker` (the run's folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def test_the_same_command_twice_at_once_runs_once(server: FakeOllama, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = [
        sys.executable, "-m", "pytest", str(TACTIC_SUITE), *options(server),
        f"--lsrb-output-dir={run_dir}", "--lsrb-resume-or-start", "--lsrb-model=smollm2:135m",
    ]  # fmt: skip
    first = subprocess.Popen(command, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, text=True)
    while not (run_dir / "attempts.jsonl").exists() and first.poll() is None:
        time.sleep(0.05)
    # The first run is paused (it still holds its lock) while the second starts: on a loaded
    # machine the first's 2 s of work could end before the second's Python was up, and the
    # second then rightly resumed a finished run instead of meeting a running one.
    os.kill(first.pid, signal.SIGSTOP)
    try:
        second = subprocess.run(command, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    first_out = first.communicate(timeout=300)[0]
    assert first.returncode == 0, first_out[-2000:]
    assert second.returncode == 4
    refusal = [line for line in (second.stdout + second.stderr).splitlines() if line.startswith("ERROR:")]
    assert len(refusal) == 1 and f"pid {first.pid} on " in refusal[0] and "in use by another" in refusal[0]
    found = keys(run_dir)
    assert len(found) == ITEMS * 2 and set(found.values()) == {1}  # every attempt once
    assert chats(server) == ITEMS * 2  # and paid once


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_a_lock_file_deleted_mid_run_stops_the_run_and_lets_no_second_command_in(
    server: FakeOllama, tmp_path: Path, workers: list[str]
) -> None:
    """Issue #46 item 6: `.lsrb-lock` deleted under a running command (a dot-file cleanup), then
    the same command started again. Before: both ran, 70 records for 40 attempts, 30 paid twice,
    both exit 0. Now the second is refused (the folder itself is locked), the first stops in one
    sentence, and every attempt is recorded and paid once."""
    run_dir = tmp_path / "run"
    command = [
        sys.executable, "-m", "pytest", str(TACTIC_SUITE), *options(server), *workers,
        f"--lsrb-output-dir={run_dir}", "--lsrb-resume-or-start", "--lsrb-model=smollm2:135m",
    ]  # fmt: skip
    first = subprocess.Popen(
        command, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    attempts = run_dir / "attempts.jsonl"
    while (not attempts.exists() or len(attempts.read_text().splitlines()) < 4) and first.poll() is None:
        time.sleep(0.05)
    os.kill(first.pid, signal.SIGSTOP)  # (so that the first cannot finish before the second starts)
    try:
        (run_dir / ".lsrb-lock").unlink()
        second = subprocess.run(command, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    first_out = first.communicate(timeout=300)[0]
    assert second.returncode == 4, second.stdout + second.stderr
    assert "in use by another lsrb command" in second.stdout + second.stderr
    said = [
        line for line in first_out.splitlines() if ".lsrb-lock was deleted while this run held it" in line
    ]
    assert said, first_out[-3000:]
    assert first.returncode != 0  # stopped, not finished
    found = keys(run_dir)
    assert all(n == 1 for n in found.values())  # no attempt twice
    assert chats(server) == sum(found.values())  # and none paid twice (or paid and not kept)
    assert 4 <= len(found) < ITEMS * 2  # it did stop


def lsrb_models(fake: FakeOllama, group: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest_lsrb", "run", str(TACTIC_SUITE), "--lsrb-model=smollm2:135m",
        "--lsrb-model=qwen2.5:7b", *options(fake), f"--lsrb-output-dir={group}", *extra,
    ]  # fmt: skip


def wait_for_chats(fake: FakeOllama, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while chats(fake) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be stopped"


def test_a_killed_lsrb_run_takes_its_children_with_it(server: FakeOllama, tmp_path: Path) -> None:
    group = tmp_path / "group"
    parent = subprocess.Popen(
        lsrb_models(server, group), cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL, text=True
    )
    wait_for_chats(server, 5, parent)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while live_processes(str(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert live_processes(str(group)) == []  # the child pytest ended with its parent
    at_end = chats(server)
    time.sleep(2)
    assert chats(server) == at_end  # and nothing sends any more
    assert at_end < ITEMS * 2  # (before: the child ran the whole first model, then the second)


def test_ctrl_c_on_several_models_ends_with_the_line_that_resumes_them_all(
    server: FakeOllama, tmp_path: Path
) -> None:
    group = tmp_path / "group"
    parent = subprocess.Popen(
        lsrb_models(server, group),
        cwd=tmp_path,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own terminal group: Ctrl-C reaches it alone, as a shell's would
    )
    wait_for_chats(server, 5, parent)
    os.killpg(parent.pid, signal.SIGINT)
    text = parent.communicate(timeout=120)[0]
    assert "Traceback" not in text, text[-3000:]
    assert parent.returncode == 2  # pytest's "interrupted", as one run stopped so
    again = [line for line in text.splitlines() if "to resume them all, run: " in line]
    assert len(again) == 1 and text.rstrip().endswith(again[0])
    words = shlex.split(again[0].split("run: ", 1)[1])
    assert words[:2] == ["lsrb", "run"]
    command = [sys.executable, "-m", "pytest_lsrb", *words[1:]]
    resumed = subprocess.run(command, cwd=tmp_path, env=env(), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    for label in ("smollm2-135m", "qwen2.5-7b"):
        assert json.loads((group / label / "summary.json").read_text())["complete"] is True
        assert set(keys(group / label).values()) == {1}
