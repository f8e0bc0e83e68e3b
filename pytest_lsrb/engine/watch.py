"""Attempts in flight, watched from outside: how far a long attempt has got before it finishes.

A multi-call attempt (an llm_srbench search: 5 calls for Direct, 1,000 for LLM-SR) may run for
minutes with nothing written. While it runs, its `Watch` holds the model calls it has made of
its budget (counted by `WatchedAdapter`, the engine's wrapper around the run's adapter, not by
the method's word), the tokens they reported, when it began, and the best score its search has
so far (`note_best`, which a method calls when its best changes). `Watches` is one process's
set of them; `output.live` publishes it beside the run for the progress line and `lsrb view`.

The runner keeps one `Watch` per attempt in a context variable, set around the task's
`run_attempt` in the thread that runs it; `note_best` and the adapter find it there. Nothing is
watched where no attempt makes more than one call (the runner then passes no `Watches`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, WrappingAdapter


@dataclass
class Watch:
    """One attempt in flight (mutated by its own thread only; read as a snapshot)."""

    item_id: str
    sample_index: int
    budget: int  # the most model calls it may make (`Task.calls_per_attempt`)
    started: float = field(default_factory=time.time)  # wall clock: other processes read it
    calls: int = 0  # model calls answered so far (a cached answer too)
    last_call: float | None = None  # when the last of them came back (wall clock)
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    best_label: str | None = None  # what `best` measures, e.g. "train NMSE" (lower is better)
    best: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "sample_index": self.sample_index,
            "started": round(self.started, 3),
            "calls": self.calls,
            "last_call": None if self.last_call is None else round(self.last_call, 3),
            "budget": self.budget,
            "failed_calls": self.failed_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "best_label": self.best_label,
            "best": self.best,
        }


WATCH: ContextVar[Watch | None] = ContextVar("lsrb_watch", default=None)


def note_best(label: str, value: float) -> None:
    """A search's best score so far changed (lower is better: a training NMSE or loss). For the
    progress line and `lsrb view` only: nothing is recorded from it. No-op outside a watched
    attempt, and for a value that is not finite."""
    watch = WATCH.get()
    if watch is not None and isinstance(value, (int, float)) and math.isfinite(value):
        watch.best_label, watch.best = label, float(value)


class Watches:
    """This process's attempts in flight; `version` moves on whenever one begins or ends (a call
    or a new best inside one is seen at the next snapshot)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, Watch] = {}
        self.version = 0

    @contextmanager
    def watching(self, item_id: str, sample_index: int, budget: int) -> Iterator[Watch]:
        watch = Watch(item_id, sample_index, budget)
        token = WATCH.set(watch)
        with self._lock:
            self._live[id(watch)] = watch
            self.version += 1
        try:
            yield watch
        finally:
            WATCH.reset(token)
            with self._lock:
                self._live.pop(id(watch), None)
                self.version += 1

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            watches = list(self._live.values())
        return [w.as_json() for w in sorted(watches, key=lambda w: w.started)]


def _tokens(usage: Mapping[str, Any] | None, key: str) -> int:
    value = (usage or {}).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class WatchedAdapter(WrappingAdapter):
    """The run's adapter with each answered call counted on the attempt that made it."""

    def generate(self, request: GenerationRequest) -> GenerationResult:
        result = self.inner.generate(request)
        watch = WATCH.get()
        if watch is not None:
            watch.calls += 1
            watch.last_call = time.time()
            watch.failed_calls += not result.ok
            watch.prompt_tokens += _tokens(result.usage, "prompt_tokens")
            watch.completion_tokens += _tokens(result.usage, "completion_tokens")
        return result
