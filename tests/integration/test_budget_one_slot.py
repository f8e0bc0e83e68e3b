"""Budgets against one-slot servers (issue #38): llama.cpp's default and Ollama's
`OLLAMA_NUM_PARALLEL=1`. Before the budget was asked under the slot permit, the same budgeted
command at the default concurrency hung in most tries (a later attempt held the only budget place
waiting for the permit that the earlier one, stuck waiting for the budget, never asked for).

The server is the llama.cpp stand-in with one slot (tests/fakes/llama_slots.py), billing 150
prompt + 100 completion tokens an answer; every run has a deadline, so a hang fails the test
instead of blocking it. The tactic suite's requests have a worst case of about 720 tokens (its
prompt's bytes, the template's allowance, and `--lsrb-max-tokens 100`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.llama_slots import SlotLlama

pytestmark = pytest.mark.slow

TACTIC_SUITE = Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1"
BUDGET = 2000  # room for a few answers of 250 tokens, then a stop with requests still to make


def run_to_end(url: str, out: Path, *extra: str, timeout: float = 120) -> tuple[int | None, str]:
    """A run in its own process group: (its exit code, its output), or (None, output) when it had
    not ended by `timeout` (then every process of it is killed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST") and k != "PYTEST_ADDOPTS"}
    proc = subprocess.Popen(
        suite_command(url, out, *extra), cwd=out.parent, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        text = proc.communicate(timeout=timeout)[0]
        return proc.returncode, text
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return None, proc.communicate()[0]


def suite_command(url: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider",
        "--lsrb-adapter=openai", f"--lsrb-base-url={url}", "--lsrb-model=smollm2",
        "--lsrb-outcome=record", "--lsrb-progress=0", f"--lsrb-output-dir={out}", *extra,
    ]  # fmt: skip


def stand_in(**kwargs: Any) -> SlotLlama:
    return SlotLlama(slots=1, prompt_tokens=150, completions=lambda n: 100, **kwargs)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_budget_on_a_one_slot_server_stops_in_twenty_runs_in_a_row(
    xdist: list[str], tmp_path: Path
) -> None:
    for i in range(20):
        server = stand_in(seconds=0.02)
        try:
            out = tmp_path / f"run{i}" / "out"
            out.parent.mkdir()
            code, text = run_to_end(
                server.url, out, "--lsrb-max-items=10", "--lsrb-max-tokens=100",
                f"--lsrb-max-total-tokens={BUDGET}", *xdist,
            )  # fmt: skip
        finally:
            server.close()
        assert code is not None, f"try {i} hung after {len(server.arrivals)} requests:\n{text[-2000:]}"
        assert code == 2, text[-2000:]  # stopped at its budget
        assert "the run stopped at its budget (--lsrb-max-total-tokens 2000; spent" in text
        assert 0 < server.billed <= BUDGET
        assert f"spent {server.billed})" in text  # the settled spend: everything billed


def worker_pids(root: int) -> list[int]:
    """The xdist workers under `root` (execnet starts them as `python -c` reading stdin)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            todo.extend(children)
            for child in children:
                try:
                    if b"sys.stdin" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(child)
                except OSError:
                    pass
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the xdist workers through /proc")
def test_a_worker_killed_holding_a_reservation_neither_hangs_the_run_nor_overspends(tmp_path: Path) -> None:
    """Two slots, two workers, slow answers: a worker is SIGKILLed while its request (and its
    budget reservation) is in flight. The run must end, finished or stopped at its budget, with
    the server's bill (the dead request counted at its full cost) within the budget."""
    budget = 3000
    server = SlotLlama(slots=2, seconds=0.5, prompt_tokens=150, completions=lambda n: 30)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST") and k != "PYTEST_ADDOPTS"}
    command = suite_command(
        server.url, out, "--lsrb-max-items=20", "--lsrb-max-tokens=30", f"--lsrb-max-total-tokens={budget}",
        "-n", "2",
    )  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        victims: list[int] = []
        while not victims and time.monotonic() < deadline and proc.poll() is None:
            if server.in_flight >= 2:  # each worker holds a request, so each holds a reservation
                victims = worker_pids(proc.pid)[:1]
            time.sleep(0.02)
        assert victims, "never saw both workers' requests in flight"
        os.kill(victims[0], signal.SIGKILL)
        try:
            text = proc.communicate(timeout=180)[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the run hung after a worker died:\n{proc.communicate()[0][-3000:]}")
    finally:
        server.close()
    assert proc.returncode in (0, 1, 2), text[-3000:]
    assert server.billed <= budget, text[-3000:]
