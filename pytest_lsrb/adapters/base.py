"""The adapter plug point: how the engine talks to a model.

An adapter turns one `GenerationRequest` into one `GenerationResult`. Errors are data: a failed
call returns a result with `error_kind`/`error_domain` set instead of raising, so one bad response
never takes the run down. Provider wire formats stay inside each adapter module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_lsrb.core.errors import generation_domain


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class SamplingConfig:
    """Every setting that changes what the model returns; all of it is part of the cache key."""

    temperature: float | None = 0.0  # None: send none, the provider's default applies
    max_tokens: int = 256
    top_p: float | None = None
    stop: tuple[str, ...] = ()


# Not frozen: one is made per model call, and a frozen dataclass's __init__ costs ~3x a plain one's
# (object.__setattr__ per field). Adapters read it; nothing writes to it.
@dataclass
class GenerationRequest:
    messages: tuple[Message, ...]
    seed: int
    sampling: SamplingConfig
    # Which task asks, and its structured context. Real adapters ignore both; the mock adapter's
    # answers (the task's baseline) use them to answer plausibly without parsing the prompt.
    task: str = ""
    context: Mapping[str, Any] = field(default_factory=dict)


# Not frozen, for the same reason as GenerationRequest: one per model call. Read-only by convention.
@dataclass
class GenerationResult:
    text: str
    latency_ms: float
    error_kind: str | None = None
    error_message: str | None = None
    http_attempts: int = 1
    cached: bool = False
    # `prompt_tokens`/`completion_tokens` when the server reported them (absent, not 0, when not).
    usage: Mapping[str, int] = field(default_factory=dict)
    # Why generation stopped as the server said it (OpenAI `finish_reason`, Ollama `done_reason`:
    # "stop", "length", ...); None when it did not say.
    finish_reason: str | None = None
    # The model that actually answered (llama.cpp answers with its one loaded model whatever
    # `--lsrb-model` asked for) and the backend build (`system_fingerprint`), when reported.
    served_model: str | None = None
    system_fingerprint: str | None = None

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @property
    def error_domain(self) -> str | None:
        return None if self.error_kind is None else generation_domain(self.error_kind)

    def error_fields(self) -> dict[str, str | None]:
        """The attempt record's `generation_error_*` fields for this call's failure (empty when it
        answered): for a task that judges a call of its own (a feedback round); the engine writes
        the attempt's from all its calls (`engine.calls`)."""
        if self.error_kind is None:
            return {}
        return {
            "generation_error_kind": self.error_kind,
            "generation_error_domain": self.error_domain,
            "generation_error_message": self.error_message,
        }

    @classmethod
    def failure(cls, kind: str, message: str, latency_ms: float, http_attempts: int = 1) -> GenerationResult:
        return cls(
            text="",
            latency_ms=latency_ms,
            error_kind=kind,
            error_message=message,
            http_attempts=http_attempts,
        )


# The mock adapter's answers: the text a model would write for a request, from whoever builds the
# adapter (httpx's `MockTransport(handler)`); a run passes its task's (`engine.task.mock_answers`).
MockAnswers = Callable[[GenerationRequest], str]


@dataclass(frozen=True)
class AdapterConfig:
    """What the user chose on the command line; each adapter reads the fields it needs."""

    name: str = "mock"
    model: str = ""
    base_url: str | None = None
    # The server may answer --lsrb-model with a model it lists under another name.
    allow_model_alias: bool = False
    api_key_env: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 100
    # Seconds of failed calls before the server is taken for down (adapters.outage); each call
    # also stops retrying this long after its own first failure (adapters.retry).
    retry_time_s: float = 120.0
    max_tokens_field: str = "max_tokens"
    cache_dir: str | None = None
    cache_journal: str = "auto"  # the response cache's SQLite journal: auto, wal or delete
    # Attempts in flight per process (None: the adapter's default); sizes the connection pool.
    concurrency: int | None = None
    # Backoff between retries of transient errors: base * 2**n seconds, capped.
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    # The run's directory, where its processes share the server's outage state (adapters.outage);
    # None: this process keeps it alone (a judge's endpoint, an adapter made outside a run).
    outage_dir: str | None = None
    # The mock adapter's answers (the others ignore it); not a choice of the user, so not compared.
    answers: MockAnswers | None = field(default=None, compare=False, repr=False)


