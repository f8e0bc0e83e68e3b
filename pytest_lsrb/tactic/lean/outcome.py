"""Reading Lean's verdict: messages from `lean --json`/plain output and REPL replies, classified.

Three-way verdict on a tactic: an error means `lean_error` (with a subkind naming what went
wrong), goals that remain mean `progress`, no goals and no error mean `closed`. Positions follow
Lean: lines 1-based, columns 0-based (in codepoints).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.core.excerpts import defused, prompt_safe
from pytest_lsrb.engine.verifier import Domain, declare_outcomes
from pytest_lsrb.tactic.prompts import TAGS

Pos = tuple[int, int]  # (line, column)

# The Lean verifiers' outcomes and whose each is (DESIGN.md, "Verification outcomes"). `closed` and
# `progress` are no failure (only `closed` succeeds).
LEAN_OUTCOMES: Final[dict[str, Domain | None]] = {
    "closed": None,
    "progress": None,
    "lean_error": "model",
    "forbidden_token": "model",
    # A Lean process that ran past the profile's wall-clock check_timeout_s, or that died without
    # Lean's own messages (a signal not from the memory cap, a segfault, an abnormal exit): the
    # machine's load and health decide these, not the answer. The answer's deterministic budget
    # is maxHeartbeats, whose exhaustion Lean reports as an error (`lean_error`/`heartbeats`).
    "timeout": "environment",
    "oom_or_crash": "environment",
    "toolchain_missing": "environment",
    "checkout_failed": "environment",
    "build_failed": "environment",
    "baseline_failed": "environment",
    "reconstruction_failed": "harness",
    "skipped_unrestatable": "environment",
    "skipped_unspliceable": "environment",  # no tactic can stand where the sorry is (conv, ...)
    "memory_limit": "environment",  # a Lean process hit the configured memory cap
}
declare_outcomes(__name__, LEAN_OUTCOMES)

# Lean error text -> subkind; the first pattern that matches wins (order matters).
SUBKIND_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (kind, re.compile(pattern, re.I | re.S))
    for kind, pattern in (
        # The answer ran out of its deterministic budget (maxHeartbeats): Lean's
        # "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) has been
        # reached" (older: "... at 'isDefEq' ..."), also nested in "Tactic `simp` failed with a
        # nested error:", and the kernel's "(kernel) deterministic timeout". The model's, unlike a
        # wall-clock `timeout` outcome.
        (
            "heartbeats",
            r"\(deterministic\) timeout|\(kernel\) deterministic timeout|maximum number of heartbeats",
        ),
        ("max_recursion", r"maximum recursion depth"),
        (
            "parse",
            r"^<input>:\d+:\d+:|unexpected token|unexpected identifier|unexpected end of input"
            r"|unterminated|expected term|expected '|^expected |invalid syntax|unknown tactic"
            # Lean's whitespace parser (src/Lean/Parser/Basic.lean `whitespace`): tactic/lean/tabs.py
            r"|tabs are not allowed|isolated carriage returns are not allowed",
        ),
        ("unknown_identifier", r"unknown (identifier|constant|namespace)|unknown free variable"),
        ("type_mismatch", r"type mismatch|application type mismatch|argument .* has type|type expected"),
        ("unsolved_goals", r"^unsolved goals"),
        ("no_goals", r"no goals to be solved|^no goals"),
        ("synthesis_failed", r"failed to synthesize|don't know how to synthesize"),
        ("termination", r"fail(ed)? to show termination|structural recursion"),
        ("kernel", r"^\(kernel\)|kernel type check failed"),
        ("metavariables", r"contains metavariable|declaration has metavariables"),
        (
            "tactic_failed",
            r"tactic .* failed|failed|could not|made no progress|did not|unable to"
            r"|linarith|omega|cannot|not applicable|no applicable|motive is not|not found",
        ),
    )
)
# Lean's one warning per declaration that depends on sorryAx: `declaration uses 'sorry'`, with
# backticks since the sorry is pretty-printed (lean4#10034), and naming the declaration in the
# form lean4#11414 proposes (`declaration `foo` uses `sorry``).
SORRY_WARNING: Final = re.compile(r"^declaration (?:`[^`\n]+` |'[^'\n]+' )?uses ['`]sorry['`]$")
# REPL replies that say the request itself was wrong: the harness's fault, not the tactic's.
REPL_PROTOCOL_ERRORS: Final[tuple[str, ...]] = (
    "Unknown environment",
    "Unknown proof state",
    "Could not parse JSON",
    "Could not parse as a valid JSON command",
)
_TEXT_MESSAGE = re.compile(
    r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|info|information)"
    r"(?:\([^)]*\))?: ?(?P<data>.*)$"
)


@dataclass(frozen=True)
class LeanMessage:
    severity: str
    pos: Pos
    end_pos: Pos | None
    data: str

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @property
    def is_sorry_warning(self) -> bool:
        return self.severity == "warning" and SORRY_WARNING.match(self.data.strip()) is not None

    def shifted(self, lines: int) -> LeanMessage:
        """The same message with its line numbers moved by `lines`."""
        end = (self.end_pos[0] + lines, self.end_pos[1]) if self.end_pos else None
        return LeanMessage(self.severity, (self.pos[0] + lines, self.pos[1]), end, self.data)

    def within(self, start: Pos, end: Pos) -> bool:
        """Whether the message starts inside [start, end]."""
        return start <= self.pos <= end

    def covers(self, start: Pos, end: Pos) -> bool:
        """Whether the message's range contains [start, end] (a point range if it has no end)."""
        stop = self.end_pos or self.pos
        return self.pos <= start and end <= stop

    def sorrydb(self, code_line: str | None, limit: int = 1500) -> str:
        """The message as SorryDB's checker shows it to the model (`format_lean_errors` in
        sorrydb/utils/llm_tools.py at 71959ed): `<error line= column=>`, the checked file's line
        (`<code_line>`, when known), `<message>severity: first line</message>`, `</error>`, then
        the message's other lines; cut at `limit` characters, without control characters, and
        unable to open or close the prompt's tags."""
        data = self.data.strip()
        data = data if len(data) <= limit else data[: limit - 3] + "..."
        first, _, rest = defused(prompt_safe(data), TAGS).partition("\n")
        code = (
            "" if code_line is None else f"<code_line>{defused(prompt_safe(code_line), TAGS)}</code_line>\n"
        )
        shown = (
            f'<error line="{self.pos[0]}" column="{self.pos[1]}">\n{code}'
            f"<message>{self.severity}: {first}</message>\n</error>"
        )
        return f"{shown}\n{rest}" if rest else shown

    def brief(self, limit: int = 300) -> str:
        text = " ".join(self.data.split())
        text = text if len(text) <= limit else text[: limit - 3] + "..."
        return f"{self.pos[0]}:{self.pos[1]}: {self.severity}: {text}"


