"""Proof states of the Lean REPL: one tactic run on a state, and what its reply says.

The REPL keeps every proof state it made (a `sorry` of a `cmd`, `sorries[i].proofState`, or a
tactic step); `{"tactic": t, "proofState": n}` runs `t` on state `n` and answers (REPL
`REPL/Main.lean`, `runTactic`; transcripts `proof_step`, `proof_branching`, `invalid_tactic`):

- `{"proofState": m, "goals": [...], "proofStatus": "...", "messages": [...]}`: the new state
  `m`, its goals (none: the goal is closed, or Lean's error recovery admitted it - then
  `messages` holds the error and the status is `Incomplete: contains sorry`);
- `{"message": "Lean error:\\n<input>:1:1: unknown tactic"}`: the tactic did not parse or run
  (transcript `unknown_tactic`); `{"message": "Unknown proof state."}` is the harness's (a state
  this process never made, transcript `unknown_proof_state`).

The REPL's "Completed" is no verdict: a step that leaves no goal still has its whole file
checked by the acceptance rule (lean/acceptance.py). What a step *does* decide is the failures:
an error on the sorry's own state is the answer's error wherever it stands, and goals left are
`progress` - where the sorry is its block's only tactic (`sorry_stands_alone`), so that the
file would put those goals nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from pytest_lsrb.core.excerpts import defused, prompt_safe
from pytest_lsrb.tactic.lean.outcome import LeanMessage, Pos, Verdict, error_subkind, messages_from_reply
from pytest_lsrb.tactic.lean.splice import block_at
from pytest_lsrb.tactic.prompts import TAGS

# The REPL's reply to a request it could not run as Lean (REPL/Main.lean: `throw <| IO.userError`
# messages are `Lean error:` + Lean's text; its own refusals are plain sentences).
LEAN_ERROR_PREFIX: Final = "Lean error:"


@dataclass(frozen=True)
class TacticStep:
    """The REPL's answer to one `tactic` request."""

    proof_state: int | None  # the new state (None: the REPL made none)
    goals: tuple[str, ...] = ()
    messages: tuple[LeanMessage, ...] = ()
    status: str = ""  # the REPL's proofStatus
    refused: str | None = None  # the REPL's `message` when it made no state

    @property
    def errors(self) -> list[LeanMessage]:
        return [m for m in self.messages if m.is_error]

    @property
    def lean_error(self) -> str | None:
        """Lean's error text, from the messages or the REPL's `Lean error:` refusal."""
        if self.refused is not None:
            return self.refused if self.refused.startswith(LEAN_ERROR_PREFIX) else None
        errors = self.errors
        return errors[0].data if errors else None

    @property
    def closes(self) -> bool:
        """No error and no goal left: the step closed its state (a verdict only after the file's check)."""
        return self.refused is None and self.proof_state is not None and not self.goals and not self.errors


class Stepper(Protocol):
    """A REPL backend that runs a tactic on a proof state it made (`ReplBackend.run_tactic`)."""

    def run_tactic(self, tactic: str, proof_state: int, *, generation: int) -> Any: ...


@dataclass(frozen=True)
class ProofStart:
    """Where a tactic-by-tactic search starts: the sorry's proof state in one REPL process (the
    unpatched file loaded once). `step` runs a tactic on any state that process made since."""

    backend: Stepper
    generation: int
    proof_state: int
    goal: str

    def step(self, tactic: str, state: int) -> Any:
        """The `TacticStep`, or the backend's `LeanRun` when the REPL could not run it."""
        return self.backend.run_tactic(tactic, state, generation=self.generation)


def step_from_reply(reply: Mapping[str, Any]) -> TacticStep:
    state = reply.get("proofState")
    goals = reply.get("goals")
    message = reply.get("message")
    if not isinstance(state, int):
        return TacticStep(
            None, refused=str(message) if message is not None else f"no proof state in {reply!r}"
        )
    return TacticStep(
        state,
        tuple(str(g) for g in goals) if isinstance(goals, list) else (),
        tuple(messages_from_reply(reply)),
        str(reply.get("proofStatus", "")),
    )


def tactic_request(tactic: str, proof_state: int) -> dict[str, Any]:
    """The request running `tactic` (an answer: one tactic or a block) on `proof_state`. A block's
    later lines keep their indentation relative to its first, as the splice writes them."""
    return {"tactic": block_at(tactic, 0, "tactic"), "proofState": proof_state}


def screen_verdict(step: TacticStep) -> Verdict | None:
    """What the step on the sorry's own state decides: Lean's error (`lean_error`, the subkind the
    file's check would give the same error) or goals left (`progress`); None when only the whole
    file can say (the state closed, or the REPL refused the request for its own reasons)."""
    error = step.lean_error
    if error is not None:
        body = error.removeprefix(LEAN_ERROR_PREFIX).strip()
        return Verdict(
            "lean_error",
            error_subkind(body),
            f"on the sorry's proof state: {body[:300]}",
            messages=(_safe(body),),  # what a feedback round shows (the file's check would say)
        )
    if step.refused is not None or step.errors:
        return None
    if step.goals:
        return Verdict(
            "progress",
            detail=f"{len(step.goals)} goal(s) left on the sorry's proof state",
            goals=step.goals,
            messages=(_safe("unsolved goals\n" + "\n\n".join(step.goals)),),
        )
    return None


def _safe(text: str, limit: int = 1500) -> str:
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return defused(prompt_safe(text), TAGS)


# What may stand before a sorry that is the only tactic of its block, each focusing one goal:
# `by`, `=>` (case, next, an induction or match alternative) at the end of the text before it,
# or a bullet `·`/`.` alone before it on its line.
_OPENS_BLOCK: Final = re.compile(r"(?:(?<![\w.'])by|=>)\s*$|^\s*[·.]\s*$")
_LINE_COMMENT: Final = re.compile(r"--.*$")
# What may follow the sorry on its line when its block ends there: the end of an enclosing term.
_ENDS_TERM: Final = frozenset(")]}⟩,")


def _code(line: str) -> str:
    return _LINE_COMMENT.sub("", line)


def sorry_stands_alone(text: str, start: Pos, end: Pos) -> bool:
    """Whether the sorry at [start, end) is the only tactic of a block that focuses one goal: a
    block opener (`by`, `=>`, a bullet) right before it, and nothing of the same block after it
    (the rest of its line closes a term or is empty, the next line is indented less than the
    sorry). Then the sorry's proof state is all the block has, and the goals an answer leaves
    there are the block's. Anything else (`constructor` then `sorry`, `<;> sorry`): False."""
    lines = text.split("\n")
    if not (1 <= start[0] <= len(lines) and 1 <= end[0] <= len(lines)):
        return False
    before = lines[start[0] - 1][: start[1]]
    if not before.strip():  # first on its line: the opener ends the previous line with code
        before = next((_code(x) for x in reversed(lines[: start[0] - 1]) if _code(x).strip()), "")
    if _OPENS_BLOCK.search(_code(before)) is None:
        return False
    after = _code(lines[end[0] - 1][end[1] :]).strip()
    if after and after[0] not in _ENDS_TERM:
        return False
    for line in lines[end[0] :]:
        code = _code(line)
        if code.strip():
            return len(code) - len(code.lstrip()) < start[1]
    return True
