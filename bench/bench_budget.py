"""What a run budget costs (issue #34): the same run against a local endpoint with and without
`--lsrb-max-total-tokens` (a budget too large to stop it), so every request goes through the
ledger's two locked updates; and those updates alone, in this process, against one HTTP round trip
to the same endpoint (the cheapest real request there is).

The endpoint is the project's fake server (tests/fakes) in its own process, answering at once (no
latency: the harness's own cost is all there is to see). Printed, all from this one run, best of
--repeat (the machines are shared and noisy): wall and CPU of each run and their ratio
budget / none; the ledger's microseconds per request and its ratio to a round trip.

Usage: python bench/bench_budget.py [--attempts 300] [--concurrency 4] [--xdist] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _util import REPO, TACTIC_SUITE, pytest_cmd, run_measured, synthetic_index


def start_endpoint() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakes.ollama_server", "--latency=0"],
        cwd=REPO / "tests",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "tests")},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        raise SystemExit("the fake endpoint did not start")
    return proc, url


def ledger_us(n: int = 2000) -> float:
    from pytest_lsrb.engine.budget import BudgetGuard, Ledger, Limits, Worst
    from pytest_lsrb.engine.ledger import Reservation

    guard = BudgetGuard(Limits(max_total_tokens=10**15), Ledger(Path(tempfile.mkdtemp())))
    guard.ledger.open_session(time.time())
    usage = {"prompt_tokens": 20, "completion_tokens": 3}
    start = time.perf_counter()
    for _ in range(n):
        held = guard.reserve(Worst(600, 256), None)
        assert isinstance(held, Reservation)
        guard.settle(held, usage)
    return (time.perf_counter() - start) / n * 1e6


def round_trip_us(url: str, n: int = 300) -> float:
    body = {"model": "qwen2.5:7b", "messages": [{"role": "user", "content": "x"}], "stream": False}
    with httpx.Client() as client:
        client.post(url + "/api/chat", json=body)
        start = time.perf_counter()
        for _ in range(n):
            client.post(url + "/api/chat", json=body).raise_for_status()
        return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--xdist", action="store_true", help="also compare under -n 2")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    proc, url = start_endpoint()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            index = synthetic_index(work / "index.jsonl", args.attempts)
            common = [
                str(TACTIC_SUITE),
                f"--lsrb-index={index}",
                "--lsrb-adapter=openai",
                "--lsrb-model=qwen2.5:7b",
                f"--lsrb-base-url={url}/v1",
                f"--lsrb-concurrency={args.concurrency}",
                "--lsrb-outcome=record",
                "--lsrb-progress=0",
            ]
            modes: list[list[str]] = [[]] + ([["-n", "2"]] if args.xdist else [])
            for mode in modes:
                best: dict[str, tuple[float, float]] = {}
                for r in range(args.repeat):
                    for name, extra in (("none", []), ("budget", ["--lsrb-max-total-tokens=1000000000000"])):
                        out = work / f"{name}-{r}-{len(mode)}"
                        m = run_measured(pytest_cmd(*common, *mode, *extra, f"--lsrb-output-dir={out}"), work)
                        if m.returncode != 0:
                            raise SystemExit(m.stdout[-3000:])
                        wall, cpu = best.get(name, (float("inf"), float("inf")))
                        best[name] = (min(wall, m.seconds), min(cpu, m.cpu_seconds))
                label = "serial" if not mode else "-n 2"
                (nw, nc), (bw, bc) = best["none"], best["budget"]
                print(
                    f"{label}: {args.attempts} attempts, concurrency {args.concurrency}: no budget "
                    f"{nw:.2f}s wall / {nc:.2f}s CPU, budget {bw:.2f}s / {bc:.2f}s: "
                    f"ratio {bw / nw:.2f}x wall, {bc / nc:.2f}x CPU"
                )
        ledger, trip = ledger_us(), round_trip_us(url)
        print(
            f"ledger: {ledger:.0f} us per request (reserve + settle); one local HTTP round trip "
            f"{trip:.0f} us: ratio {ledger / trip:.2f}"
        )
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
