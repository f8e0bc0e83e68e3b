"""The adapter an attempt is given: the run's own, with every call counted and the attempt's limit
held by the harness, not by the task or the discovery method that makes the calls.

The runner hands each attempt a fresh `AttemptCalls` around the run's adapter
(`AttemptContext.adapter`); a task gives a part of its attempt a narrower limit with `within` (an
llm_srbench method gets its `--lsrb-sr-budget`, the judge the call left over). A call past a limit
is not sent: it comes back as a failed result of kind `call_limit` (the harness's), which the
caller sees like any failed call, and the record counts it (`calls_refused`).

The record's plumbing comes from here (`record`): the calls' requests sent, time, tokens, finish
reasons, served model and whether the cache answered them are counted by the harness and written
over whatever the task wrote (a method that made 5 calls is recorded with 5, whatever it says);
the attempt's generation error (THE rule, `outcomes.unanswered_kind`), its raw output and its
prompt hash are the defaults a task's own fields replace.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, GenerationResult, runs_ahead, served_slots
from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.errors import generation_domain
from pytest_lsrb.engine.outcomes import unanswered_kind
from pytest_lsrb.engine.prompt import prompt_hash
from pytest_lsrb.engine.records import AttemptFields

if TYPE_CHECKING:
    from pytest_lsrb.engine.task import AttemptContext, Task

CALL_LIMIT: Final = "call_limit"  # the kind of a call refused past its limit (`core.errors`: harness)


class AttemptCalls(Adapter):
    """One attempt's view of the run's adapter: counts every call and refuses one past `limit`
    (None: no limit). Safe to call from several threads (a method may search in parallel)."""

    def __init__(self, inner: Adapter, limit: int | None = None, *, what: str = "the attempt") -> None:
        self.inner = inner
        self.limit = limit
        self.what = what
        self.name = inner.name
        self.model = inner.model
        self.default_concurrency = inner.default_concurrency
        self.runs_ahead = runs_ahead(inner)
        self._lock = threading.Lock()
        self.calls = 0  # calls passed to the adapter
        self.refused = 0  # calls past the limit, not sent
        self.sent = 0  # requests sent (retries included; none for a cache hit)
        self.cached = 0  # calls the response cache answered
        self.latency_ms = 0.0
        self.tally = CallTally()
        self.failed: dict[str, int] = {}  # kind -> failed calls
        self.last_failure: dict[str, str | None] = {}  # kind -> its last message
        self.last_request: GenerationRequest | None = None
        self.last_text: str | None = None  # the last answer's text

    def within(self, limit: int, what: str) -> AttemptCalls:
        """A part of this attempt allowed at most `limit` of its calls (`what` names it in the
        refusal: `the method's --lsrb-sr-budget 5`); they are counted here too."""
        return _Within(self, limit, what)

    def generate(self, request: GenerationRequest) -> GenerationResult:
        with self._lock:
            if self.limit is not None and self.calls >= self.limit:
                self.refused += 1
                return refusal(self.limit, self.what)
            self.calls += 1
        result = self.inner.generate(request)
        with self._lock:
            self._count(request, result)
        return result

    def _count(self, request: GenerationRequest, result: GenerationResult) -> None:
        self.tally.add(result)
        self.latency_ms += result.latency_ms
        if result.cached:
            self.cached += 1
        else:
            self.sent += result.http_attempts
        if result.ok:
            self.last_text = result.text
        else:
            kind = str(result.error_kind)
            self.failed[kind] = self.failed.get(kind, 0) + 1
            self.last_failure[kind] = result.error_message
        self.last_request = request

    def identity(self) -> Mapping[str, Any]:
        return self.inner.identity()

    def check(self) -> None:
        self.inner.check()

    def served_slots(self) -> int | None:
        return served_slots(self.inner)

    # The run's adapter is not the attempt's to close or interrupt (`engine.runner`).

    def record(self, task_fields: AttemptFields, verification_mode: str) -> AttemptFields:
        """The attempt's fields: the defaults, the task's own over them, then what was counted."""
        # the model never answered: infrastructure (THE rule); None when it did, or made no call
        kind = unanswered_kind(self.calls, self.failed) if self.failed else None
        fields: AttemptFields = {
            "generation_error_kind": kind,
            "generation_error_domain": None if kind is None else generation_domain(kind),
            "generation_error_message": None if kind is None else self.last_failure.get(kind),
        }
        if self.calls:  # (each default made only when the task gave none: a hash costs)
            if "raw_output" not in task_fields:
                fields["raw_output"] = self.last_text or ""
            if "prompt_hash" not in task_fields and self.last_request is not None:
                fields["prompt_hash"] = prompt_hash(self.last_request.messages)
        fields.update(task_fields)
        fields.update(cast(AttemptFields, self.tally.record_fields()))  # tokens, finish reasons, model
        fields["latency_ms"] = round(self.latency_ms, 3)
        fields["model_calls"] = self.sent
        fields["cached"] = self.calls > 0 and self.cached == self.calls
        fields["verification_mode"] = verification_mode
        if self.refused:
            fields["calls_refused"] = self.refused
        return fields


class _Within(AttemptCalls):
    """A part of an attempt with a limit of its own, counted in the attempt's calls too."""

    def __init__(self, outer: AttemptCalls, limit: int, what: str) -> None:
        super().__init__(outer, limit, what=what)
        self.outer = outer

    def generate(self, request: GenerationRequest) -> GenerationResult:
        with self._lock:
            if self.limit is not None and self.calls >= self.limit:
                self.refused += 1
                with self.outer._lock:
                    self.outer.refused += 1
                return refusal(self.limit, self.what)
            self.calls += 1
        return self.outer.generate(request)


def counted_attempt(task: Task[Any], ctx: AttemptContext[Any]) -> AttemptFields:
    """One attempt's fields as the runner makes them: the task's, with its calls counted and
    limited by the harness (for a test of a task, or of a discovery method inside one)."""
    calls = AttemptCalls(ctx.adapter, task.calls_per_attempt(ctx.options))
    fields = task.run_attempt(dataclasses.replace(ctx, adapter=calls))
    return calls.record(fields, ctx.verifier.mode)


def within(adapter: Adapter, limit: int, what: str) -> Adapter:
    """`adapter` (an attempt's, `AttemptContext.adapter`) for a part of the attempt allowed at most
    `limit` calls; `what` names that part in a refusal. An adapter that is no attempt's (a test
    calling a task by hand) gets a count of its own."""
    if isinstance(adapter, AttemptCalls):
        return adapter.within(limit, what)
    return AttemptCalls(adapter, limit, what=what)


def refusal(limit: int, what: str) -> GenerationResult:
    """The result of a call past `limit`: not sent, a harness failure the caller reads as any."""
    return GenerationResult.failure(
        CALL_LIMIT, f"not sent: {what} may make {limit} model call(s) and has made them", 0.0, 0
    )
