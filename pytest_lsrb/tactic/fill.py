"""What replaced the target sorry, in an answer that restates the source it was shown.

SorryDB's `llm` strategy (sorrydb/strategies/llm_strategy.py at 71959ed) shows the file up to the
sorry and asks for "the ENTIRE code block ... with ONLY the sorry replaced"; its
`extract_proof_from_diff` (sorrydb/utils/sorry_extraction.py) diffs the answer's last ```lean
block against that text, and the proof is what stands between the last text both share before
the sorry and the first they share after it. Chat models answer so: the declaration, or the
whole file, restated with the sorry filled in - a sorry nested under a bullet, an `induction` arm
or a `calc` step included.

Here the same reading, line by line (our code; the semantics are SorryDB's):

1. The source's lines before the sorry are aligned with the answer's (comments gone, blanks
   collapsed: Lean reads neither). The alignment counts when it holds two lines or more of the
   target's declaration, or when the answer holds the sorry's own line up to the sorry (`theorem
   t ... := by sorry` restated as `... := by` and a proof).
2. The fill starts after that: on the answer's line that repeats the sorry's line up to the sorry,
   after that much of it; else on the first line after the last line both share.
3. It ends where the sorry's line went on after the sorry (` , h⟩` of `⟨sorry, h⟩`), at bracket
   depth 0; or, the sorry ending its line (the source shown ends there), where the answer leaves
   the sorry's block: a line indented less than the fill's first (SorryDB takes everything to the
   end of the block instead - the model's copy of what follows the sorry in the file, or a lemma
   it adds after, which spliced in front of the file's own lines makes Lean's error; the reading
   here is the replacement).

A fill in term position (`map_eq := sorry`) is a term; the splice puts a tactic in term position
as `(by tactic)`, so `by tacs` reads as `tacs` and another term `t` as `exact t`.

`changed_statement` is the other half: an answer that restates the target declaration with
another statement (a hypothesis changed, added or dropped, another conclusion) proves something
else, and SorryDB's diff would splice its proof under the original statement regardless. It is
refused as the model's failure, in one sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Final

from pytest_lsrb.tactic.lean.declaration import find_declaration
from pytest_lsrb.tactic.lean.keywords import COMMAND_KEYWORDS, IN_TACTICS
from pytest_lsrb.tactic.lean.lexer import code_view, strip_comments
from pytest_lsrb.tactic.lean.splice import SorryKind, infer_sorry_kind
from pytest_lsrb.tactic.lean.statement import declarations

Pos = tuple[int, int]

_COMMAND_START: Final = re.compile(
    r"^(?:@\[|#[a-z]|(?:" + "|".join(sorted(COMMAND_KEYWORDS - IN_TACTICS, key=len, reverse=True)) + r")\b)"
)
# A sorry's line up to the sorry that opens a tactic block: the fill is that block.
_BLOCK_OPENER: Final = re.compile(r"(?:\bby|·|^\.|\s\.|=>|;|<;>|\bthen|\belse|\bdo)$")
# A line that ends opening a block laid out below it.
_OPENS_BLOCK: Final = re.compile(r"(?:\bby|=>|:=|\bfrom|\bthen|\belse|\bdo|<\||\$)$")
_OPEN: Final = "([{⟨⦃⟦"
_CLOSE: Final = ")]}⟩⦄⟧"
_SUBSTANTIAL_PREFIX: Final = 8  # non-blank characters of a sorry's line that identify it alone
# How much the alignment reads (a line diff is quadratic on repetitive text): the source's last
# lines before the sorry, the answer's first lines, the changed text's tail.
_ALIGNED_SOURCE_LINES: Final = 200
_ALIGNED_ANSWER_LINES: Final = 4000
_DIFFED_CHARS: Final = 2000
_SHOWN_LIMIT: Final = 100


@dataclass(frozen=True)
class Site:
    """Where the target sorry stands in the source the model was shown: `text` (the context),
    `start`/`end` of the sorry in it (lines 1-based, columns 0-based, end exclusive)."""

    text: str
    start: Pos
    end: Pos

    @classmethod
    def at_end(cls, context: str, lines: int, start_column: int, end_column: int) -> Site | None:
        """The site of a sorry spanning `lines` lines that ends the context's last line (or
        stands on it, the line going on): None when no sorry stands there."""
        rows = context.split("\n")
        first = len(rows) - lines + 1
        if lines < 1 or first < 1:
            return None
        end = (len(rows), end_column)
        start = (first, start_column)
        if len(rows[first - 1]) < start_column or len(rows[-1]) < end_column:
            return None
        if lines == 1 and rows[-1][start_column:end_column] != "sorry":
            return None
        return cls(context, start, end)


@dataclass(frozen=True)
class Fill:
    """The replacement: its lines, the first at column 0 and the others indented relative to it,
    and the position it was in."""

    lines: tuple[str, ...]
    kind: SorryKind


def _key(line: str) -> str:
    return " ".join(line.split())


def _depth(text: str, depth: int = 0) -> int:
    """The bracket depth after `text`'s code, starting at `depth`."""
    code = code_view(text) if any(c in text for c in "\"'-«") else text  # (no literal: as is)
    for ch in code:
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
    return depth


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _after_prefix(line: str, prefix: str) -> int | None:
    """The column just past `prefix` in `line`, blanks aside, or None when `line` does not start
    with it."""
    wanted = prefix.replace(" ", "")
    if not wanted:
        return _indent(line)
    seen = 0
    for column, ch in enumerate(line):
        if ch.isspace():
            continue
        if ch != wanted[seen]:
            return None
        seen += 1
        if seen == len(wanted):
            return column + 1
    return None


