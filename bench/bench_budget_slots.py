"""Budgets against a one-slot server (issue #38): the attacks that broke them, as numbers.

The endpoint is the llama.cpp stand-in (tests/fakes/llama_slots.py) in this process: one slot
(llama.cpp's default), answers whose length this script sets, each cut at the request's
`max_tokens` as llama.cpp cuts it, and a count of the tokens it billed. Each run is a fresh
`pytest` of the tactic suite in its own process group, killed at `--timeout` (a hang).

- `hangs`: `--tries` runs at the default concurrency, serial and `-n 2`, of 5 items with
  `--lsrb-max-total-tokens 600` (the issue's command) and of 10 items with 2000 (several requests
  go before the stop): how many stopped or finished, how many hung (past `--timeout`).
- `growing`: `--lsrb-max-total-tokens 3000 --lsrb-concurrency 8`, the first answer 15 tokens and
  every later one 1,000: tokens billed by the server against the budget, and the spend the stop
  line reports.
- `kill`: `-n 2` with slow answers; a worker is SIGKILLed while its request is in flight: does
  the run end (finished or stopped at its budget) within the timeout, and what was billed.
- `lengths`: answers of 1, 10, 100 and 1,000 tokens (and a mix growing from 1 to 1,000): billed
  against the budget, and the wall time of the same run with the budget against without one.

Usage: python bench/bench_budget_slots.py [hangs|growing|kill|lengths ...] [--tries 20]
[--timeout 60]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _util import REPO, TACTIC_SUITE

sys.path.insert(0, str(REPO / "tests"))
from fakes.llama_slots import SlotLlama


def suite_run(url: str, out: Path, *extra: str, timeout: float) -> tuple[str, float, str]:
    """('ok' | 'hang' | 'exit N', seconds, output) of one run of the tactic suite."""
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(TACTIC_SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={url}",
        "--lsrb-model=smollm2",
        "--lsrb-outcome=record",
        "--lsrb-progress=0",
        f"--lsrb-output-dir={out}",
        *extra,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=out.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        text, _ = proc.communicate(timeout=timeout)
        verdict = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        text, _ = proc.communicate()
        verdict = "hang"
    return verdict, time.perf_counter() - start, text


def stop_spent(text: str) -> str:
    found = re.search(r"spent ([0-9.]+)\)", text)
    return found.group(1) if found else "-"


HANG_RUNS = {  # the command, and a budget that lets several requests go before it stops
    "5 items, --lsrb-max-total-tokens 600": ["--lsrb-max-items=5", "--lsrb-max-total-tokens=600"],
    "10 items, --lsrb-max-total-tokens 2000": ["--lsrb-max-items=10", "--lsrb-max-total-tokens=2000"],
}


def hangs(work: Path, tries: int, timeout: float) -> None:
    for name, options in HANG_RUNS.items():
        for mode in ([], ["-n", "2"]):
            counts: dict[str, int] = {}
            sent, billed = [], []
            for i in range(tries):
                server = SlotLlama(slots=1, seconds=0.05, prompt_tokens=150, completions=lambda n: 100)
                try:
                    out = work / f"hang-{len(mode)}-{len(counts)}-{i}-{len(name)}" / "out"
                    out.parent.mkdir(parents=True)
                    verdict, _, _ = suite_run(server.url, out, *options, *mode, timeout=timeout)
                finally:
                    server.close()
                counts[verdict] = counts.get(verdict, 0) + 1
                sent.append(len(server.arrivals))
                billed.append(server.billed)
            label = "serial" if not mode else "-n 2"
            print(
                f"hangs, {label}, {name}, default concurrency, one slot: {tries} tries: {counts}; "
                f"requests sent {min(sent)}-{max(sent)}, billed at most {max(billed)}"
            )


def growing(work: Path, timeout: float) -> None:
    for mode in ([], ["-n", "2"]):
        server = SlotLlama(
            slots=1, seconds=0.01, prompt_tokens=0, completions=lambda n: 15 if n == 0 else 1000
        )
        try:
            out = work / f"grow-{len(mode)}" / "out"
            out.parent.mkdir(parents=True)
            verdict, _, text = suite_run(
                server.url,
                out,
                "--lsrb-max-items=40",
                "--lsrb-max-tokens=1000",
                "--lsrb-max-total-tokens=3000",
                "--lsrb-concurrency=8",
                *mode,
                timeout=timeout,
            )
        finally:
            server.close()
        label = "serial" if not mode else "-n 2"
        print(
            f"growing answers 15 -> 1000, {label}: {verdict}; billed {server.billed} tokens against "
            f"3000 in {len(server.arrivals)} requests; the stop line says spent {stop_spent(text)}"
        )


def kill(work: Path, timeout: float) -> None:
    server = SlotLlama(slots=2, seconds=1.0, prompt_tokens=150, completions=lambda n: 30)
    try:
        out = work / "kill" / "out"
        out.parent.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
        cmd = [
            sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider",
            "--lsrb-adapter=openai", f"--lsrb-base-url={server.url}", "--lsrb-model=smollm2",
            "--lsrb-outcome=record", "--lsrb-progress=0", f"--lsrb-output-dir={out}",
            "--lsrb-max-items=20", "--lsrb-max-tokens=30", "--lsrb-max-total-tokens=3000", "-n", "2",
        ]  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=out.parent,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        victim = None
        while time.perf_counter() - start < timeout and victim is None:
            if server.in_flight >= 2:  # both workers hold a request (and its reservation)
                victim = next(iter(worker_pids(proc.pid)), None)
                if victim is not None:
                    os.kill(victim, signal.SIGKILL)
            time.sleep(0.05)
        try:
            text, _ = proc.communicate(timeout=max(1.0, timeout - (time.perf_counter() - start)))
            verdict = f"ended (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            text, _ = proc.communicate()
            verdict = "hang"
        records = (
            len((out / "attempts.jsonl").read_text().splitlines()) if (out / "attempts.jsonl").exists() else 0
        )
    finally:
        server.close()
    print(
        f"kill a -n 2 worker mid-request (pid {victim}): {verdict} after {time.perf_counter() - start:.1f}s; "
        f"{records} records; billed {server.billed} of 3000; stop line spent {stop_spent(text)}"
    )


def worker_pids(root: int) -> list[int]:
    """The xdist workers under `root`: its descendants that execnet started (`python -c` reading
    their code from stdin)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            children = (task / "children").read_text().split() if (task / "children").exists() else []
            todo.extend(int(c) for c in children)
            for child in children:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"sys.stdin" in cmdline:
                    found.append(int(child))
    return found