class Adapter(ABC):
    """A model endpoint: subclass it and write `generate` and `identity`; every other member has a
    default here, so an editor lists them all (inspect_ai's `ModelAPI`). Implementations must be
    safe to call from several threads at once.

    The engine calls these members, never probes for them. A `lsrb_adapter` fixture may hand it
    an object of its own class with just `name`, `model`, `default_concurrency`, `check`,
    `generate`, `identity` and `close`; such an object gets the defaults of the rest."""

    name: str
    model: str
    # How many attempts to keep in flight when the user did not say (`--lsrb-concurrency`).
    default_concurrency: int = 1
    # How many attempts the runner may make in one go ahead of their tests: only for an adapter
    # whose answers cost microseconds and are the same whenever asked (the mock); 0: each
    # attempt when its test runs, or ahead in threads with `--lsrb-concurrency` (`engine.runner`).
    runs_ahead: int = 0
    # Whether `--lsrb-cache-dir` may keep its answers (the mock's cost less than a lookup).
    cacheable: bool = True
    # Whether it asks the run's budget itself, for each request it sends, while it holds its slot
    # permit (`engine.budget`): an adapter on `HttpEndpoint` passing it `ADMISSION.get()` (as
    # `HttpAdapter` does). False: the budget is asked around each `generate`.
    admits_budget: bool = False

    @abstractmethod
    def generate(self, request: GenerationRequest) -> GenerationResult:
        """One model call. Never raises for a model or transport failure; returns it as data."""

    @abstractmethod
    def identity(self) -> Mapping[str, Any]:
        """What identifies this endpoint in records and cache keys (never a key or secret)."""

    def check(self) -> None:
        """Fail fast before any test runs (model missing, bad URL): raise `LsrbUsageError`."""
        return None

    def close(self) -> None:
        """Release connections and threads; called once, when the run ends."""
        return None

    def interrupt(self) -> None:
        """Wake calls waiting to retry and refuse new ones, without closing: whoever made the
        adapter (the `lsrb_adapter` fixture, or a user's override of it) closes it."""
        return None

    def served_slots(self) -> int | None:
        """How many requests the server decodes at once, when it says so (the `openai` adapter
        asks llama.cpp's `GET /props`); None when it does not."""
        return None


def interrupt(adapter: object) -> None:
    """`Adapter.interrupt` of `adapter` (an object not derived from `Adapter` has nothing to wake)."""
    if isinstance(adapter, Adapter):
        adapter.interrupt()


def admits_budget(adapter: object) -> bool:
    """`Adapter.admits_budget` of `adapter` (an object not derived from `Adapter` does not)."""
    return isinstance(adapter, Adapter) and adapter.admits_budget is True


def runs_ahead(adapter: object) -> int:
    """`Adapter.runs_ahead` of `adapter` when it is a positive whole number, else 0."""
    value = adapter.runs_ahead if isinstance(adapter, Adapter) else 0
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


MAX_FOUND_CONCURRENCY = 64  # attempts in flight when a server reports more slots than that


def served_slots(adapter: object) -> int | None:
    """`Adapter.served_slots` of `adapter` when it is a positive whole number, else None."""
    slots = adapter.served_slots() if isinstance(adapter, Adapter) else None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


class WrappingAdapter(Adapter):
    """An adapter in front of another (the engine's budget and its watch of an attempt's calls):
    it is the inner one in every respect but `generate`, which a subclass writes around
    `self.inner.generate`."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.default_concurrency = inner.default_concurrency
        self.runs_ahead = runs_ahead(inner)
        self.cacheable = inner.cacheable if isinstance(inner, Adapter) else True

    def served_slots(self) -> int | None:
        return served_slots(self.inner)

    def check(self) -> None:
        self.inner.check()

    def identity(self) -> Mapping[str, Any]:
        return self.inner.identity()

    def interrupt(self) -> None:
        interrupt(self.inner)

    def close(self) -> None:
        self.inner.close()


def in_flight(adapter: Adapter, asked: int | None) -> int:
    """Attempts a process keeps in flight: `--lsrb-concurrency` when given; else the adapter's
    default, raised to the server's slot count when it reports more (so a server with 16 slots
    is kept full; fewer slots cap the adapter's own limit there instead, in test order)."""
    if asked:
        return asked
    default = adapter.default_concurrency
    if default <= 1:  # (the mock: answers in microseconds, no server)
        return default
    return max(default, min(served_slots(adapter) or 0, MAX_FOUND_CONCURRENCY))