def _aligned(before: list[str], answer: list[str], first_line: int) -> tuple[int, int] | None:
    """The last line the answer shares with `before` (the source's lines before the sorry): (its
    index in `before`, its index in the answer); None when they share too little of the target's
    declaration (its keyword on `first_line`, 0-based; -1: none found)."""
    left = [(i, k) for i, k in enumerate(before) if k]
    right = [(j, k) for j, k in enumerate(answer) if k]
    matcher = SequenceMatcher(None, [k for _, k in left], [k for _, k in right], autojunk=False)
    pairs = [
        (left[b.a + t][0], right[b.b + t][0]) for b in matcher.get_matching_blocks() for t in range(b.size)
    ]
    inside = [i for i, _ in pairs if i >= max(first_line, 0)]
    if len(inside) < 2 and first_line not in inside:  # (the declaration's own keyword line counts)
        return None
    return max(pairs)


def _prefix_line(lines: list[str], prefix: str, after: int | None) -> Pos | None:
    """Where the answer's copy of the sorry's line up to the sorry ends: on the first line after
    the shared ones that starts with it, or, with no shared lines, on the last line anywhere that
    does when the prefix alone says which line it is (`theorem t ... := by`)."""
    substantial = len(prefix.replace(" ", "")) >= _SUBSTANTIAL_PREFIX
    found: Pos | None = None
    for j in range(after if after is not None else 0, len(lines)):
        if not lines[j].strip():
            continue
        column = _after_prefix(lines[j], prefix)
        if after is not None:
            return (j, column) if column is not None else None
        if column is not None and substantial:
            found = (j, column)
    return found


def _diffed(window: str, lines: list[str], first: int) -> Pos | None:
    """Where the answer's text from line `first` stops sharing `window` (the source from the last
    shared line to the sorry, a line the model changed in it): the end of the last stretch of
    characters both hold, as SorryDB's diff finds it."""
    window = window[-_DIFFED_CHARS:]
    wanted, last = window.count("\n") + 3, first
    while last < len(lines) and wanted:  # as many lines of code as the window has, and some
        wanted -= bool(lines[last].strip())
        last += 1
    text = "\n".join(lines[first:last])[: 2 * _DIFFED_CHARS]
    blocks = [b for b in SequenceMatcher(None, window, text, autojunk=False).get_matching_blocks() if b.size]
    if not blocks:
        return None
    at = blocks[-1].b + blocks[-1].size
    row = text.count("\n", 0, at)
    return (first + row, at - (text.rfind("\n", 0, at) + 1))


