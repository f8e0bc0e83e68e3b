"""Adapter registry: `--lsrb-adapter` value -> implementation. Add an adapter by adding a module."""

from __future__ import annotations

from pytest_lsrb.adapters.base import (
    Adapter,
    AdapterConfig,
    GenerationRequest,
    GenerationResult,
    Message,
    SamplingConfig,
)
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import load_class

ADAPTERS: dict[str, str] = {
    "mock": "pytest_lsrb.adapters.mock:MockAdapter",
    "ollama": "pytest_lsrb.adapters.ollama:OllamaAdapter",
    "openai": "pytest_lsrb.adapters.openai:OpenAIAdapter",
    # SorryDB's deterministic baselines: no model (adapters/reference.py)
    "sorrydb-tactics": "pytest_lsrb.adapters.reference:SorryDBTacticsAdapter",
    "sorrydb-rfl": "pytest_lsrb.adapters.reference:SorryDBRflAdapter",
}


def create_adapter(config: AdapterConfig) -> Adapter:
    cls = load_class(ADAPTERS, config.name, what="adapter", where="--lsrb-adapter")
    adapter: Adapter = cls(config)
    if config.cache_dir and getattr(adapter, "cacheable", True):
        from pathlib import Path

        from pytest_lsrb.adapters.cache import CachingAdapter, ResponseCache

        try:
            cache = ResponseCache(Path(config.cache_dir).expanduser(), config.cache_journal)
        except LsrbUsageError:
            adapter.close()
            raise
        adapter = CachingAdapter(adapter, cache)
    return adapter


__all__ = [
    "ADAPTERS",
    "Adapter",
    "AdapterConfig",
    "GenerationRequest",
    "GenerationResult",
    "Message",
    "SamplingConfig",
    "create_adapter",
]
