"""Runs of the tactic suite killed with SIGKILL mid-run and resumed at once, against a llama.cpp
stand-in that counts what it bills (`fakes.llama_slots.SlotLlama`): what issue #46 item 3 measured
(14,000 tokens billed for a 12,000 budget). Shared by tests/hardening/test_budget_crash_runs.py
and bench/attack_budget_crash.py (which runs it against any checkout).

`victim`: `controller` (its `-n` workers live on, finishing the requests in flight), `worker` (one
`-n` worker), `group` (the whole process group, as the OOM killer or a batch system does).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from fakes.llama_slots import SlotLlama

VICTIMS = ("controller", "worker", "group")


@dataclass
class CrashOutcome:
    victim: str
    budget: int
    billed: int  # tokens the server billed, over every session
    sessions: list[str] = field(default_factory=list)  # each session's exit, and how it ended

    @property
    def over(self) -> bool:
        return self.billed > self.budget


def descendants(root: int) -> list[int]:
    """Every process under `root` (Linux /proc)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for children in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                kids = [int(c) for c in children.read_text().split()]
            except OSError:
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def command(tree: Path, url: str, out: Path, budget: int, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", str(tree / "suites" / "goal_to_tactic_proposal_v1"), "-q",
        "-p", "no:cacheprovider", "--lsrb-adapter=openai", f"--lsrb-base-url={url}",
        "--lsrb-model=smollm2", "--lsrb-outcome=record", "--lsrb-progress=0", f"--lsrb-output-dir={out}",
        "--lsrb-max-items=48", "--lsrb-samples=2", "--lsrb-max-tokens=120", "--lsrb-concurrency=16",
        f"--lsrb-max-total-tokens={budget}", "-n", "2", *extra,
    ]  # fmt: skip


def crash_then_resume(
    tree: Path,
    work: Path,
    victim: str,
    seed: int,
    *,
    budget: int = 12_000,
    resumes: int = 2,
    timeout: float = 180.0,
) -> CrashOutcome:
    """One run SIGKILLed (`victim`) a random moment after its first request reached the server,
    while requests are in flight, then `--lsrb-resume` at once (again, up to `resumes` times,
    while a session ends without finishing or stopping at its budget)."""
    rng = random.Random(seed)
    # most answers take 0.4 s, every fifth 4 s: still in flight when the resume opens the ledger
    server = SlotLlama(
        slots=32,
        prompt_tokens=150,
        completions=lambda n: 80 + n % 40,
        seconds_for=lambda n: 4.0 if n % 5 == 4 else 0.4,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = str(tree)
    env.pop("PYTEST_ADDOPTS", None)
    out = work / f"{victim}-{seed}" / "out"
    out.parent.mkdir(parents=True)
    outcome = CrashOutcome(victim, budget, 0)
    try:
        proc = subprocess.Popen(
            command(tree, server.url, out, budget),
            cwd=out.parent,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not server.arrivals and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.05, 1.2))  # a random moment, requests in flight
        started = descendants(proc.pid)  # (a dead controller's workers are init's children after)
        kill(proc, victim, rng)
        outcome.sessions.append(f"killed {victim} (exit {proc.wait()})")
        for _ in range(resumes):  # the printed resume, at once
            again = subprocess.run(
                command(tree, server.url, out, budget, "--lsrb-resume"),
                cwd=out.parent,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            last = (again.stdout + again.stderr).strip().splitlines()[-1:]
            outcome.sessions.append(f"exit {again.returncode}: {last[0][:160] if last else ''}")
            if again.returncode == 0 or "budget" in (again.stdout + again.stderr):
                break
        time.sleep(4.5)  # the killed session's last workers finish what they had in flight
        for pid in started:  # any still there: ended (ours, by their id)
            with_gone(pid)
    finally:
        server.close()
    outcome.billed = server.billed
    return outcome


def kill(proc: subprocess.Popen[bytes], victim: str, rng: random.Random) -> None:
    if victim == "group":
        os.killpg(proc.pid, signal.SIGKILL)
    elif victim == "controller":
        os.kill(proc.pid, signal.SIGKILL)
    else:
        workers = [pid for pid in descendants(proc.pid) if b"sys.stdin" in cmdline(pid)]
        os.kill(rng.choice(workers) if workers else proc.pid, signal.SIGKILL)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def with_gone(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