@dataclass(frozen=True)
class SorryInfo:
    """A sorry the REPL found: where it is, its goal and the proof state it opened."""

    pos: Pos | None
    end_pos: Pos | None
    goal: str
    proof_state: int | None


@dataclass(frozen=True)
class Verdict:
    """What Lean said about one check: an outcome of `LEAN_OUTCOMES`."""

    outcome: str
    subkind: str | None = None
    detail: str | None = None
    goals: tuple[str, ...] = field(default_factory=tuple)
    # Lean's errors as SorryDB shows them (`LeanMessage.sorrydb`, at most MAX_FED_BACK): what a
    # feedback round shows
    messages: tuple[str, ...] = field(default_factory=tuple)

    @property
    def success(self) -> bool:
        return self.outcome == "closed"


MAX_FED_BACK: Final = 5


def error_subkind(text: str) -> str:
    """The subkind of one Lean error message (`other` when no pattern fits)."""
    body = text.strip()
    if body.startswith("Lean error:"):
        body = body[len("Lean error:") :].strip()
    for kind, pattern in SUBKIND_PATTERNS:
        if pattern.search(body):
            return kind
    return "other"


_SEVERITY: Final = {"information": "info"}


def _pos(obj: Any) -> Pos | None:
    if not isinstance(obj, Mapping):
        return None
    line, col = obj.get("line"), obj.get("column")
    if isinstance(line, int) and isinstance(col, int):
        return (line, col)
    return None


