"""Splicing a tactic over a sorry: only the sorry's span changes.

Spans follow SorryDB and Lean: `start_line`/`end_line` 1-based, columns 0-based codepoints,
end exclusive. A sorry in tactic position becomes the tactic; a sorry in term position becomes
`(by tactic)` (a term needs `by`; the parentheses keep it one argument wherever it stood).

Which position a sorry is in follows the syntax around it:
- tactic: after `by`, `·`, `;`, `<;>`, a combinator that takes tactics (`all_goals`,
  `any_goals`, `try`, `repeat`, `iterate n`, `focus`, `first |`, `on_goal n =>`, `case x =>`,
  `next =>`, `decreasing_by`), an arm of `induction`/`cases`/`rcases` or of a `match` inside
  a tactic block, `then`/`else` of a tactic `if`, or alone on its line in a tactic block;
- term: after `:=`, `(`, `⟨`, `,`, `exact`/`refine`/`apply`/`from`/`use`/`show`, `fun x =>`,
  an arm of a term `match` or of an equation-compiler definition (`| 0 => sorry`), `then`/`else`
  of a term `if`, and the proof of `xs[i]'sorry`;
- a span that is a `stop` block (SorryDB records `stop` and the tactics it skips as one
  multi-line sorry) is in tactic position and is replaced whole;
- a sorry inside a `conv` block cannot hold a tactic: `SpliceError` says so, and the item is
  skipped with that reason.
A sorry inside `{ ... }` also records the braces (`block`): Lean reports the goals such a
block leaves at its `}`, which is `progress`, not an error of the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from pytest_lsrb.tactic.lean.lexer import comments_blanked
from pytest_lsrb.tactic.lean.outcome import Pos

SorryKind = Literal["tactic", "term"]
# What precedes a sorry in tactic position (on the same line).
_TACTIC_BEFORE: Final = re.compile(
    r"(?:^|[\s(])(?:by|·|\.|;|<;>|do|all_goals|any_goals|try|repeat|iterate\s+\d+|focus|"
    r"decreasing_by|first(?:\s*\|[^|]*)*\s*\||on_goal\s+-?\d+\s*=>|next(?:\s+[\w'✝]+)*\s*=>|"
    r"case'?\s+[^=]*=>|\{)\s*$|^\s*$"
)
# What precedes a sorry in term position.
_TERM_BEFORE: Final = re.compile(
    r"(?::=|\(|⟨|,|\bexact|\brefine|\bapply|\bfrom|\buse|\bshow|\bhave\s.*:=|←|\$|<\||\]')\s*$"
)
_SORRY: Final = re.compile(r"(?<![\w.'])sorry(?![\w'])|(?<=\]')sorry(?![\w'])")
_STOP_BLOCK: Final = re.compile(r"^stop\b")
_ARROW_BEFORE: Final = re.compile(r"=>\s*$")
_IF_BRANCH: Final = re.compile(r"\b(?:then|else)\s*$")
_TACTIC_ARM_HEAD: Final = re.compile(
    r"\b(?:induction'?|cases'?|rcases|obtain|fun_induction|fun_cases|induction_on)\b.*\bwith\b"
)
_DECLARATION_HEAD: Final = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
    r"(?:theorem|lemma|def|instance|abbrev|example)\b"
)
_TERM_LINE_END: Final = re.compile(r"(?::=|=>|\(|,|⟨|\bfrom|\bexact|\brefine)\s*$")
_CONV: Final = re.compile(r"^\s*(?:conv(?:_lhs|_rhs)?\b|.*\bconv\b.*=>\s*$)")


class SpliceError(ValueError):
    """The span does not hold a `sorry` in this text, or no tactic can stand there."""


@dataclass(frozen=True)
class Spliced:
    text: str
    span: tuple[Pos, Pos]  # where the replacement now sits (same line/column conventions)
    replacement: str
    block: tuple[Pos, Pos] | None = None  # the `{ ... }` around it, when there is one


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


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _enclosing_lines(lines: list[str], line_no: int, column: int) -> list[str]:
    """The lines that open the blocks around (line_no, column), innermost first."""
    out: list[str] = []
    width = column
    for i in range(line_no - 2, -1, -1):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("--"):
            continue
        if _indent(text) < width:
            out.append(text)
            width = _indent(text)
            if width == 0:
                break
    return out


def _arm_head(lines: list[str], line_no: int, column: int) -> str:
    """The line that opens the arms an arm at (line_no, column) belongs to: the nearest line
    above at most as indented that is not itself an arm."""
    for i in range(line_no - 2, -1, -1):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("--") or _indent(text) > column:
            continue
        if not text.lstrip().startswith("|"):
            return text
    return ""


def _statement_mode(lines: list[str], line_no: int) -> SorryKind:
    """Whether a statement starting line `line_no` (an `if`, a `match`) is a tactic or a term:
    a term when the line before it ends as a term does (`:=` without `by`, `=>` of a term, `(`)."""
    prev = next((p for p in reversed(lines[: line_no - 1]) if p.strip()), "")
    prev = prev.split("--", 1)[0].rstrip()
    if prev.endswith("by") or not _TERM_LINE_END.search(prev):
        return "tactic"
    return "term"


def _mode_of_keyword(lines: list[str], line_no: int, before: str, keyword: str) -> SorryKind:
    """The position of the `keyword` (`if`, `match`) nearest before the sorry on `before`'s line."""
    idx = before.rfind(keyword)
    ahead = before[:idx].rstrip() if idx >= 0 else before.rstrip()
    if idx >= 0 and ahead:
        if re.search(r"(?:^|[\s(])(?:by|·|;|<;>|then|else)$", ahead):
            return "tactic"
        return "term"
    return _statement_mode(lines, line_no)


