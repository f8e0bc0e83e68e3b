"""Reading tactics out of lines: where a tactic ends (Lean's layout) and which line of text
that is not code is the answer (prose, labels, lists, inline code).

The first tactic (`first_tactic`): the first line of the body and the lines after it that belong
to it - indented deeper, or at its column starting with `|` (`induction n with` and its arms) or
`<;>`, anything inside a bracket it left open (Lean reads no column inside brackets), and a
`calc`'s `_ = ...` steps at its column - are one tactic: `have h : P := by` and its indented
proof, `apply foo <;>` and its continuation, a bracket list continued on the next line, even
with its `]` at the tactic's own column. A lone `have ... := by` can never elaborate, so "the
first tactic line" of such an answer reads as the tactic with its block; it is spliced as a block
at the sorry's column (lean/splice.py).

Outside code (`from_lines`: steps `bare`, `label`, `inline_code`, `list`, `proofstep`): list
markers (numbered alternatives: the first), labels (`**Tactic:**`, `Next tactic:`, `# Next
Tactic` - the last label wins), a line that is one inline code span, a leading `by`; a prose line
holding inline code gives its first code span; other prose lines are skipped. A line whose first
word is a Lean tactic (tactics.py) is never prose (`first | linarith | nlinarith` is a tactic).
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pytest_lsrb.tactic.lean.lexer import code_view, without_comments
from pytest_lsrb.tactic.tactics import is_tactic_keyword

AnswerMode = Literal["tactic", "proof"]


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")


_LABEL = re.compile(
    r"^(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:the\s+)?(?:next\s+)?(?:lean\s*4?\s+)?"
    r"(?:tactic|answer|final\s+answer)\s*(?:\*\*|__)?\s*(?:[:：]\s*(?:\*\*|__)?\s*|$)",
    re.I,
)


_PROOFSTEP = re.compile(r"^PROOFSTEP\s+")


_HEADING = re.compile(r"^#{1,6}\s")  # a markdown heading that is not a label: prose


_INLINE_CODE = re.compile(r"`([^`\n]+)`")


_CHATTER_OPENERS = re.compile(
    r"^(?:here|sure|certainly|okay|ok|the|this|we|i|i'll|i'd|let's|let\s+me|to|first|now|"
    r"since|because|note|proof|explanation|answer|step)\b[\s,:!]",
    re.I,
)


_TACTIC_START = re.compile(r"^(?:[a-z_][\w.!?']*|[·∙•(⟨\[{<]|·|\?_)")


def unwrap(candidate: str) -> tuple[str, str]:
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


def from_lines(text: str, mode: AnswerMode) -> tuple[str, str]:
    """The answer in text that is not code: the first line that reads as a tactic."""
    lines = restore_first_indent(without_comments(text).split("\n"))
    labels = [i for i, line in enumerate(lines) if _LABEL.match(_LIST_MARKER.sub("", line.strip()))]
    if labels:  # an explicit label (`# Next Tactic`, `**Tactic:**`) wins over the lines before it
        lines = lines[labels[-1] :]
    for index, line in enumerate(lines):
        candidate = line.strip()
        if not candidate:
            continue
        candidate, step = unwrap(candidate)
        if not candidate or _HEADING.match(candidate):
            continue
        if not starts_with_tactic(candidate) and (
            _is_chatter(candidate) or (not _TACTIC_START.match(candidate) and _INLINE_CODE.search(candidate))
        ):
            code = _INLINE_CODE.search(candidate)
            if code is None:
                continue
            candidate = unwrap(code.group(1).strip())[0]
            step = "inline_code"
            if not candidate:
                continue
        candidate = strip_trailing_comment(candidate)
        step = "label" if labels and step == "bare" else step
        below = lines[index + 1 :]
        column = indent(line)
        body = [" " * column + candidate, *below]
        if mode == "proof":
            return _proof_from(body), step
        # a line of code keeps the lines indented under it; a tactic read out of prose (a label,
        # inline code) only when it cannot stand alone (`have h : P := by`)
        code_line = step in ("bare", "proofstep") and starts_with_tactic(candidate)
        return first_tactic(body, by_indent=code_line), step
    return "", "none"


def _proof_from(body: list[str]) -> str:
    """The lines of a proof in plain text: from the first tactic until prose or a blank gap."""
    kept: list[str] = []
    first_indent = indent(body[0]) if body else 0
    for line in body:
        stripped = line.strip()
        if kept and stripped and indent(line) < first_indent:
            break  # the indented code block ended
        if not stripped:
            if kept and kept[-1] == "":
                break
            kept.append("")
            continue
        if kept and (_LIST_MARKER.match(stripped) or _HEADING.match(stripped)):
            break  # the next numbered alternative, or the next section
        if kept and _is_chatter(stripped) and not starts_with_tactic(stripped):
            break
        kept.append(line.rstrip())
    while kept and not kept[-1]:
        kept.pop()
    if not kept:
        return ""
    base = min(indent(line) for line in kept if line)
    return "\n".join(strip_trailing_comment(line[base:]) for line in kept)


def _is_chatter(line: str) -> bool:
    if _CHATTER_OPENERS.match(line):
        return True
    if line.endswith(":") and not line.endswith(":="):
        return True
    words = line.split()
    return len(words) >= 6 and line.endswith(".") and line[0].isupper()


def strip_trailing_comment(line: str) -> str:
    return without_comments(line).rstrip() if "-" in line else line


# A line that cannot be a whole tactic: its proof or argument goes on below.
_OPEN_END = re.compile(r"(?:\bby|=>|<;>|:=|[(\[{⟨,]|\bfrom|\bthen|\belse|\bwith|\bdo|\bin|\|)\s*$")


_CALC = re.compile(r"^(?:[·.]\s*)?calc\b")


_WORD = re.compile(r"[A-Za-z_][\w'!?₀-₉]*")


_BULLET = re.compile(r"^(?:[·∙•]|\.(?=\s))\s*")


_COLON_TACTICS: Final = frozenset(
    {"have", "haveI", "show", "suffices", "let", "letI", "obtain", "replace", "set"}
)


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
    if len(code) < 2 or indent(lines[code[0]]) > 0:
        return lines
    first, rest = lines[code[0]], [lines[i] for i in code[1:]]
    m = min(indent(line) for line in rest)
    if m == 0 or not starts_with_tactic(unwrap(first.strip())[0]):
        return lines
    following = rest[0].strip()
    complete = balanced(first) and not _OPEN_END.search(code_view(first).rstrip())
    # an arm (`| zero`) or `<;>` may stand at its tactic's column or deeper: it tells nothing
    if indent(rest[0]) > m or (complete and starts_with_tactic(following)):
        return [*lines[: code[0]], " " * m + first, *lines[code[0] + 1 :]]
    return lines


def first_tactic(body: list[str], *, by_indent: bool = True) -> str:
    """The first tactic of `body`: its first line and the lines below it that belong to it -
    indented deeper, an arm or `<;>` at its column, anything inside a bracket it left open (Lean
    reads no column inside brackets), and a `calc`'s steps (`_ = ...`) at its column."""
    if not body:
        return ""
    first = body[0]
    block = [first.strip()]
    base = indent(first)
    calc = _CALC.match(block[0]) is not None
    depth = _depth(block[0])
    for line in body[1:]:
        if not line.strip():
            continue
        if depth:  # inside a bracket the tactic left open
            block.append(line.rstrip()[base:] if indent(line) >= base else line.strip())
            depth = _depth(line, depth)
            continue
        at_column = indent(line) == base
        # `t <;>` at a line's end takes the next line as its right-hand side, at any column
        deeper = indent(line) > base or (
            at_column and (continues(line) or block[-1].rstrip().endswith("<;>"))
        )
        deeper = deeper or (at_column and calc and line.lstrip().startswith("_ "))
        if not deeper or not (by_indent or _OPEN_END.search(block[-1])):
            break
        block.append(line.rstrip()[base:])
        depth = _depth(line, depth)
    return "\n".join(block)


def _depth(text: str, depth: int = 0) -> int:
    """The bracket depth after `text`'s code, starting at `depth` (one closed too many is not
    open)."""
    code = code_view(text) if any(c in text for c in "\"'-«") else text  # (no literal: as is)
    for ch in code:
        if ch in "([{⟨":
            depth += 1
        elif ch in ")]}⟩":
            depth = max(0, depth - 1)
    return depth


def continues(line: str) -> bool:
    """A line at the tactic's own column that still belongs to it: an arm (`| zero => simp` of
    `induction n with`, `first`'s `| tac`) or a `<;> tac` continuation."""
    return line.lstrip().startswith(("|", "<;>"))


def starts_with_tactic(line: str) -> bool:
    word = _WORD.match(_BULLET.sub("", line).lstrip("("))
    if word is None or not is_tactic_keyword(word.group(0)):
        return False
    after = line[word.end() :] if not _BULLET.match(line) else ""
    if after.startswith(","):  # "first, we ..." is prose
        return False
    # "first: ..." is prose; `have: P := ...` (an anonymous `have`) is Lean
    return not after.startswith(":") or after.startswith(":=") or word.group(0) in _COLON_TACTICS


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
