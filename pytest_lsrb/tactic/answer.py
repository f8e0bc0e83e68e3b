"""Reading an answer out of model output: one rule per published format, the rule recorded.

`read_answer(raw, mode)` gives the tactic (mode `tactic`, the card's default) or the whole proof
body (mode `proof`, `--lsrb-answer proof`) and `answer_format`: the steps that fired, joined by
`+` (e.g. `think+fences+header`), so a researcher can audit every extraction in attempts.jsonl.

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
3. fences (`fence`, `fences`, `fence_sketch`, `continuation`): of the ```lean/```lean4/```tactics
   or untagged fences (any fence when none is), the last one holding no `sorry`/`admit` is the
   answer: DeepSeek-Prover-V2 and Goedel-Prover-V2 write a sketch fence (`have ... := by sorry`)
   before the complete proof, and Kimina-Prover's own extractor takes the last ```lean4 fence.
   When every fence is a sketch, the last one is read (and its sorry makes it forbidden). A
   closing fence with no opening one is DeepSeek-Prover-V1.5's continuation of the prompt's fence
   (its text before the fence is the proof body).
4. inside code (`header`, `term`): `import`, `set_option`, `open`, `namespace`, `section`, `end`,
   `universe`, `variable`, attribute lines and comments are dropped; a declaration header
   (`theorem`/`lemma`/`example`/... up to `:= by`) that restates the goal is dropped too, and the
   proof body after it is the answer (the last declaration's, after any helper lemmas). A term
   proof (`:= rfl`) is read as `exact <term>`.
5. lines (`bare`, `label`, `inline_code`, `list`): outside code, list markers (numbered
   alternatives: the first), labels (`**Tactic:**`, `Next tactic:`, `# Next Tactic`), a line that
   is one inline code span, a leading `by`; a prose line holding inline code gives its first code
   span; other prose lines are skipped. A line whose first word is a Lean tactic (tactics.py) is
   never prose (`first | linarith | nlinarith` is a tactic).

The first tactic (mode `tactic`): the first line of the body and the lines after it indented
deeper, or at its column starting with `|` (`induction n with` and its arms) or `<;>` - its
nested block (`have h : P := by` and its indented proof, `apply foo <;>` and its continuation, a
bracket list continued on the next line) - are one tactic. A lone
`have ... := by` can never elaborate, so "the first tactic line" of such an answer reads as the
tactic with its block; it is spliced as a block at the sorry's column (lean/splice.py).

`valid` means "a Lean tactic": non-empty, brackets balanced, no forbidden token, and the first
word (after focusing dots `·`/`.`, parentheses) is a tactic Lean or Mathlib defines
(tactics.py); prose such as `h : 12,000,001` or `p : Prop` is not valid.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final, Literal

from pytest_lsrb.tactic.guard import contains_forbidden
from pytest_lsrb.tactic.lean.keywords import COMMAND_KEYWORDS, IN_TACTICS
from pytest_lsrb.tactic.lean.lexer import code_view, without_comments
from pytest_lsrb.tactic.options import OPTIONS
from pytest_lsrb.tactic.tactics import is_tactic_keyword

AnswerMode = Literal["tactic", "proof"]
ANSWER_MODES: Final = OPTIONS.choices_of("answer")  # the first is the default

_REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.S | re.I)
_REASONING_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_REASONING_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)
_FENCE = re.compile(r"^[ \t]*```([^\n`]*)\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
_FENCE_LINE = re.compile(r"^[ \t]*```", re.M)
_CODE_LANGS: Final = ("lean", "lean4", "tactics", "tactic", "")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")
_LABEL = re.compile(
    r"^(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:the\s+)?(?:next\s+)?(?:lean\s*4?\s+)?"
    r"(?:tactic|answer|final\s+answer)\s*(?:\*\*|__)?\s*(?:[:：]\s*(?:\*\*|__)?\s*|$)",
    re.I,
)
_PROOFSTEP = re.compile(r"^PROOFSTEP\s+")
_FINAL_CHANNEL = "<|channel|>final<|message|>"
_HARMONY_END = re.compile(r"<\|(?:end|return|call)\|>.*", re.S)
_HEADING = re.compile(r"^#{1,6}\s")  # a markdown heading that is not a label: prose
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_CHATTER_OPENERS = re.compile(
    r"^(?:here|sure|certainly|okay|ok|the|this|we|i|i'll|i'd|let's|let\s+me|to|first|now|"
    r"since|because|note|proof|explanation|answer|step)\b[\s,:!]",
    re.I,
)
_TACTIC_START = re.compile(r"^(?:[a-z_][\w.!?']*|[·∙•(⟨\[{<]|·|\?_)")
_WORD = re.compile(r"[A-Za-z_][\w'!?₀-₉]*")
_BULLET = re.compile(r"^(?:[·∙•]|\.(?=\s))\s*")
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
_COLON_TACTICS: Final = frozenset(
    {"have", "haveI", "show", "suffices", "let", "letI", "obtain", "replace", "set"}
)
_OPTION_IN = re.compile(r"^set_option\s+\S+\s+\S+\s+in\b")
_DECLARATION = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
    r"(?:theorem|lemma|example|def|instance|abbrev)\b"
)
_PROOF_START = re.compile(r":=\s*by\b")
_TERM_START = re.compile(r":=(?!\s*by\b)")
# A line that cannot be a whole tactic: its proof or argument goes on below.
_OPEN_END = re.compile(r"(?:\bby|=>|<;>|:=|[(\[{⟨,]|\bfrom|\bthen|\belse|\bwith|\bdo|\bin|\|)\s*$")


@dataclass(frozen=True)
class TacticAnswer:
    tactic: str  # the tactic (mode tactic) or the proof body (mode proof); may span lines
    nonempty: bool
    contains_sorry: bool
    valid: bool
    answer_format: str = "none"


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


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_sketch(code: str) -> bool:
    return contains_forbidden(code)


def _choose_fence(text: str) -> tuple[str, str] | None:
    """(code, step) of the fence that holds the answer, or None."""
    fences = [(m.group(1).strip().lower(), m.group(2)) for m in _FENCE.finditer(text)]
    if not fences:
        return None
    code = [body for lang, body in fences if lang in _CODE_LANGS] or [body for _, body in fences]
    complete = [body for body in code if not _is_sketch(body)]
    if complete:
        return complete[-1], "fence" if len(code) == 1 else "fences"
    return code[-1], "fence_sketch"


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
    word = _WORD.match(_BULLET.sub("", first))
    if word is None or not is_tactic_keyword(word.group(0)):
        return None
    return before


def _proof_body(code: str) -> tuple[list[str], list[str]]:
    """The proof lines of a block of code (header and surroundings dropped) and the steps."""
    lines = without_comments(code).split("\n")
    steps: list[str] = []
    heads = [i for i, line in enumerate(lines) if _DECLARATION.match(line.strip())]
    if heads:
        steps.append("header")
        rest = "\n".join(lines[heads[-1] :])
        proof = _PROOF_START.search(rest)
        term = _TERM_START.search(rest)
        if proof is None or (term is not None and term.start() < proof.start()):
            if term is None:
                return [], steps
            steps.append("term")
            term_text = " ".join(rest[term.end() :].split())
            return ([f"exact {term_text}"] if term_text else []), steps
        after = rest[proof.end() :]
        first, _, below = after.partition("\n")
        below_lines = below.split("\n")
        next_indent = next((_indent(line) for line in below_lines if line.strip()), 2)
        lines = ([" " * next_indent + first.strip()] if first.strip() else []) + below_lines
        body = _until_next_command(lines, _indent(rest.split("\n", 1)[0]))
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
    base = min(_indent(line) for line in body if line.strip())
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
            indented = _indent(line) > header_indent
        ends = _indent(line) <= header_indent if indented else bool(_COMMAND_START.match(stripped))
        if ends and not continues(line):
            break
        body.append(line.rstrip())
    return body


def restore_first_indent(lines: list[str]) -> list[str]:
    """`lines` with the first line's indentation put back where a client or proxy stripped it.

    A completion of a prompt that ends in `:= by` is indented (DeepSeek-Prover-V2, Goedel-Prover
    and Kimina-Prover continue at two spaces); a client that strips the text (`.strip()` on
    the generated text) takes the first line's spaces only. Lean reads a tactic block by columns
    (`Tactic.tacticSeq` is `sepByIndent`: every tactic at the block's column, a deeper line
    continues the one above), so `apply Eq.symm` at column 0 over `rfl` at column 2 reads as one
    tactic. The first line lost its indent when it stands at column 0, every later line is
    indented (at least `m`), and the reading "the later lines are nested under it" is wrong:
    either the line after it is deeper than `m` (a nested block starts at its own column, so a
    later return to `m` cannot be inside it), or the first line is complete (brackets closed, no
    `by`/`=>`/`,`/`in`... at its end) and the next line starts a tactic of its own. Then the first line
    goes to column `m`. A single tactic whose block is all the rest is left as it is: its text
    cannot tell, and Lean reads `have h : P := by` over its block the same at either column."""
    code = [i for i, line in enumerate(lines) if line.strip()]
    if len(code) < 2 or _indent(lines[code[0]]) > 0:
        return lines
    first, rest = lines[code[0]], [lines[i] for i in code[1:]]
    m = min(_indent(line) for line in rest)
    if m == 0 or not _starts_with_tactic(_unwrap(first.strip())[0]):
        return lines
    following = rest[0].strip()
    complete = balanced(first) and not _OPEN_END.search(code_view(first).rstrip())
    # an arm (`| zero`) or `<;>` may stand at its tactic's column or deeper: it tells nothing
    if _indent(rest[0]) > m or (complete and _starts_with_tactic(following)):
        return [*lines[: code[0]], " " * m + first, *lines[code[0] + 1 :]]
    return lines


def _first_tactic(body: list[str], *, by_indent: bool = True) -> str:
    """The first tactic of `body`: its first line and the lines indented deeper below it."""
    if not body:
        return ""
    first = body[0]
    block = [first.strip()]
    base = _indent(first)
    for line in body[1:]:
        if not line.strip():
            continue
        # `t <;>` at a line's end takes the next line as its right-hand side, at any column
        deeper = _indent(line) > base or (_indent(line) == base and continues(line))
        deeper = deeper or (_indent(line) == base and block[-1].rstrip().endswith("<;>"))
        if not deeper or not (by_indent or _OPEN_END.search(block[-1]) or not balanced("\n".join(block))):
            break
        block.append(line.rstrip()[base:])
    return "\n".join(block)


def continues(line: str) -> bool:
    """A line at the tactic's own column that still belongs to it: an arm (`| zero => simp` of
    `induction n with`, `first`'s `| tac`) or a `<;> tac` continuation."""
    return line.lstrip().startswith(("|", "<;>"))


