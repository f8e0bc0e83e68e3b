"""Adapter registry: `--lsrb-adapter` value -> implementation. An adapter of a lab's own is an
`Adapter` subclass (an HTTP API: `HttpAdapter`) in its own package, named by an entry point of
`pytest_lsrb.adapters` or a "pkg.mod:Class" spec (docs/extending.md): nothing here is edited."""

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
from pytest_lsrb.core.registry import ADAPTERS_GROUP, Registry, refuse_unfit

# `--lsrb-adapter NAME`: a built-in, an entry point of `pytest_lsrb.adapters`, or a spec.
ADAPTERS = Registry(
    {
        "mock": "pytest_lsrb.adapters.mock:MockAdapter",
        "ollama": "pytest_lsrb.adapters.ollama:OllamaAdapter",
        "openai": "pytest_lsrb.adapters.openai:OpenAIAdapter",
        # SorryDB's deterministic baselines: no model (adapters/reference.py)
        "sorrydb-tactics": "pytest_lsrb.adapters.reference:SorryDBTacticsAdapter",
        "sorrydb-rfl": "pytest_lsrb.adapters.reference:SorryDBRflAdapter",
    },
    group=ADAPTERS_GROUP,
    what="adapter",
    where="--lsrb-adapter",
)


def create_adapter(config: AdapterConfig) -> Adapter:
    """The adapter `--lsrb-adapter` names, made with `config` (behind the response cache when
    `--lsrb-cache-dir` is given and the adapter is `cacheable`)."""
    cls = ADAPTERS.load(config.name)
    refuse_unfit(cls, Adapter, where=ADAPTERS.where, name=config.name)
    adapter: Adapter = cls(config)
    if config.cache_dir and adapter.cacheable:
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
