"""A run rides through a model server's restart (issue #42): the REAL llama.cpp server (`lsrb
serve`, SmolLM2) is killed mid-run and started again on the same port a few seconds later; the
run, left alone, finishes with every attempt answered, and its progress line said it was waiting.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsrb_testing import TACTIC_SUITE

from pytest_lsrb.tools.serve import INSTALL_EXTRA, INSTALL_WEIGHTS, smollm2_gguf, start, stop

pytestmark = [pytest.mark.llama, pytest.mark.slow]

ITEMS = 6
ALIAS = "smollm2-135m-instruct"
DOWN_S = 5.0  # how long the server stays away: longer than the old ~8 s retry budget's first waits


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _records(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_run_rides_through_a_server_restart(tmp_path: Path) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed ({INSTALL_EXTRA})")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip(f"the SmolLM2-135M-Instruct weights are not installed ({INSTALL_WEIGHTS})")
    port = _free_port()
    server, url = start(gguf, ALIAS, tmp_path / "server1.log", port=port)
    assert url is not None, (tmp_path / "server1.log").read_text()[-3000:]
    out = tmp_path / "out"
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            str(TACTIC_SUITE),
            "-p",
            "no:cacheprovider",
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={url}/v1",
            f"--lsrb-model={ALIAS}",
            f"--lsrb-max-items={ITEMS}",
            "--lsrb-max-tokens=24",
            "--lsrb-outcome=record",
            "--lsrb-progress=1",
            "--lsrb-timeout=300",
            f"--lsrb-output-dir={out}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    restarted = None
    try:
        deadline = time.monotonic() + 300
        while not _records(out / "attempts.jsonl") and time.monotonic() < deadline:
            assert run.poll() is None, run.communicate()[0][-3000:]
            time.sleep(0.2)
        assert _records(out / "attempts.jsonl"), "no attempt finished before the outage"
        server.send_signal(signal.SIGKILL)  # a crash, not a polite stop: in-flight requests break
        server.wait()
        killed_at = len(_records(out / "attempts.jsonl"))
        time.sleep(DOWN_S)
        restarted, again = start(gguf, ALIAS, tmp_path / "server2.log", port=port)
        assert again == url, (tmp_path / "server2.log").read_text()[-3000:]
        printed, _ = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
        stop(server)
        if restarted is not None:
            stop(restarted)
    assert run.returncode == 0, printed[-4000:]
    records = _records(out / "attempts.jsonl")
    assert len(records) == ITEMS, printed[-4000:]
    assert killed_at < ITEMS, "the run ended before the server went down: nothing was tested"
    errors = [(r["item_id"], r["generation_error_kind"]) for r in records if r["generation_error_kind"]]
    assert all(kind == "empty_output" for _, kind in errors), errors  # the model's, never the outage's
    retried = [r for r in records if int(r["model_calls"]) > 1]  # type: ignore[call-overload]
    assert retried, "no attempt needed a retry: the outage missed the run"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["complete"] and summary["attempts"] == ITEMS
    # A refused connection is an outage of the whole run (adapters/outage.py, issue #46): the line
    # says since when and how long the run still waits; a slow or failing call says its retry.
    said = ("waiting for the server (retry ", "server down since ")
    waiting = [line for line in printed.splitlines() if any(s in line for s in said)]
    assert waiting, printed[-4000:]
    assert "did not finish" not in printed
    print(
        f"outage: killed after {killed_at}/{ITEMS} attempts, down {DOWN_S:.0f}s; "
        f"{len(retried)} attempts retried (model_calls {[r['model_calls'] for r in retried]}); "
        f"all {ITEMS} answered; the progress line said: {waiting[-1]!r}",
        file=sys.stderr,
    )
