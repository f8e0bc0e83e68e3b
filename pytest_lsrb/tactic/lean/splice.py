"""Splicing a tactic over a sorry: only the sorry's span changes.

Spans follow SorryDB and Lean: `start_line`/`end_line` 1-based, columns 0-based codepoints,
end exclusive. A sorry in tactic position becomes the tactic; a sorry in term position becomes
`(by tactic)` (a term needs `by`; the parentheses keep it one argument wherever it stood).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from pytest_lsrb.tactic.lean.outcome import Pos

SorryKind = Literal["tactic", "term"]
# What precedes a sorry in tactic position (on the same line).
_TACTIC_BEFORE: Final = re.compile(r"(?:^|[\s(])(?:by|·|\.|;|<;>|then|else|do)\s*$|^\s*$")
# What precedes a sorry in term position.
_TERM_BEFORE: Final = re.compile(
    r"(?::=|\(|⟨|,|\bexact|\brefine|\bapply|\bfrom|\buse|\bshow|\bhave\s.*:=|←|\$|<\|)\s*$"
)
_SORRY: Final = re.compile(r"(?<![\w.'])sorry(?![\w'])")
_ARROW_BEFORE: Final = re.compile(r"=>\s*$")
_TACTIC_ARM: Final = re.compile(r"^\s*(?:\||case\b|next\b|·)")


class SpliceError(ValueError):
    """The span does not hold a `sorry` in this text."""


@dataclass(frozen=True)
class Spliced:
    text: str
    span: tuple[Pos, Pos]  # where the replacement now sits (same line/column conventions)
    replacement: str


def _offset(lines: list[str], line: int, column: int) -> int:
    """Index in the text of (line, column); Lean counts lines by `\n` only."""
    if not 1 <= line <= len(lines):
        raise SpliceError(f"line {line} is outside the file ({len(lines)} lines)")
    if column > len(lines[line - 1]):
        raise SpliceError(f"column {column} is past the end of line {line}")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column


def span_text(text: str, start: Pos, end: Pos) -> str:
    lines = text.split("\n")
    return text[_offset(lines, *start) : _offset(lines, *end)]


def infer_sorry_kind(text: str, start: Pos) -> SorryKind:
    """Tactic or term position, from what stands before the sorry (and the line above it)."""
    lines = text.split("\n")
    line = lines[start[0] - 1]
    before = line[: start[1]]
    if _ARROW_BEFORE.search(before):  # `case h => sorry`, `| zero => sorry`: tactic; `fun x =>`: term
        return "tactic" if _TACTIC_ARM.match(before) else "term"
    if _TERM_BEFORE.search(before):
        return "term"
    if before.strip() == "":
        prev = next((p for p in reversed(lines[: start[0] - 1]) if p.strip()), "")
        prev = prev.split("--", 1)[0].rstrip()
        if prev.endswith((":=", "(", ",", "⟨", "←", "=>")) and not prev.endswith("by"):
            return "tactic" if prev.endswith("=>") and _TACTIC_ARM.match(prev) else "term"
        return "tactic"
    if _TACTIC_BEFORE.search(before):
        return "tactic"
    return "term"


def splice(text: str, start: Pos, end: Pos, tactic: str, kind: SorryKind | None = None) -> Spliced:
    """Replace the span [start, end) holding a `sorry` with `tactic` (or `(by tactic)` in term
    position). SorryDB spans are mostly the five letters, a few cover more lines: the whole
    span is replaced, nothing outside it."""
    found = span_text(text, start, end)
    if not _SORRY.search(found):
        raise SpliceError(f"the span {start[0]}:{start[1]}-{end[0]}:{end[1]} holds {found[:40]!r}, not sorry")
    if "\n" in tactic:
        raise SpliceError("a tactic proposal is one line")
    kind = kind or infer_sorry_kind(text, start)
    replacement = tactic.strip() if kind == "tactic" else f"(by {tactic.strip()})"
    lines = text.split("\n")
    a, b = _offset(lines, *start), _offset(lines, *end)
    new_end = (start[0], start[1] + len(replacement))
    return Spliced(text[:a] + replacement + text[b:], (start, new_end), replacement)
