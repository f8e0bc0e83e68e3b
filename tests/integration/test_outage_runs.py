"""A server that goes away, end to end (issue #46 item 5, #50 item 2): a real `pytest` run of the
tactic suite against a stand-in OpenAI server in its own process (tests/fakes/restartable_server.py)
that is SIGKILLed (every connection reset, the port closed) and, in one test, started again on
the same port.

- Dead for good: the run stops all that is left at once, as infrastructure, once every call has
  failed for `--lsrb-retry-time` (serially and across `-n 2` workers: one shared outage), says
  since when the server is down (while waiting, and once when it stops), and the printed resume
  finishes the run once the server is back. Before, each attempt waited out its own window (20
  attempts, `--lsrb-retry-time 4`, 2 in flight: 47.6 s; bench/attack_outage.py dead).
- Back within the window: the run rides through, every attempt answered, nothing recorded as an
  error, and the terminal said the server was down meanwhile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes.restartable_server import RestartableServer, free_port
from lsrb_testing import TACTIC_SUITE


def command(url: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-p", "no:cacheprovider",
        "--lsrb-adapter=openai", f"--lsrb-base-url={url}", "--lsrb-model=stand-in",
        "--lsrb-outcome=record", "--lsrb-progress=1", f"--lsrb-output-dir={out}", *extra,
    ]  # fmt: skip


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS"))}


def records(out: Path) -> list[dict[str, object]]:
    path = out / "attempts.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


OPTIONS = ("--lsrb-max-items=20", "--lsrb-retry-time=4", "--lsrb-concurrency=2")


@pytest.mark.parametrize(
    "workers",
    [
        # the feature's one end-to-end test in the default run
        pytest.param([], id="serial", marks=pytest.mark.smoke),
        pytest.param(["-n", "2"], id="n2"),
    ],
)
def test_a_dead_server_stops_what_is_left_at_once_and_the_resume_finishes_it(
    tmp_path: Path, workers: list[str]
) -> None:
    port = free_port()
    server = RestartableServer(port, tmp_path / "chats.log", die=True)  # dies at the first chat
    out = tmp_path / "out"
    try:
        done = subprocess.run(
            command(server.url, out, *OPTIONS, *workers),
            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        server.kill()
    printed = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.INTERRUPTED, printed[-3000:]
    # while waiting, the terminal said so; once over, the run said why it stopped, once
    assert "server down since " in printed and "waiting (" in printed, printed[-3000:]
    stops = [line for line in printed.splitlines() if "Interrupted: stopping the run: the server at" in line]
    assert len(stops) == 1 and "has been down since" in stops[0] and "--lsrb-retry-time" in stops[0], printed
    last = printed.strip().splitlines()[-1]
    assert "has been down since" in last and "when it is back, run:" in last and "--lsrb-resume" in last
    # at most the attempts that were in flight are recorded, each the environment's, never the model's
    kept = records(out)
    assert 1 <= len(kept) <= 2 * (2 if workers else 1)
    assert all(r["generation_error_kind"] in ("connection", "timeout") for r in kept), kept
    assert all("has been down since" in str(r["generation_error_message"]) for r in kept), kept
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["complete"] is False
    assert not (out / ".lsrb-outage").exists()  # this session's outage is not the next one's

    back = RestartableServer(port, tmp_path / "again.log")  # the server is back: the printed resume
    try:
        resumed = subprocess.run(
            command(server.url, out, *OPTIONS, *workers, "--lsrb-resume", "--lsrb-retry-errors"),
            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        back.kill()
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-3000:]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["complete"] is True and summary["attempts"] == 20
    assert summary["infrastructure_attempts"] == 0


def test_a_server_back_within_the_window_is_ridden_through(tmp_path: Path) -> None:
    """Killed mid-run with a request in flight, back on the same port 3 s later, inside the retry
    window: every attempt is answered, none is an error, and the terminal said it was down."""
    port = free_port()
    server = RestartableServer(port, tmp_path / "chats.log", latency=0.3)
    out = tmp_path / "out"
    run = subprocess.Popen(
        command(server.url, out, "--lsrb-max-items=8", "--lsrb-retry-time=60", "--lsrb-concurrency=1"),
        cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        while len(records(out)) < 2 and run.poll() is None:
            time.sleep(0.05)
        time.sleep(0.15)  # the third request is in flight
        server.kill()
        time.sleep(3.0)
        server.start()
        printed, _ = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
        server.kill()
    assert run.returncode == 0, printed[-3000:]
    kept = records(out)
    assert len(kept) == 8 and not any(r["generation_error_kind"] for r in kept), kept
    assert any(int(r["model_calls"]) > 1 for r in kept)  # type: ignore[call-overload]  # it was retried
    assert "server down since " in printed, printed[-3000:]
    assert "has been down since" not in printed  # it never stopped