def find_fill(code: str, site: Site) -> Fill | None:
    """What `code` (an answer's code) puts where `site`'s sorry stood, or None when it does not
    restate the source around the sorry."""
    source = strip_comments(site.text).split("\n")
    lines = strip_comments(code).split("\n")
    (sl, sc), (el, ec) = site.start, site.end
    if not 1 <= sl <= el <= len(source):
        return None
    prefix, suffix = _key(source[sl - 1][:sc]), _key(source[el - 1][ec:])
    decl = find_declaration(site.text, sl)
    first_line = decl.keyword_line - 1 if decl is not None else -1
    # bounded work: the source's last lines before the sorry against the answer's first lines
    low = max(sl - 1 - _ALIGNED_SOURCE_LINES, 0)
    before = [_key(x) if i >= low else "" for i, x in enumerate(source[: sl - 1])]
    shared = _aligned(before, [_key(x) for x in lines[:_ALIGNED_ANSWER_LINES]], first_line)
    after = shared[1] + 1 if shared is not None and shared[1] + 1 < len(lines) else None
    gap = [x for x in source[shared[0] + 1 : sl - 1] if x.strip()] if shared is not None else []
    start: Pos | None = None
    if not gap and prefix:
        start = _prefix_line(lines, prefix, after)
    if start is None and after is not None and (gap or prefix):
        # a line between the shared ones and the sorry, or the sorry's own, was changed
        start = _diffed("\n".join([*gap, source[sl - 1][:sc]]), lines, after)
    if start is None and after is not None:
        start = (after, 0)
    if start is None:
        return None
    j, column = start
    own_line = not lines[j][:column].strip() or not lines[j][column:].strip()
    if not lines[j][column:].strip():
        start = (j + 1, 0)  # the line ends where the sorry's did (`... := by`): the block below
    block = own_line or _BLOCK_OPENER.search(_key(lines[j][:column])) is not None
    text = _fill_text(lines, start, suffix, own_line=own_line, block=block)
    if text is None:
        return None
    kind = infer_sorry_kind(site.text, site.start)
    return Fill(tuple(_as_tactic(text) if kind == "term" else text), kind)


def _fill_text(lines: list[str], start: Pos, suffix: str, *, own_line: bool, block: bool) -> list[str] | None:
    """The fill's lines from `start`: the first from its column, each later one as written,
    relative to the first's column.

    Which later lines belong follows Lean's layout: a fill that is a block of tactics - on lines
    of its own (`own_line`: the sorry stood alone on its line) or after a block opener on its
    line (`block`: `by`, `·`, `=>`...) - holds the lines at its column or deeper (`checkColGe`);
    a term on the sorry's line (`:= sorry`) that ends opening a block (`by`, `=>`, `fun x =>`)
    holds that block, laid out from the next line's column; another term holds the lines deeper
    than its own line (its continuation)."""
    j, column = start
    if own_line:
        j = next((k for k in range(j, len(lines)) if lines[k].strip()), len(lines))
        if j >= len(lines):
            return None
        column = _indent(lines[j])
    if suffix and not (own_line or block):
        return _up_to_suffix(lines, j, column, suffix)
    first = lines[j][column:]
    ref = column + _indent(first)
    if own_line or block:
        belongs_from = ref  # the block's column
    elif _OPENS_BLOCK.search(code_view(first).rstrip()):
        below = next((line for line in lines[j + 1 :] if line.strip()), "")
        belongs_from = _indent(below) if below else ref
    else:
        belongs_from = _indent(lines[j]) + 1
    rel = min(ref, belongs_from)  # later lines keep their indentation from here
    body = [first.strip()]
    depth = _depth(first)
    for line in lines[j + 1 :]:
        if not line.strip():
            body.append("")
            continue
        indent = _indent(line)
        ends = indent < belongs_from or (indent <= ref and _COMMAND_START.match(line.strip()) is not None)
        if ends and not depth:
            break
        body.append(line[rel:] if indent >= rel else line.strip())
        depth = _depth(line, depth)
    while body and not body[-1].strip():
        body.pop()
    if suffix and body and _key(body[-1]).endswith(suffix):
        # a block ends where the sorry's line went on (`by sorry;` filled with a block and `;`)
        wanted = suffix.replace(" ", "")
        last = body[-1].rstrip()
        cut = len(last)
        while wanted and cut > 0:
            cut -= 1
            if not last[cut].isspace():
                wanted = wanted[:-1]
        body[-1] = last[:cut]
        if not body[-1].strip():
            body.pop()
    return [line.rstrip() for line in body] or None


