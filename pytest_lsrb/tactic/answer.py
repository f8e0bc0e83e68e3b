"""Reading an answer out of model output: one rule per published format, the rule recorded.

`read_answer(raw, mode, site)` gives the tactic (mode `tactic`, the card's default) or the whole
proof body (mode `proof`, `--lsrb-answer proof`) and `answer_format`: the steps that fired,
joined by `+` (e.g. `think+fences+header`), so a researcher can audit every extraction in
attempts.jsonl. `site` is where the target sorry stood in the source the prompt showed
(`--lsrb-context file`), None when it showed none.

Steps, in the order they run:

1. reasoning (`think`, `think_cut`): `<think>...</think>` (also `<thinking>`, `<reasoning>`) is
   dropped; a closing tag whose opening tag the server stripped drops everything before it
   (DeepSeek-R1-style chat templates); an opening tag never closed (output cut at max_tokens)
   drops everything after it. Kimina-Prover writes ```tactics fences inside its reasoning: they
   go with it.
   OpenAI's harmony format (gpt-oss, served raw): the text after the last
   `<|channel|>final<|message|>` (`final_channel`).
2. step-prover echoes: BFS-Prover echoes `{state}:::` before its tactic (`state_echo`: the text
   after the last `:::`); InternLM2-StepProver writes `PROOFSTEP <tactic>` (`proofstep`).
3. comments and goal displays: Lean's comments go first (lexer.py), so a fence inside a
   `/- ... -/` block (Goedel-Prover-V2's plan) is part of the comment and a doc comment never
   hides the theorem after it; a fence (or the whole text) that only shows goals (`case inl`,
   `h : p`, `⊢ p ∨ q`) is no answer (`goal_display`).
4. what replaced the sorry (`fill`, with a site): an answer that restates the source shown - the
   declaration, or the file, with the sorry filled in, a nested one included - is read as
   SorryDB's `llm` strategy reads it: what stands where the sorry stood (fill.py); the last
   fence that does so is the answer (the file's other sorries in it are the file's).
5. fences (`fence`, `fences`, `fence_sketch`, `continuation`): of the ```lean/```lean4/```tactics
   or untagged fences (any fence when none is), the last one holding no `sorry`/`admit` is the
   answer: DeepSeek-Prover-V2 and Goedel-Prover-V2 write a sketch fence (`have ... := by sorry`)
   before the complete proof, and Kimina-Prover's own extractor takes the last ```lean4 fence.
   When every fence is a sketch, the last one is read (and its sorry makes it forbidden). A
   closing fence with no opening one is DeepSeek-Prover-V1.5's continuation of the prompt's fence
   (its text before the fence is the proof body).
6. inside code (`header`, `term`, `definition`): `import`, `set_option`, `open`, `namespace`,
   `section`, `end`, `universe`, `variable` and attribute lines are dropped; a declaration that
   restates the goal (`theorem`/`lemma`/`example`/`instance`) is dropped up to its own `:=` -
   the first at bracket depth 0 that no `let`/`have` owns (lean/statement.py: `(α := α)`,
   `{ data := ... }` and `let x := 2;` in a statement are not the proof's start) - and the proof
   body after it is the answer (the last declaration's, after any helper lemmas). A term proof
   (`:= rfl`) is read as `exact <term>`. A definition (`def two := 2`) is no proof.
7. lines (lines.py): outside code, the first line that reads as a tactic.

Mode `tactic` takes the first tactic of what was read (lines.py `first_tactic`).

A restated statement that is not the target's (with a site: a hypothesis changed, added or
dropped, another conclusion) is the model's failure: `refusal` says so in one sentence
(`changed_statement`) and the answer is not valid; the task records it as
`forbidden_token/changed_statement` without asking Lean.

`valid` means "a Lean tactic": non-empty, brackets balanced, no forbidden token, no refusal, and
the first word (after focusing dots `·`/`.`, parentheses) is a tactic Lean or Mathlib defines
(tactics.py); prose such as `h : 12,000,001` or `p : Prop` is not valid.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.fill import Site, changed_statement, find_fill
from pytest_lsrb.tactic.guard import contains_forbidden
from pytest_lsrb.tactic.lean.keywords import COMMAND_KEYWORDS, IN_TACTICS
from pytest_lsrb.tactic.lean.lexer import without_comments
from pytest_lsrb.tactic.lean.statement import is_goal_display, value_start
from pytest_lsrb.tactic.lines import (
    AnswerMode,
    balanced,
    continues,
    first_tactic,
    from_lines,
    indent,
    is_lean_tactic,
    restore_first_indent,
    starts_with_tactic,
    strip_trailing_comment,
    tactic_word,
    unwrap,
)
from pytest_lsrb.tactic.options import OPTIONS
from pytest_lsrb.tactic.tactics import is_tactic_keyword

__all__ = [
    "ANSWER_MODES",
    "AnswerMode",
    "Site",
    "TacticAnswer",
    "balanced",
    "first_tactic_line",
    "is_lean_tactic",
    "read_answer",
    "read_tactic",
    "restore_first_indent",
]

ANSWER_MODES: Final = OPTIONS.choices_of("answer")  # the first is the default

_REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.S | re.I)
_REASONING_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_REASONING_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)
_FENCE = re.compile(r"^[ \t]*```([^\n`]*)\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
_FENCE_LINE = re.compile(r"^[ \t]*```", re.M)
_CODE_LANGS: Final = ("lean", "lean4", "tactics", "tactic", "")
_FINAL_CHANNEL = "<|channel|>final<|message|>"
_HARMONY_END = re.compile(r"<\|(?:end|return|call)\|>.*", re.S)
# What code around a proof holds besides the proof (dropped inside a fence).
_NOT_PROOF = re.compile(
    r"^(?:import|set_option|open|namespace|section|end|universe|universes|variable|variables|"
    r"noncomputable\s+section|attribute|@\[[^\]]*\]\s*$)\b|^@\[[^\]]*\]\s*$"
)
# A line that starts a command ends the proof above it (lean/keywords.py's one list; `open ... in`
# and `set_option ... in` are tactics, `@[attr]` opens a declaration).
_COMMAND_START = re.compile(
    r"^(?:@\[|#[a-z]|(?:"
    + "|".join(sorted(COMMAND_KEYWORDS - IN_TACTICS, key=len, reverse=True))
    + r")(?![\w'!?])|(?:open|set_option)\b(?!.*\bin\b))"
)
_OPTION_IN = re.compile(r"^set_option\s+\S+\s+\S+\s+in\b")
# A declaration that restates a goal: it states something to prove (`def two := 2` defines data).
_DECLARATION = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
    r"(?:theorem|lemma|example|instance)\b"
)
_DEFINITION = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*(?:def|abbrev)\b"
)
_DECLARATION_LINE = re.compile(_DECLARATION.pattern.replace("^", "^[ \\t]*", 1), re.M)
_DEFINITION_LINE = re.compile(_DEFINITION.pattern.replace("^", "^[ \\t]*", 1), re.M)
_BY = re.compile(r"by\b")


@dataclass(frozen=True)
class TacticAnswer:
    tactic: str  # the tactic (mode tactic) or the proof body (mode proof); may span lines
    nonempty: bool
    contains_sorry: bool
    valid: bool
    answer_format: str = "none"
    refusal: str | None = None  # one sentence: why the answer is the model's failure unchecked


def _strip_reasoning(text: str) -> tuple[str, list[str]]:
    steps: list[str] = []
    stripped = _REASONING_BLOCK.sub("\n", text)
    if stripped != text:
        steps.append("think")
    closes = list(_REASONING_CLOSE.finditer(stripped))
    if closes:
        stripped = stripped[closes[-1].end() :]
        if "think" not in steps:
            steps.append("think")
    opened = _REASONING_OPEN.search(stripped)
    if opened:
        stripped = stripped[: opened.start()]
        steps.append("think_cut")
    return stripped, steps


def _is_sketch(code: str) -> bool:
    return contains_forbidden(code)


def _code_fences(text: str) -> list[str]:
    """The bodies of the code fences (lean, lean4, tactics or untagged; any fence when none is)."""
    fences = [(m.group(1).strip().lower(), m.group(2)) for m in _FENCE.finditer(text)]
    return [body for lang, body in fences if lang in _CODE_LANGS] or [body for _, body in fences]


def _choose_fence(text: str) -> tuple[str, str] | None:
    """(code, step) of the fence that holds the answer, or None."""
    code = [body for body in _code_fences(text) if not is_goal_display(body)]
    if not code:
        return None
    complete = [body for body in code if not _is_sketch(body)]
    if complete:
        return complete[-1], "fence" if len(code) == 1 else "fences"
    return code[-1], "fence_sketch"


def _without_goal_displays(text: str) -> str:
    """`text` without the fences that only show goals (Lean's output, not an answer)."""
    return _FENCE.sub(lambda m: "\n" if is_goal_display(m.group(2)) else m.group(0), text)


def _comments_gone(text: str) -> str:
    """`text` without Lean's comments (and the lines that held only one) before fences are looked
    for: a fence inside a `/- ... -/` block is part of the comment. A block comment never closed
    stays as text (prose with a stray `/-`)."""
    return without_comments(text, closed_only=True)


def _continuation(text: str) -> str | None:
    """DeepSeek-Prover-V1.5's output: the proof body, then the ``` closing the prompt's fence."""
    markers = list(_FENCE_LINE.finditer(text))
    if not markers:
        return None
    before = text[: markers[0].start()]
    first = next((line.strip() for line in without_comments(before).split("\n") if line.strip()), "")
    if not first:
        return None
    line_after = text[markers[0].end() :].split("\n", 1)[0].strip()
    if line_after:  # ```lean opens a fence: not a continuation
        return None
    word = tactic_word(first)
    if word is None or not is_tactic_keyword(word):
        return None
    return before


def _proof_body(code: str) -> tuple[list[str], list[str]]:
    """The proof lines of a block of code (header and surroundings dropped) and the steps."""
    lines = without_comments(code).split("\n")
    steps: list[str] = []
    heads = [i for i, line in enumerate(lines) if _DECLARATION.match(line.strip())]
    if not heads and any(_DEFINITION.match(line.strip()) for line in lines):
        return [], ["definition"]  # a definition is no proof (`def two := 2` is not `exact 2`)
    if heads:
        steps.append("header")
        rest = "\n".join(lines[heads[-1] :])
        found = value_start(rest, len(rest) - len(rest.lstrip()))
        if found is None or found[1] != ":=":  # equation arms or `where`: no proof to read here
            return [], steps
        after = rest[found[0] + 2 :]
        by = _BY.match(after.lstrip(" \t"))
        if by is None:  # a term proof (`:= rfl`)
            steps.append("term")
            term_lines = _until_next_command(after.split("\n"), indent(rest.split("\n", 1)[0]))
            term_text = " ".join(" ".join(term_lines).split())
            return ([f"exact {term_text}"] if term_text else []), steps
        after = after.lstrip(" \t")[by.end() :]
        first, _, below = after.partition("\n")
        below_lines = below.split("\n")
        next_indent = next((indent(line) for line in below_lines if line.strip()), 2)
        lines = ([" " * next_indent + first.strip()] if first.strip() else []) + below_lines
        body = _until_next_command(lines, indent(rest.split("\n", 1)[0]))
    else:  # no header: code around the proof goes, a `set_option ... in` tactic stays (the guard's)
        lines = restore_first_indent(lines)
        body = [
            line.rstrip()
            for line in lines
            if not _NOT_PROOF.match(line.strip()) or _OPTION_IN.match(line.strip())
        ]
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    if not body:
        return [], steps
    base = min(indent(line) for line in body if line.strip())
    return [line[base:] if line.strip() else "" for line in body], steps


def _until_next_command(lines: list[str], header_indent: int) -> list[str]:
    """The proof after a header: its lines up to the next command (`end Foo`, another
    declaration, `#print`), which a proof indented under its header ends by dedenting. Nothing
    inside the proof is dropped."""
    body: list[str] = []
    indented = None
    for line in lines:
        stripped = line.strip()
        if not stripped:
            body.append("")
            continue
        if indented is None:
            indented = indent(line) > header_indent
        ends = indent(line) <= header_indent if indented else bool(_COMMAND_START.match(stripped))
        if ends and not continues(line):
            break
        body.append(line.rstrip())
    return body


def _extract(raw: str, mode: AnswerMode, site: Site | None = None) -> tuple[str, list[str], str | None]:
    text, steps = _strip_reasoning(raw.replace("\r\n", "\n").replace("\r", "\n"))
    final = text.rfind(_FINAL_CHANNEL)
    if final >= 0:  # OpenAI's harmony format (gpt-oss): the final channel holds the answer
        text = _HARMONY_END.sub("", text[final + len(_FINAL_CHANNEL) :])
        steps.append("final_channel")
    if ":::" in text:
        text = text[text.rindex(":::") + 3 :]
        steps.append("state_echo")
    text = _comments_gone(text)
    if is_goal_display(text) or any(is_goal_display(body) for body in _code_fences(text)):
        steps.append("goal_display")
        text = "" if is_goal_display(text) else _without_goal_displays(text)
    if site is not None:
        filled = _read_fill(text, site, mode)
        if filled is not None:
            return filled[0], [*steps, *filled[1]], filled[2]
    refusal = None
    chosen = _choose_fence(text)
    continuation = _continuation(text) if chosen is None or _FENCE_LINE.search(text) else None
    if continuation is not None:
        chosen = (continuation, "continuation")
    if chosen is None and not _DECLARATION_LINE.search(text):
        if _DEFINITION_LINE.search(text) and not from_lines(text, mode)[0]:
            return "", [*steps, "definition"], None
        answer, step = from_lines(text, mode)
        return answer, [*steps, step], None
    code, step = chosen if chosen is not None else (text, "code")
    steps.append(step)
    if site is not None:
        refusal = changed_statement(code, site)
        steps += ["changed_statement"] if refusal else []
    body, found = _proof_body(code)
    steps += found
    body = [strip_trailing_comment(line) for line in body]
    if not body:
        return "", steps, refusal
    if not found and not any(starts_with_tactic(line.strip()) for line in body[:1]):
        # a fence of prose or of a bare tactic with a label: read it as lines
        answer, line_step = from_lines("\n".join(body), mode)
        return answer, [*steps, line_step], refusal
    if mode == "proof":
        return "\n".join(body), steps, refusal
    first, _ = unwrap(body[0].strip())
    return first_tactic([" " * indent(body[0]) + first, *body[1:]]), steps, refusal


def _read_fill(text: str, site: Site, mode: AnswerMode) -> tuple[str, list[str], str | None] | None:
    """The answer as what replaced `site`'s sorry (fill.py), when the text restates the source
    around it: the last code fence that does (a fence's other sorries are the file's own), or
    the text itself when it has no fence."""
    for code in reversed(_code_fences(text)) if _FENCE_LINE.search(text) else [text]:
        fill = find_fill(code, site)
        if fill is None:
            continue
        refusal = changed_statement(code, site)
        steps = ["fill", *(["changed_statement"] if refusal else [])]
        lines = list(fill.lines)
        if mode == "proof":
            return "\n".join(lines), steps, refusal
        return first_tactic(lines), steps, refusal
    return None


def first_tactic_line(raw: str) -> str:
    """The first tactic of `raw` (with its nested block), after reasoning, fences, labels and chatter."""
    return read_answer(raw).tactic


# Pure in the text, and answers repeat (the same model output for many goals, the mock's few
# shapes): each distinct output is read once. TacticAnswer is frozen, so sharing it is safe.
@functools.lru_cache(maxsize=4096)
def read_answer(raw: str, mode: AnswerMode = "tactic", site: Site | None = None) -> TacticAnswer:
    """The answer in `raw`; with `site` (the source the model was shown and the target sorry in
    it), an answer that restates that source is read as what replaced the sorry (fill.py)."""
    answer, steps, refusal = _extract(raw, mode, site)
    answer = answer.strip("\n").rstrip()
    nonempty = bool(answer.strip())
    has_sorry = contains_forbidden(answer)
    valid = nonempty and not has_sorry and balanced(answer) and is_lean_tactic(answer) and refusal is None
    fmt = "+".join(dict.fromkeys(s for s in steps if s)) or "none"
    return TacticAnswer(answer, nonempty, has_sorry, valid, fmt if nonempty else f"{fmt}+empty", refusal)


def read_tactic(raw: str) -> TacticAnswer:
    return read_answer(raw, "tactic")
