"""Adapter tests run against a real local HTTP server that speaks Ollama's API (tests/fakes)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes.ollama_server import FakeOllama


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture(autouse=True)
def serial_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adapters built here are one serial process's, even when these tests run under xdist (an
    adapter shares a server's slots with the other workers of the run it is in)."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
