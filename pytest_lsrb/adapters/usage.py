"""What an attempt's model calls cost and how they ended: one tally, the record fields it gives.

Every task keeps the same fields in its attempt records, whether an attempt makes one call (a
tactic proposal) or a thousand (an LLM-SR search): `UsageFields`, a part of every attempt
record (`engine.records.AttemptFields` extends it).

Cached answers keep the tokens they cost when they were made (`cached` says no request was sent).
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Final

from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from pytest_lsrb.adapters.base import GenerationResult

USAGE_FIELDS: Final = ("prompt_tokens", "completion_tokens")


Count = Annotated[int, Field(ge=0)]  # a number of things: never negative


class UsageFields(TypedDict, total=False):
    """The attempt record's fields that every attempt's model calls give (defined here, where
    they are counted; `engine.records.AttemptFields` extends this)."""

    prompt_tokens: Count | None
    """Prompt tokens the server reported, summed over the calls; null when no call reported them
    (a server without `usage`, the mock adapter)."""
    completion_tokens: Count | None
    """Completion tokens the server reported, summed over the calls; null when none did."""
    finish_reason: str | None
    """Why the last answered call stopped (`stop`, `length`, ...), as the server said."""
    finish_reasons: dict[str, int] | None
    """Why the calls stopped: reason -> calls, for an attempt of more than one call."""
    served_model: str | None
    """The model that answered, as the server named it."""
    system_fingerprint: str | None
    """The backend build, when the server gave one."""


class CallTally:
    """Accumulates the results of one attempt's model calls (not thread-safe: one attempt)."""

    def __init__(self) -> None:
        self.calls = 0
        self.tokens: dict[str, int] = {}
        self.finish_reasons: Counter[str] = Counter()
        self.finish_reason: str | None = None
        self.served_model: str | None = None
        self.system_fingerprint: str | None = None

    def add(self, result: GenerationResult) -> None:
        self.calls += 1
        for name in USAGE_FIELDS:
            value = reported_tokens(result, name)
            if value is not None:
                self.tokens[name] = self.tokens.get(name, 0) + value
        if result.ok:
            self.finish_reason = result.finish_reason
            if result.finish_reason is not None:
                self.finish_reasons[result.finish_reason] += 1
        self.served_model = result.served_model or self.served_model
        self.system_fingerprint = result.system_fingerprint or self.system_fingerprint

    def usage_fields(self) -> UsageFields:
        return {
            "prompt_tokens": self.tokens.get("prompt_tokens"),
            "completion_tokens": self.tokens.get("completion_tokens"),
            "finish_reason": self.finish_reason,
            "served_model": self.served_model,
            "system_fingerprint": self.system_fingerprint,
        }

    def record_fields(self) -> UsageFields:
        """`usage_fields`, and `finish_reasons` for an attempt of more than one call."""
        fields = self.usage_fields()
        if self.calls > 1:
            fields["finish_reasons"] = dict(sorted(self.finish_reasons.items()))
        return fields


def reported_tokens(result: GenerationResult, name: str) -> int | None:
    """A call's `prompt_tokens` or `completion_tokens` as the server reported it; None when it
    did not, or reported something that is not a count."""
    value = result.usage.get(name) if result.usage else None
    return value if isinstance(value, int) and value >= 0 else None


def result_fields(result: GenerationResult) -> UsageFields:
    """The record fields of an attempt that made exactly one call: what `CallTally` gives for
    that one call, spelled without a tally (a tactic attempt makes one call, thousands a run)."""
    return {
        "prompt_tokens": reported_tokens(result, "prompt_tokens"),
        "completion_tokens": reported_tokens(result, "completion_tokens"),
        "finish_reason": result.finish_reason if result.ok else None,
        "served_model": result.served_model or None,
        "system_fingerprint": result.system_fingerprint or None,
    }
