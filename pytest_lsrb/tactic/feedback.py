"""Feedback rounds (`--lsrb-feedback-rounds N`): SorryDB's self-correcting protocol.

SorryDB's agentic strategy (sorrydb/strategies/agentic_strategy.py at 71959ed; the leaderboard's
"SC" rows, `enable_tools: false`) proposes a proof, has Lean check it, and on failure asks again
with the earlier attempts and the checker's reply in a `<feedback>` section, until a proof
verifies or `max_iterations` proposals were made. Here one attempt is that loop: round 1 is the
first prompt, each later round the same prompt with the feedback; the attempt's verdict is its
last round's, and every round is kept in the record (`feedback_rounds`).

What the model is shown is SorryDB's, in its layout and words:

- each earlier attempt's `<proposed_code>` is the model's **raw response** (SorryDB keeps
  `AIMessage(content=text_response)`, not the proof it extracted), so a misreading is never shown
  back as the model's own code;
- `<error>` is the builder's message: "✗ No proof could be extracted from LLM response" when no
  proof was read, else "✗ Verification failed:" and the checker's reply - Lean's errors as
  SorryDB's checker formats them ("Cannot build modified file: " then `<error line= column=>`,
  `<code_line>`, `<message>`: `LeanMessage.sorrydb`), or the reason an answer was refused;
- the section (`feedback_section`: "Previous attempts failed. Here is the feedback:" and the last
  three attempts, `<attempt iteration="…" age="…">`) stands in its place inside SorryDB's
  prompt with `--lsrb-prompt sorrydb` (tactic/prompts.py `AGENTIC_PROMPT`, the section empty in
  round 1); with the suite's own prompt, SorryDB's lines around it follow the prompt
  (`feedback_block`).

Only the model's own failures are fed back (a Lean error, a refused answer, an answer with no
proof in it, goals left): an infrastructure failure (the server, the toolchain) ends the loop and
the attempt is the environment's, as without rounds. Everything shown is bounded (an answer at
`MAX_CODE` characters, its head and tail kept; a reply at `MAX_ERROR`), stripped of control
characters and terminal escapes, and cannot open or close the prompt's tags (a fake
`</feedback>` in Lean's reply or in the answer: core/excerpts.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_lsrb.adapters.base import GenerationResult, Message
from pytest_lsrb.adapters.usage import reported_tokens
from pytest_lsrb.core.errors import MODEL_DOMAINS
from pytest_lsrb.core.excerpts import defused, prompt_safe
from pytest_lsrb.tactic.prompts import TAGS

# SorryDB shows the last three attempts.
SHOWN_ATTEMPTS: Final = 3
MAX_CODE: Final = 8_000  # characters of one earlier answer shown back
MAX_ERROR: Final = 3_000  # characters of the checker's reply to it
MAX_ROUNDS: Final = 20
# SorryDB's words (agentic_strategy.py PROMPT and its builder node).
INTRO: Final = "You already tried proving the theorem a few times and got the following feedback:"
OUTRO: Final = (
    "If there is feedback, start by mentioning why the previous attempt failed and how to fix the error."
)
HEADER: Final = "Previous attempts failed. Here is the feedback:"
NO_PROOF: Final = "✗ No proof could be extracted from LLM response"
FAILED: Final = "✗ Verification failed:"
NOT_BUILT: Final = "Cannot build modified file: "


@dataclass(frozen=True)
class Tried:
    """One earlier round as the next prompt shows it: the model's raw response and the reply."""

    code: str
    error: str


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _head_and_tail(text: str, limit: int) -> str:
    """`text`, or its head and tail around a note of what was cut (an answer's proof is often
    at its end, after the reasoning)."""
    if len(text) <= limit:
        return text
    note = f"\n[... {len(text) - limit} characters cut ...]\n"
    half = (limit - len(note)) // 2
    return text[:half] + note + text[len(text) - half :]


def shown(text: str, limit: int) -> str:
    """Text as it is embedded in a prompt: bounded, without control characters, and unable to
    open or close the prompt's tags."""
    return defused(prompt_safe(_head_and_tail(text, limit)), TAGS)


def feedback_section(tried: Sequence[Tried]) -> str:
    """What SorryDB puts inside `<feedback>` for the attempts so far (the last three, each with
    its iteration and age); empty before the first."""
    if not tried:
        return ""
    out = f"{HEADER}\n"
    total = len(tried)
    recent = tried[-SHOWN_ATTEMPTS:]
    for i, attempt in enumerate(recent):
        number = total - len(recent) + i + 1
        age = total - number
        age_text = "most recent" if age == 0 else f"{age} attempt(s) ago"
        out += f'\n<attempt iteration="{number}" age="{age_text}">\n'
        out += f"<proposed_code>\n{shown(attempt.code, MAX_CODE)}\n</proposed_code>\n"
        # (the reply's own `<error line=…>` blocks were made safe where they were written)
        out += f"<error>\n{_cut(prompt_safe(attempt.error), MAX_ERROR)}\n</error>\n"
        out += "</attempt>\n"
    return out


def feedback_block(tried: Sequence[Tried]) -> str:
    """SorryDB's lines around the section, as its prompt has them, for a prompt without a place
    for them (the suite's own)."""
    return f"{INTRO}\n<feedback>\n{feedback_section(tried)}\n</feedback>\n{OUTRO}"


def with_feedback(messages: Sequence[Message], tried: Sequence[Tried]) -> tuple[Message, ...]:
    """The suite prompt's round: its last user message followed by the feedback block."""
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
    """The builder's message on a failed round, in SorryDB's words: no proof extracted, or the
    verification failure with Lean's errors (already in SorryDB's format) or the refusal."""
    if fields.get("generation_error_kind") or not fields.get("nonempty") or not fields.get("tactic"):
        return NO_PROOF
    if fields.get("contains_sorry"):
        return f"{FAILED}\nThe answer contains sorry or admit, which never counts as a proof."
    if messages:
        return f"{FAILED}\n{NOT_BUILT}" + "\n".join(messages) + "\n"
    outcome = fields.get("verification_outcome")
    sub = fields.get("verification_error_subkind")
    detail = fields.get("verification_detail")
    head = f"{outcome}" + (f" ({sub})" if sub else "")
    said = f"{head}: {detail}" if detail else str(head)
    return f"{FAILED}\n{defused(prompt_safe(said), TAGS)}"


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
