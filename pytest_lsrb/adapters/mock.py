"""The mock adapter: a deterministic local baseline, no server needed.

Its answers come from whoever builds it (`AdapterConfig.answers`: a request in, the text a model
would write out; httpx's `MockTransport(handler)`, inspect_ai's `MockLLM(custom_outputs)`). A run
gives it its task's baseline (`engine.task.mock_answers`), so every suite gets sensible offline
behaviour while the adapter layer knows none of them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from pytest_lsrb.adapters.base import Adapter, AdapterConfig, GenerationRequest, GenerationResult, MockAnswers
from pytest_lsrb.core.errors import LsrbUsageError

NO_ANSWERS = (
    "the mock adapter was given no answers: build it with AdapterConfig(answers=...), a function "
    "from a request to the text to answer (a run passes its task's, engine.task.mock_answers)."
)


class MockAdapter(Adapter):
    name = "mock"
    default_concurrency = 1  # answers in microseconds: threads would only add overhead
    cacheable = False  # answering is cheaper than a cache lookup
    runs_ahead = 32  # and the same whenever asked: attempts are made 32 at a time (engine.runner)

    def __init__(self, config: AdapterConfig) -> None:
        self.model = config.model or "mock-baseline-v1"
        self.answers: MockAnswers | None = config.answers

    def check(self) -> None:
        if self.answers is None:
            raise LsrbUsageError(NO_ANSWERS)

    def generate(self, request: GenerationRequest) -> GenerationResult:
        start = time.perf_counter()
        if self.answers is None:
            raise LsrbUsageError(NO_ANSWERS)
        text = self.answers(request)
        return GenerationResult(text=text, latency_ms=(time.perf_counter() - start) * 1000.0)

    def identity(self) -> Mapping[str, Any]:
        return {"adapter": self.name, "model": self.model}

    def close(self) -> None:
        return None