def infer_sorry_kind(text: str, start: Pos) -> SorryKind:
    """Tactic or term position, from the syntax around the sorry (see the module docstring)."""
    lines = text.split("\n")
    line = lines[start[0] - 1]
    before = line[: start[1]]
    stripped = before.strip()
    if before.rstrip().endswith("]'"):  # `xs[i]'sorry`: the proof of a bound
        return "term"
    if _IF_BRANCH.search(before):
        if "if " in before:
            return _mode_of_keyword(lines, start[0], before, "if ")
        head = next((e for e in _enclosing_lines(lines, start[0], _indent(line) + 1) if "if " in e), "")
        row = lines.index(head) + 1 if head else start[0]
        return _mode_of_keyword(lines, row, head, "if ") if head else "tactic"
    if _ARROW_BEFORE.search(before):
        arm = stripped.startswith("|")
        if stripped.startswith(("case ", "case' ", "next")) or re.search(r"on_goal\s+-?\d+\s*=>\s*$", before):
            return "tactic"
        if not arm:
            return "term"  # `fun x => sorry`
        head = _arm_head(lines, start[0], _indent(line))
        if re.search(r"\bmatch\b", head) and not _TACTIC_ARM_HEAD.search(head):
            row = lines.index(head) + 1
            return _mode_of_keyword(lines, row, head, "match")
        if _DECLARATION_HEAD.search(head) or re.search(r"\bfun\s*$", head):
            return "term"  # an equation-compiler arm (`def f : Nat → Nat` / `| 0 => sorry`), `fun` arms
        return "tactic"
    if _TACTIC_BEFORE.search(before) and stripped:
        return "tactic"
    if _TERM_BEFORE.search(before):
        return "term"
    if stripped == "":
        prev = next((p for p in reversed(lines[: start[0] - 1]) if p.strip()), "")
        prev = prev.split("--", 1)[0].rstrip()
        if prev.endswith((":=", "(", ",", "⟨", "←", "=>")) and not prev.endswith("by"):
            if prev.endswith("=>"):
                return infer_sorry_kind(text + "", (start[0] - 1, len(prev))) if prev.strip() else "term"
            return "term"
        return "tactic"
    return "term"


