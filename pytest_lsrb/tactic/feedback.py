"""Feedback rounds (`--lsrb-feedback-rounds N`): SorryDB's self-correcting protocol.

SorryDB's agentic strategy (sorrydb/strategies/agentic_strategy.py) proposes a proof, has Lean
check it, and on failure asks again with the earlier attempts and Lean's reply in a `<feedback>`
block (the last three attempts, each `<attempt iteration=… age=…>` holding the proposed code and
the error), until a proof verifies or the rounds run out. Here one attempt is that loop: round 1
is the ordinary prompt, each later round the same prompt with the feedback block added; the
attempt's verdict is its last round's, and every round is kept in the record (`feedback_rounds`).

Only the model's own failures are fed back (a Lean error, a refused answer, an answer with no
proof in it, goals left): an infrastructure failure (the server, the toolchain) ends the loop and
the attempt is the environment's, as without rounds. Everything shown is bounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_lsrb.adapters.base import GenerationResult, Message
from pytest_lsrb.adapters.usage import reported_tokens
from pytest_lsrb.core.errors import MODEL_DOMAINS

# SorryDB shows the last three attempts.
SHOWN_ATTEMPTS: Final = 3
MAX_CODE: Final = 4_000  # characters of one earlier answer shown back
MAX_ERROR: Final = 3_000  # characters of Lean's reply to it
MAX_ROUNDS: Final = 20
# SorryDB's words (agentic_strategy.py PROMPT), around the feedback block.
INTRO: Final = "You already tried proving the theorem a few times and got the following feedback:"
OUTRO: Final = (
    "If there is feedback, start by mentioning why the previous attempt failed and how to fix the error."
)
NO_PROOF: Final = "No proof could be extracted from the answer"


@dataclass(frozen=True)
class Tried:
    """One earlier round as the next prompt shows it."""

    code: str
    error: str


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def feedback_block(tried: Sequence[Tried]) -> str:
    """The `<feedback>` block of SorryDB's prompt for the attempts so far (the last three)."""
    lines = [INTRO, "<feedback>", "Previous attempts failed. Here is the feedback:"]
    total = len(tried)
    recent = tried[-SHOWN_ATTEMPTS:]
    for i, attempt in enumerate(recent):
        number = total - len(recent) + i + 1
        age = total - number
        shown_age = "most recent" if age == 0 else f"{age} attempt(s) ago"
        lines += [
            f'<attempt iteration="{number}" age="{shown_age}">',
            "<proposed_code>",
            _cut(attempt.code, MAX_CODE),
            "</proposed_code>",
            "<error>",
            _cut(attempt.error, MAX_ERROR),
            "</error>",
            "</attempt>",
        ]
    lines += ["</feedback>", OUTRO]
    return "\n".join(lines)


def with_feedback(messages: Sequence[Message], tried: Sequence[Tried]) -> tuple[Message, ...]:
    """The round's prompt: the first round's, its last user message followed by the feedback."""
    out = list(messages)
    last = max(i for i, m in enumerate(out) if m.role == "user")
    out[last] = Message("user", f"{out[last].content}\n\n{feedback_block(tried)}")
    return tuple(out)


def model_failed(fields: Mapping[str, Any]) -> bool:
    """Whether the round ended in the model's own failure, the only kind fed back (success and
    infrastructure failures end the loop)."""
    if fields.get("verification_success"):
        return False
    gen_domain = fields.get("generation_error_domain")
    if fields.get("generation_error_kind") and gen_domain not in MODEL_DOMAINS:
        return False
    ver_domain = fields.get("verification_error_domain")
    return not (fields.get("verification_error_kind") and ver_domain not in MODEL_DOMAINS)


def what_lean_said(fields: Mapping[str, Any], messages: Sequence[str]) -> str:
    """The error text of a failed round: Lean's messages in full, else the checker's reason."""
    if fields.get("generation_error_kind") or not fields.get("nonempty"):
        return NO_PROOF
    if fields.get("contains_sorry"):
        return "The answer contains sorry or admit, which never counts as a proof."
    if messages:
        return "\n".join(messages)
    outcome = fields.get("verification_outcome")
    sub = fields.get("verification_error_subkind")
    detail = fields.get("verification_detail")
    head = f"{outcome}" + (f" ({sub})" if sub else "")
    return f"{head}: {detail}" if detail else str(head)


def round_entry(
    number: int, fields: Mapping[str, Any], error: str | None, result: GenerationResult
) -> dict[str, Any]:
    """What the record keeps of one round (bounded), its call's cost from `result`."""
    outcome = fields.get("verification_outcome") or fields.get("generation_error_kind")
    if outcome is None:
        outcome = "valid" if fields.get("valid") else "invalid"
    return {
        "round": number,
        "answer": _cut(str(fields.get("tactic") or ""), MAX_CODE),
        "outcome": outcome,
        "subkind": fields.get("verification_error_subkind"),
        "lean": None if error is None else _cut(error, MAX_ERROR),
        "prompt_hash": fields.get("prompt_hash"),
        "prompt_tokens": reported_tokens(result, "prompt_tokens"),
        "completion_tokens": reported_tokens(result, "completion_tokens"),
        "latency_ms": round(result.latency_ms, 3),
    }


def combined(first: Mapping[str, Any], rounds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The attempt's fields: the last round's answer and verdict, the first round's prompt (the
    item's own). The calls, tokens and time of every round are the engine's count
    (`engine.calls`)."""
    last = dict(rounds[-1])
    for key in ("prompt", "prompt_hash"):
        last[key] = first.get(key)
    return last