def _unwrap(candidate: str) -> tuple[str, str]:
    """One line without list marker, label, surrounding backticks/bold and a leading `by`."""
    step = "bare"
    listed = _LIST_MARKER.sub("", candidate).strip()
    if listed != candidate:
        step = "list"
    candidate = listed
    labelled = _LABEL.sub("", candidate).strip()
    if labelled != candidate:
        step = "label"
    candidate = labelled
    proofstep = _PROOFSTEP.sub("", candidate)
    if proofstep != candidate:
        candidate, step = proofstep.strip(), "proofstep"
    if len(candidate) > 4 and candidate.startswith("**") and candidate.endswith("**"):
        candidate = candidate[2:-2].strip()
    whole = _INLINE_CODE.fullmatch(candidate)
    if whole:
        candidate = whole.group(1).strip()
        step = "inline_code" if step == "bare" else step
    if candidate.startswith("by ") or candidate == "by":
        candidate = candidate[2:].strip()
    return candidate, step


def _starts_with_tactic(line: str) -> bool:
    word = _WORD.match(_BULLET.sub("", line).lstrip("("))
    if word is None or not is_tactic_keyword(word.group(0)):
        return False
    after = line[word.end() :] if not _BULLET.match(line) else ""
    if after.startswith(","):  # "first, we ..." is prose
        return False
    # "first: ..." is prose; `have: P := ...` (an anonymous `have`) is Lean
    return not after.startswith(":") or after.startswith(":=") or word.group(0) in _COLON_TACTICS


