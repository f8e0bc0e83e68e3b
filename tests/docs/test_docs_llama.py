"""The docs' real-model commands (`<!-- llama -->` blocks) run against `lsrb serve` (issue #42).

Each page's llama blocks run in order in a scratch folder: the block that starts `lsrb serve`
runs as a child process (its `&` dropped: the test owns it and stops it with SIGTERM, as a user's
Ctrl-C or `kill` would), the others with bash, and the output samples after them must appear in
what they printed. The page's port, 8080, becomes a free one so a server already on 8080 (or a
parallel test) is no obstacle; nothing else of the commands changes. Skipped, saying why, only
when xllamacpp or the SmolLM2 weights are not installed (CI installs both).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from docblocks import Block, blocks
from test_docs_commands import PAGES, _check_output, _env, _run, _scratch

from pytest_lsrb.tools.serve import DEFAULT_PORT, INSTALL_EXTRA, INSTALL_WEIGHTS, USE_PREFIX, smollm2_gguf

pytestmark = [pytest.mark.llama, pytest.mark.slow]

LLAMA_PAGES = sorted({b.page for page in PAGES for b in blocks(page) if b.marker == "llama"})
START_TIMEOUT_S = 180.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(block: Block, work: Path, log: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """The page's `lsrb serve ... &` as a child process; returns once it prints its options."""
    command = block.code.strip().removesuffix("&").strip()
    assert "\n" not in command and "&" not in command, f"{block.where}: one `lsrb serve` command"
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=work,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )
    printed: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    out = proc.stdout

    def pump() -> None:
        for line in out:
            printed.put(line)

    threading.Thread(target=pump, daemon=True).start()
    lines: list[str] = []
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and not any(line.startswith(USE_PREFIX) for line in lines):
        try:
            lines.append(printed.get(timeout=0.5).rstrip("\n"))
        except queue.Empty:
            assert proc.poll() is None, f"lsrb serve exited {proc.returncode}: {log.read_text()[-3000:]}"
    assert any(line.startswith(USE_PREFIX) for line in lines), f"lsrb serve did not start: {lines}"
    return proc, lines


def _with_code(block: Block, code: str) -> Block:
    return dataclasses.replace(block, code=code)


@pytest.mark.parametrize("page", LLAMA_PAGES, ids=[p.name for p in LLAMA_PAGES])
def test_the_real_model_commands_of_a_page_run_against_lsrb_serve(page: Path, tmp_path: Path) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed ({INSTALL_EXTRA})")
    if smollm2_gguf() is None:
        pytest.skip(f"the SmolLM2-135M-Instruct weights are not installed ({INSTALL_WEIGHTS})")
    work = _scratch(tmp_path)
    port = str(_free_port())
    servers: list[subprocess.Popen[str]] = []
    timings: list[str] = []
    last, llama = "", False
    try:
        for block in blocks(page):
            if block.is_command and block.marker in ("run", "llama"):
                llama = block.marker == "llama"
            if block.marker == "llama" and block.is_command:
                code = block.code.replace(str(DEFAULT_PORT), port)
                if not servers and block.code.lstrip().startswith("lsrb serve"):
                    code = re.sub(r"^(\s*lsrb serve)", rf"\1 --port {port}", code)
                    began = time.monotonic()
                    proc, lines = _serve(
                        Block(**{**block.__dict__, "code": code}), work, tmp_path / "serve.log"
                    )
                    servers.append(proc)
                    timings.append(f"{block.where} ready in {time.monotonic() - began:.1f}s")
                    last = "\n".join(lines).replace(port, str(DEFAULT_PORT))
                    continue
                began = time.monotonic()
                ran = _run(_with_code(block, code), work)
                timings.append(f"{block.where} took {time.monotonic() - began:.1f}s")
                last = (ran.stdout + ran.stderr).replace(port, str(DEFAULT_PORT))
                assert ran.returncode == block.status, (
                    f"{block.where} exited {ran.returncode}:\n{last[-4000:]}"
                )
                # the documented path is quiet: a warning there is one every reader meets
                # (issue #50 item 7: the quickstart's first real-model command warned about
                # concurrency against lsrb serve's one slot)
                warned = [line for line in last.splitlines() if "WARNING" in line]
                assert not warned, f"{block.where} printed a warning: {warned}"
            elif block.marker == "output" and llama:
                assert last, f"{block.where}: an output sample with no llama block above it"
                _check_output(block, last)
    finally:
        for proc in servers:
            proc.send_signal(signal.SIGTERM)  # what `kill` sends; Ctrl-C's SIGINT takes the same path
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    print("\n".join(timings), file=sys.stderr)
    assert servers, f"{page.name}: llama blocks but none starts `lsrb serve`"
    assert [p.returncode for p in servers] == [0], "lsrb serve did not stop cleanly on SIGTERM"