def splice(text: str, start: Pos, end: Pos, tactic: str, kind: SorryKind | None = None) -> Spliced:
    """Replace the span [start, end) holding a `sorry` (or a `stop` block) with `tactic` (or
    `(by tactic)` in term position). SorryDB spans are mostly the five letters; a `stop` block
    covers several lines and is replaced whole, nothing outside the span changes."""
    found = span_text(text, start, end)
    stop_block = bool(_STOP_BLOCK.match(found))
    if not stop_block and not _SORRY.search(found):
        raise SpliceError(f"the span {start[0]}:{start[1]}-{end[0]}:{end[1]} holds {found[:40]!r}, not sorry")
    lines = text.split("\n")
    if any(
        _CONV.match(e)
        for e in [lines[start[0] - 1][: start[1]], *_enclosing_lines(lines, start[0], start[1])]
    ):
        raise SpliceError("the sorry is inside a conv block, where a tactic cannot stand")
    kind = "tactic" if stop_block else kind or infer_sorry_kind(text, start)
    replacement = block_at(tactic, start[1], kind)
    a, b = _offset(lines, *start), _offset(lines, *end)
    last = replacement.split("\n")[-1]
    rows = replacement.count("\n")
    new_end = (start[0] + rows, (start[1] if not rows else 0) + len(last))
    block = None
    if end[0] == start[0] and not rows:
        block = _brace_block(lines[start[0] - 1], start, end, len(replacement))
    return Spliced(text[:a] + replacement + text[b:], (start, new_end), replacement, block)


def code_span(text: str, span: tuple[Pos, Pos]) -> tuple[Pos, Pos]:
    """`span` of `text` ending at its last character of code. The comments and blank lines that
    end an answer are not its syntax: Lean's ranges end at a syntax's last token, so the
    `unsolved goals` of the block holding the answer ends there too (and must still cover it)."""
    lines = text.split("\n")
    a, b = _offset(lines, *span[0]), _offset(lines, *span[1])
    code = comments_blanked(text[a:b]).rstrip()
    if not code:
        return span
    end = a + len(code)
    line_start = text.rfind("\n", 0, end) + 1
    return (span[0], (text.count("\n", 0, end) + 1, end - line_start))


def block_at(tactic: str, column: int, kind: SorryKind) -> str:
    """`tactic` as the text that replaces a sorry at `column`: one line as it is; a block (a
    tactic and its nested lines, or a whole proof body) with its later lines indented to stand
    where its first line stands - Lean's tactic blocks are laid out by column, so every line of
    the block keeps its indentation relative to the first. In term position the block goes in
    `(by ...)`, its lines lined up after `(by `."""
    lines = tactic.strip("\n").rstrip().split("\n")
    first = lines[0].strip()
    base = len(lines[0]) - len(lines[0].lstrip())
    at = column + (0 if kind == "tactic" else len("(by "))
    rest = [(" " * at + line[base:]) if line.strip() else "" for line in lines[1:]]
    body = "\n".join([first, *rest])
    return body if kind == "tactic" else f"(by {body})"


def _brace_block(line: str, start: Pos, end: Pos, width: int) -> tuple[Pos, Pos] | None:
    """The `{ ... }` around the span on its line, in the patched text, or None."""
    before, after = line[: start[1]], line[end[1] :]
    if not before.rstrip().endswith("{"):
        return None
    close = after.find("}")
    if close < 0:
        return None
    open_col = before.rstrip().rfind("{")
    return ((start[0], open_col), (start[0], start[1] + width + close + 1))


def _code_only(text: str) -> str:
    """`text` with comments (`--`, nested `/- -/`) and string literals blanked, newlines kept."""
    out = list(text)
    i, n, depth = 0, len(text), 0
    while i < n:
        two = text[i : i + 2]
        if depth:
            if two == "/-":
                depth, width = depth + 1, 2
            elif two == "-/":
                depth, width = depth - 1, 2
            else:
                width = 1
        elif two == "/-":
            depth, width = 1, 2
        elif two == "--":
            end = text.find("\n", i)
            width = (n if end < 0 else end) - i
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            width = min(j + 1, n) - i
        else:
            i += 1
            continue
        for k in range(i, i + width):
            if out[k] != "\n":
                out[k] = " "
        i += width
    return "".join(out)


_OTHER_HOLES: Final = re.compile(r"(?<![\w.'])(?:stop|admit)(?![\w'])")


def sorry_holes(text: str, first_line: int = 1, last_line: int | None = None) -> list[Pos]:
    """Where `text` leaves a proof open between two lines (1-based, inclusive): each `sorry`,
    `admit` and `stop` (which skips the rest of its block), outside comments and strings."""
    lines = _code_only(text).split("\n")
    last = len(lines) if last_line is None else min(last_line, len(lines))
    holes: list[Pos] = []
    for number in range(max(1, first_line), last + 1):
        line = lines[number - 1]
        holes += [(number, m.start()) for m in _SORRY.finditer(line)]
        holes += [(number, m.start()) for m in _OTHER_HOLES.finditer(line)]
    return sorted(holes)