def _from_lines(text: str, mode: AnswerMode) -> tuple[str, str]:
    """The answer in text that is not code: the first line that reads as a tactic."""
    lines = restore_first_indent(without_comments(text).split("\n"))
    labels = [i for i, line in enumerate(lines) if _LABEL.match(_LIST_MARKER.sub("", line.strip()))]
    if labels:  # an explicit label (`# Next Tactic`, `**Tactic:**`) wins over the lines before it
        lines = lines[labels[-1] :]
    for index, line in enumerate(lines):
        candidate = line.strip()
        if not candidate:
            continue
        candidate, step = _unwrap(candidate)
        if not candidate or _HEADING.match(candidate):
            continue
        if not _starts_with_tactic(candidate) and (
            _is_chatter(candidate) or (not _TACTIC_START.match(candidate) and _INLINE_CODE.search(candidate))
        ):
            code = _INLINE_CODE.search(candidate)
            if code is None:
                continue
            candidate = _unwrap(code.group(1).strip())[0]
            step = "inline_code"
            if not candidate:
                continue
        candidate = _strip_trailing_comment(candidate)
        step = "label" if labels and step == "bare" else step
        below = lines[index + 1 :]
        indent = _indent(line)
        body = [" " * indent + candidate, *below]
        if mode == "proof":
            return _proof_from(body), step
        # a line of code keeps the lines indented under it; a tactic read out of prose (a label,
        # inline code) only when it cannot stand alone (`have h : P := by`)
        code_line = step in ("bare", "proofstep") and _starts_with_tactic(candidate)
        return _first_tactic(body, by_indent=code_line), step
    return "", "none"