def message_from_json(obj: Mapping[str, Any]) -> LeanMessage:
    """One message as the REPL and `lean --json` write it."""
    return LeanMessage(
        # `lean --json` says `information` where the REPL says `info`
        severity=_SEVERITY.get(str(obj.get("severity", "error")), str(obj.get("severity", "error"))),
        pos=_pos(obj.get("pos")) or (0, 0),
        end_pos=_pos(obj.get("endPos")),
        data=str(obj.get("data", "")),
    )


def messages_from_reply(reply: Mapping[str, Any]) -> list[LeanMessage]:
    raw = reply.get("messages") or []
    return [message_from_json(m) for m in raw if isinstance(m, Mapping)]


def sorries_from_reply(reply: Mapping[str, Any]) -> list[SorryInfo]:
    out: list[SorryInfo] = []
    for s in reply.get("sorries") or []:
        if isinstance(s, Mapping):
            ps = s.get("proofState")
            out.append(
                SorryInfo(
                    _pos(s.get("pos")),
                    _pos(s.get("endPos")),
                    str(s.get("goal", "")),
                    ps if isinstance(ps, int) else None,
                )
            )
    return out


def parse_lean_output(stdout: str) -> list[LeanMessage]:
    """Messages printed by `lean --json FILE` (one JSON object a line) or plain `lean FILE`.

    Plain messages span several lines (`file:l:c: error: first line` then the rest), so a line
    that starts no message continues the previous one.
    """
    messages: list[LeanMessage] = []
    current: dict[str, Any] | None = None

    def flush() -> None:
        nonlocal current
        if current is not None:
            messages.append(
                LeanMessage(current["sev"], current["pos"], None, "\n".join(current["lines"]).rstrip())
            )
            current = None

    for line in stdout.splitlines():
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith("}"):
            try:
                obj = json.loads(stripped)
            except json.JSONDecodeError:
                obj = None
            if isinstance(obj, dict) and "severity" in obj:
                flush()
                messages.append(message_from_json(obj))
                continue
        m = _TEXT_MESSAGE.match(line)
        if m:
            flush()
            sev = "info" if m["sev"] == "information" else m["sev"]
            current = {"sev": sev, "pos": (int(m["line"]), int(m["col"])), "lines": [m["data"]]}
        elif current is not None:
            current["lines"].append(line)
    flush()
    return messages


def first_error(messages: Iterable[LeanMessage]) -> LeanMessage | None:
    return next((m for m in messages if m.is_error), None)


def judge_messages(
    messages: Sequence[LeanMessage],
    span: tuple[Pos, Pos],
    *,
    progress_span: tuple[Pos, Pos] | None = None,
    text: str | None = None,
) -> Verdict:
    """The verdict on a tactic placed at `span`, from the errors Lean reported for its proof.

    No error: `closed`. Only `unsolved goals` errors whose range holds the tactic (the enclosing
    `by` block ended with goals left), or that start inside `progress_span` (a `{ tac }` block
    reports them at its `}`): `progress`. Anything else: `lean_error`, subkind of the first
    error that is not such an `unsolved goals`. The verdict's `messages` are the errors as
    SorryDB's checker shows them (`LeanMessage.sorrydb`), each with its line of `text` (the
    checked file) when given.
    """
    errors = [m for m in messages if m.is_error]
    if not errors:
        return Verdict("closed")

    def pending_here(m: LeanMessage) -> bool:
        if error_subkind(m.data) != "unsolved_goals":
            return False
        return m.covers(*span) or (progress_span is not None and m.within(*progress_span))

    pending = [m for m in errors if pending_here(m)]
    others = [m for m in errors if m not in pending]
    lines = text.splitlines() if text is not None else []

    def code_line(m: LeanMessage) -> str | None:
        return lines[m.pos[0] - 1] if 0 < m.pos[0] <= len(lines) else None

    said = tuple(m.sorrydb(code_line(m)) for m in errors[:MAX_FED_BACK])
    if not others:
        goals = tuple(m.data.split("\n", 1)[1] if "\n" in m.data else "" for m in pending)
        return Verdict("progress", detail=pending[0].brief(), goals=goals, messages=said)
    worst = others[0]
    return Verdict("lean_error", error_subkind(worst.data), worst.brief(), messages=said)