def _up_to_suffix(lines: list[str], j: int, column: int, suffix: str) -> list[str] | None:
    """The fill from (j, column) to where the rest of the sorry's line (`suffix`) follows at
    bracket depth 0."""
    text = "\n".join([lines[j][column:], *lines[j + 1 :]])
    wanted = suffix.replace(" ", "")
    view = code_view(text)
    depth = 0
    for i, ch in enumerate(view):
        if depth == 0 and i > 0 and ch == wanted[0] and _starts_with(text, i, wanted):
            filled = text[:i].strip()
            if filled:
                rows = filled.split("\n")
                ref = column + _indent(lines[j][column:])
                return [rows[0].strip(), *(r[ref:] if _indent(r) >= ref else r.strip() for r in rows[1:])]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            if depth == 0:
                return None  # the sorry's own bracket closed before its line's rest came
            depth -= 1
    return None


def _starts_with(text: str, at: int, wanted: str) -> bool:
    seen = 0
    for ch in text[at:]:
        if ch.isspace():
            continue
        if ch != wanted[seen]:
            return False
        seen += 1
        if seen == len(wanted):
            return True
    return False


def _as_tactic(lines: list[str]) -> list[str]:
    """A term-position fill as the tactic the splice wraps in `(by ...)`: `by tacs` is `tacs`,
    another term `t` is `exact t`."""
    first = lines[0]
    if first == "by" or first.startswith(("by ", "by\t")):
        rest = first[2:].strip()
        later = [line for line in lines[1:]]
        if not rest:
            base = min((_indent(x) for x in later if x.strip()), default=0)
            return [x[base:] for x in later] or [""]
        shift = len(first) - len(rest)
        return [rest, *(x[shift:] if _indent(x) >= shift else x.strip() for x in later)]
    return [f"exact {first}", *lines[1:]]


def changed_statement(code: str, site: Site) -> str | None:
    """One sentence when `code` restates the declaration holding `site`'s sorry with another
    statement; None when it restates it faithfully or not at all."""
    decl = find_declaration(site.text, site.start[0])
    if decl is None:
        return None
    stripped = strip_comments(site.text)  # (declarations' offsets are in it; lines are kept)
    offset = sum(len(line) + 1 for line in stripped.split("\n")[: decl.keyword_line - 1])
    line_end = stripped.find("\n", offset) % (len(stripped) + 1)  # (-1: the text's end)
    targets = [d for d in declarations(site.text, proofs_only=False) if offset <= d.start <= line_end]
    if not targets:
        return None
    target = targets[0]
    same = [
        d
        for d in declarations(code, proofs_only=False)
        if (
            d.name == target.name
            if target.name is not None
            else d.keyword == target.keyword and d.name is None
        )
    ]
    if not same or same[-1].statement == target.statement:
        return None
    return (
        f"the answer changes the statement it was to prove: `{_shown(same[-1].statement)}` "
        f"instead of `{_shown(target.statement)}`."
    )


def _shown(statement: str) -> str:
    return statement if len(statement) <= _SHOWN_LIMIT else statement[: _SHOWN_LIMIT - 1] + "…"
