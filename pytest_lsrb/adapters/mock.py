"""The mock adapter: a deterministic local baseline, no server needed.

It asks the task how a plausible baseline would answer (`Task.mock_answer`), so every suite gets
sensible offline behaviour without the mock knowing about any of them. The task sees the request's
context plus, under `prompt`, the text of its messages: what a real model would read.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import cache
from typing import Any

from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest, GenerationResult
from pytest_lsrb.core.registry import TASKS, load_class


@cache
def _task(name: str) -> Any:
    """The task named in a request (the registry's string, loaded lazily: no import up a layer)."""
    return load_class(TASKS, name, what="task", where="the mock adapter")()


class MockAdapter:
    name = "mock"
    default_concurrency = 1  # answers in microseconds: threads would only add overhead
    cacheable = False  # answering is cheaper than a cache lookup
    runs_ahead = 32  # and the same whenever asked: attempts are made 32 at a time (engine.runner)

    def __init__(self, config: AdapterConfig) -> None:
        self.model = config.model or "mock-baseline-v1"

    def check(self) -> None:
        return None

    def generate(self, request: GenerationRequest) -> GenerationResult:
        start = time.perf_counter()
        prompt = "\n\n".join(m.content for m in request.messages)
        text = _task(request.task).mock_answer({**request.context, "prompt": prompt}, request.seed)
        return GenerationResult(text=text, latency_ms=(time.perf_counter() - start) * 1000.0)

    def identity(self) -> Mapping[str, Any]:
        return {"adapter": self.name, "model": self.model}

    def close(self) -> None:
        return None
