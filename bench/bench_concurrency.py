"""Attempts in flight: 400 attempts against a local endpoint with 100 ms latency, concurrency 16.

The endpoint is the project's fake Ollama server (tests/fakes), in its own process, with a fixed
100 ms delay per chat answer. The ideal is attempts x latency / attempts in flight
(400 x 0.1 s / 16 = 2.5 s; target: within 1.3x).

Printed, all from this one run (best of --repeat; the machines are shared and noisy):
- engine: the runner and the HTTP adapter alone, in this process, no pytest: what the engine
  achieves when nothing else competes for the interpreter;
- serial: pytest on the tactic suite with a synthetic 400-item index, like a user runs it;
- with --xdist, `-n 2` at 8 per worker (16 in flight in all, same ideal) and at 16 per worker
  (32 in flight, half the ideal).
Columns: span = first model request received -> last answer sent, measured by the server;
ratio = span / ideal; wall = the whole pytest process; mock = the same run on the mock adapter
(pytest start-up, collection and per-test cost without any model), for scale.

Usage: python bench/bench_concurrency.py [--attempts 400] [--latency 0.1] [--concurrency 16]
                                          [--xdist] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from _util import REPO, TACTIC_SUITE, pytest_cmd, run_measured, synthetic_index


class Endpoint:
    """The fake Ollama server in a child process."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fakes.ollama_server", f"--latency={latency}"],
            cwd=REPO / "tests",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO / "tests")},
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise SystemExit("the fake endpoint did not start")

    def reset(self) -> None:
        httpx.post(self.url + "/_reset", json={}).raise_for_status()

    def stats(self) -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(self.url + "/_stats").json()
        return data

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def engine_once(endpoint: Endpoint, index: Path, concurrency: int) -> float:
    """The runner with the Ollama adapter, driven the way the plugin drives it, minus pytest."""
    from pytest_lsrb.adapters import create_adapter
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.engine.verifier import create_verifier
    from pytest_lsrb.session.prepare import prepare_suite_run

    options = {
        "lsrb_index": str(index),
        "lsrb_adapter": "ollama",
        "lsrb_model": "qwen2.5:7b",
        "lsrb_base_url": endpoint.url,
        "lsrb_concurrency": str(concurrency),
    }
    run = prepare_suite_run(TACTIC_SUITE, options.get, REPO)
    runner = Runner(
        task=run.task,
        adapter=create_adapter(run.adapter_config()),
        verifier=create_verifier(run.verifier_config()),
        config=run.config,
        config_hash=run.config_hash,
        concurrency=concurrency,
        task_options=dict(run.config.values),
    )
    endpoint.reset()
    try:
        cases = run.cases
        for i, case in enumerate(cases):
            runner.attempt(case, cases[i + 1 : i + 1 + runner.lookahead])
    finally:
        runner.close()
        runner.adapter.close()
        runner.verifier.close()
    return check_stats(endpoint, len(run.cases))


def check_stats(endpoint: Endpoint, attempts: int) -> float:
    stats = endpoint.stats()
    if stats["chats"] != attempts or stats["span_s"] is None:
        raise SystemExit(f"expected one request per attempt ({attempts}), the server saw {stats}")
    return float(stats["span_s"])


def pytest_once(
    endpoint: Endpoint, index: Path, out: Path, concurrency: int, extra: list[str]
) -> tuple[float, float]:
    endpoint.reset()
    cmd = pytest_cmd(
        str(TACTIC_SUITE),
        f"--lsrb-index={index}",
        f"--lsrb-output-dir={out}",
        "--lsrb-overwrite",
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={endpoint.url}",
        f"--lsrb-concurrency={concurrency}",
        "--lsrb-outcome=record",
        *extra,
    )
    m = run_measured(cmd, REPO)
    if m.returncode != 0:
        raise SystemExit(f"run failed ({m.returncode}):\n{m.stdout[-3000:]}")
    attempts = sum(1 for line in index.read_text().splitlines() if line.strip())
    return check_stats(endpoint, attempts), m.seconds


def mock_once(index: Path, out: Path, extra: list[str]) -> float:
    cmd = pytest_cmd(
        str(TACTIC_SUITE),
        f"--lsrb-index={index}",
        f"--lsrb-output-dir={out}",
        "--lsrb-overwrite",
        "--lsrb-outcome=record",
        *extra,
    )
    m = run_measured(cmd, REPO)
    if m.returncode != 0:
        raise SystemExit(f"mock run failed ({m.returncode}):\n{m.stdout[-3000:]}")
    return m.seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--attempts", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--xdist", action="store_true", help="also measure with -n 2")
    ap.add_argument("--repeat", type=int, default=3, help="keep the best of this many runs")
    args = ap.parse_args()
    c = args.concurrency
    # (name, extra pytest args, concurrency per process, processes)
    modes: list[tuple[str, list[str], int, int]] = [("serial", [], c, 1)]
    if args.xdist:
        modes += [(f"-n2 x{c // 2}", ["-n", "2"], c // 2, 2), (f"-n2 x{c}", ["-n", "2"], c, 2)]

    endpoint = Endpoint(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp_s:
            tmp = Path(tmp_s)
            index = synthetic_index(tmp / "index.jsonl", args.attempts)
            print(
                f"{args.attempts} attempts, {args.latency * 1000:.0f} ms latency; "
                "ideal = attempts x latency / attempts in flight"
            )
            print(f"{'mode':>9} {'ideal s':>8} {'span s':>7} {'ratio':>6} {'wall s':>7} {'mock s':>7}")
            ideal = args.attempts * args.latency / c
            span = min(engine_once(endpoint, index, c) for _ in range(args.repeat))
            print(f"{'engine':>9} {ideal:8.2f} {span:7.2f} {span / ideal:6.2f} {'-':>7} {'-':>7}")
            for name, extra, per_process, processes in modes:
                ideal = args.attempts * args.latency / (per_process * processes)
                runs = [
                    pytest_once(endpoint, index, tmp / "out", per_process, extra) for _ in range(args.repeat)
                ]
                span, wall = min(runs)
                mock = min(mock_once(index, tmp / "mock", extra) for _ in range(args.repeat))
                print(f"{name:>9} {ideal:8.2f} {span:7.2f} {span / ideal:6.2f} {wall:7.2f} {mock:7.2f}")
    finally:
        endpoint.close()


if __name__ == "__main__":
    main()