def lengths(work: Path, timeout: float) -> None:
    shapes: dict[str, Callable[[int], int]] = {
        "1": lambda n: 1,
        "10": lambda n: 10,
        "100": lambda n: 100,
        "1000": lambda n: 1000,
        "1->1000": lambda n: min(1000, 1 + 37 * n),
    }
    budget = 20_000
    for name, shape in shapes.items():
        row = []
        for label, extra in (("none", []), ("budget", [f"--lsrb-max-total-tokens={budget}"])):
            server = SlotLlama(slots=1, seconds=0.002, prompt_tokens=50, completions=shape)
            try:
                out = work / f"len-{name}-{label}" / "out"
                out.parent.mkdir(parents=True)
                verdict, seconds, _ = suite_run(
                    server.url,
                    out,
                    "--lsrb-max-items=40",
                    "--lsrb-samples=2",
                    "--lsrb-max-tokens=1000",
                    *extra,
                    timeout=timeout,
                )
            finally:
                server.close()
            row.append((label, verdict, seconds, server.billed, len(server.arrivals)))
        (_, nv, ns, nb, nr), (_, bv, bs, bb, br) = row
        print(
            f"answers {name:>7} tokens: no budget {nr} requests {nb} tokens {ns:.2f}s ({nv}); budget "
            f"{budget}: {br} requests, billed {bb} ({'<=' if bb <= budget else 'OVER'} budget) "
            f"{bs:.2f}s ({bv}); wall ratio budget/none {bs / ns:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="*", default=["hangs", "growing", "kill", "lengths"])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for what in args.what:
            if what == "hangs":
                hangs(work, args.tries, args.timeout)
            elif what == "growing":
                growing(work, args.timeout)
            elif what == "kill":
                kill(work, args.timeout)
            elif what == "lengths":
                lengths(work, args.timeout)
            else:
                raise SystemExit(f"unknown measurement {what!r}")


if __name__ == "__main__":
    main()