def _proof_from(body: list[str]) -> str:
    """The lines of a proof in plain text: from the first tactic until prose or a blank gap."""
    kept: list[str] = []
    first_indent = _indent(body[0]) if body else 0
    for line in body:
        stripped = line.strip()
        if kept and stripped and _indent(line) < first_indent:
            break  # the indented code block ended
        if not stripped:
            if kept and kept[-1] == "":
                break
            kept.append("")
            continue
        if kept and (_LIST_MARKER.match(stripped) or _HEADING.match(stripped)):
            break  # the next numbered alternative, or the next section
        if kept and _is_chatter(stripped) and not _starts_with_tactic(stripped):
            break
        kept.append(line.rstrip())
    while kept and not kept[-1]:
        kept.pop()
    if not kept:
        return ""
    base = min(_indent(line) for line in kept if line)
    return "\n".join(_strip_trailing_comment(line[base:]) for line in kept)


def _is_chatter(line: str) -> bool:
    if _CHATTER_OPENERS.match(line):
        return True
    if line.endswith(":") and not line.endswith(":="):
        return True
    words = line.split()
    return len(words) >= 6 and line.endswith(".") and line[0].isupper()


def _strip_trailing_comment(line: str) -> str:
    return without_comments(line).rstrip() if "-" in line else line


def balanced(text: str) -> bool:
    """Whether the brackets of the code balance (brackets in comments and strings are not code)."""
    pairs = {")": "(", "]": "[", "}": "{", "⟩": "⟨"}
    stack: list[str] = []
    for ch in code_view(text):
        if ch in "([{⟨":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return False
    return not stack


def tactic_word(tactic: str) -> str | None:
    """The word a tactic starts with, after focusing dots and parentheses (`· (simp)` -> simp)."""
    text = tactic.strip()
    while True:
        bullet = _BULLET.match(text)
        if bullet is not None and bullet.end() > 0:
            text = text[bullet.end() :]
        elif text.startswith(("(", "{")):  # `(tacs)`, `{ tacs }`
            text = text[1:].lstrip()
        else:
            break
    word = _WORD.match(text)
    return word.group(0) if word else None


def is_lean_tactic(tactic: str) -> bool:
    """Whether the text starts with a tactic Lean or Mathlib defines (tactics.py)."""
    word = tactic_word(tactic)
    return word is not None and is_tactic_keyword(word)


def _extract(raw: str, mode: AnswerMode) -> tuple[str, list[str]]:
    text, steps = _strip_reasoning(raw.replace("\r\n", "\n").replace("\r", "\n"))
    final = text.rfind(_FINAL_CHANNEL)
    if final >= 0:  # OpenAI's harmony format (gpt-oss): the final channel holds the answer
        text = _HARMONY_END.sub("", text[final + len(_FINAL_CHANNEL) :])
        steps.append("final_channel")
    if ":::" in text:
        text = text[text.rindex(":::") + 3 :]
        steps.append("state_echo")
    chosen = _choose_fence(text)
    continuation = _continuation(text) if chosen is None or _FENCE_LINE.search(text) else None
    if continuation is not None:
        chosen = (continuation, "continuation")
    if chosen is None and not _DECLARATION.search(text.lstrip()):
        answer, step = _from_lines(text, mode)
        return answer, [*steps, step]
    code, step = chosen if chosen is not None else (text, "code")
    steps.append(step)
    body, found = _proof_body(code)
    steps += found
    body = [_strip_trailing_comment(line) for line in body]
    if not body:
        return "", steps
    if not found and not any(_starts_with_tactic(line.strip()) for line in body[:1]):
        # a fence of prose or of a bare tactic with a label: read it as lines
        answer, line_step = _from_lines("\n".join(body), mode)
        return answer, [*steps, line_step]
    if mode == "proof":
        return "\n".join(body), steps
    first, _ = _unwrap(body[0].strip())
    return _first_tactic([" " * _indent(body[0]) + first, *body[1:]]), steps


def first_tactic_line(raw: str) -> str:
    """The first tactic of `raw` (with its nested block), after reasoning, fences, labels and chatter."""
    return read_answer(raw).tactic


# Pure in the text, and answers repeat (the same model output for many goals, the mock's few
# shapes): each distinct output is read once. TacticAnswer is frozen, so sharing it is safe.
@functools.lru_cache(maxsize=4096)
def read_answer(raw: str, mode: AnswerMode = "tactic") -> TacticAnswer:
    answer, steps = _extract(raw, mode)
    answer = answer.strip("\n").rstrip()
    nonempty = bool(answer.strip())
    has_sorry = contains_forbidden(answer)
    valid = nonempty and not has_sorry and balanced(answer) and is_lean_tactic(answer)
    fmt = "+".join(dict.fromkeys(s for s in steps if s)) or "none"
    return TacticAnswer(answer, nonempty, has_sorry, valid, fmt if nonempty else f"{fmt}+empty")


def read_tactic(raw: str) -> TacticAnswer:
    return read_answer(raw, "tactic")
