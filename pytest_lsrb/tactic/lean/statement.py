"""A declaration as text: where its statement ends and its proof starts, what the statement says,
and text that shows goals instead of proving them.

Lean's `declaration` command (`src/Lean/Parser/Command.lean`: `theorem declId declSig declVal`)
ends its signature where its value starts: `:=` (`declValSimple`), `|` (equation arms,
`declValEqns`) or `where` (`whereStructInst`). Inside the signature `:=` also appears in named
arguments `(α := α)`, default values `(n : Nat := 3)`, structure instances `{ data := … }`, and
after `let`/`have` in a statement (`let x := 2; x = x`); the first three are inside brackets, the
last is a binding whose `:=` it owns. So the value's `:=` is the first one at bracket depth 0 that
no `let`/`have` is waiting for, read on the code Lean reads (comments, strings, characters and
`«»` names blanked: lexer.py).

A goal display (`case inl`, hypotheses `h : p`, then `⊢ p ∨ q`) is what Lean prints, never
something it reads as a proof: the reader takes it for no answer (answer.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.lexer import code_view, strip_comments

_OPEN: Final = "([{⟨⦃⟦⁅"
_CLOSE: Final = ")]}⟩⦄⟧⁆"
_BINDING_WORDS: Final = frozenset({"let", "have", "letI", "haveI"})
_WORD: Final = re.compile(r"[A-Za-z_][\w'!?]*")
_ESCAPED_NAME: Final = re.compile(r"«[^»\n]*»")
_MODIFIERS: Final = r"(?:(?:private|protected|noncomputable|partial|unsafe|nonrec|public|meta)\s+)*"
# A declaration that states something to prove (a definition's value is data: `def two := 2`).
_STATEMENT_HEAD: Final = re.compile(
    r"^[ \t]*(?:@\[[^\]\n]*\]\s*)*" + _MODIFIERS + r"(?P<kw>theorem|lemma|example|instance)\b", re.M
)
_ANY_HEAD: Final = re.compile(
    r"^[ \t]*(?:@\[[^\]\n]*\]\s*)*" + _MODIFIERS + r"(?P<kw>theorem|lemma|example|instance|def|abbrev)\b",
    re.M,
)
_NAME: Final = re.compile(r"\s*(?P<name>«[^»\n]*»|[^\s:({\[⦃⟨]+)")


def _blanked(text: str) -> str:
    """The code Lean reads, same length: literals, comments and `«»` name parts blanked."""
    view = code_view(text)
    return _ESCAPED_NAME.sub(lambda m: " " * len(m.group(0)), view)


def value_start(text: str, start: int = 0) -> tuple[int, str] | None:
    """Where the declaration whose keyword is at `start` gets its value: (index, `:=`/`|`/`where`),
    or None when the text ends first."""
    view = _blanked(text)
    depth, waiting, i, n = 0, 0, start, len(view)
    line_start = True
    while i < n:
        ch = view[i]
        if ch == "\n":
            line_start = True
            i += 1
            continue
        if ch in " \t":
            i += 1
            continue
        at_line_start, line_start = line_start, False
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and view.startswith(":=", i):
            if waiting:
                waiting -= 1
                i += 2
                continue
            return i, ":="
        elif depth == 0 and ch == "|" and at_line_start and i > start:
            return i, "|"
        elif _WORD.match(view, i) and (i == 0 or not (view[i - 1].isalnum() or view[i - 1] in "_'.")):
            word = _WORD.match(view, i)
            assert word is not None
            if depth == 0 and word.group(0) == "where" and i > start:
                return i, "where"
            if word.group(0) in _BINDING_WORDS:
                waiting += 1 if depth == 0 else 0
            i = word.end()
            continue
        i += 1
    return None


@dataclass(frozen=True)
class Restated:
    """A declaration in an answer or a source: its keyword, name (None: `example`), where it
    starts, its statement (normalised: `statement_key`) and where its value starts."""

    keyword: str
    name: str | None
    start: int
    statement: str
    value: int
    value_kind: str


def declarations(text: str, *, proofs_only: bool = True) -> list[Restated]:
    """The declarations of `text` in order (with `proofs_only`, those that state something to
    prove: theorem, lemma, example, instance), comments not read."""
    code = strip_comments(text)
    out: list[Restated] = []
    for head in (_STATEMENT_HEAD if proofs_only else _ANY_HEAD).finditer(code):
        keyword_at = head.start("kw")
        found = value_start(code, keyword_at)
        if found is None:
            continue
        value, kind = found
        after = code[head.end("kw") : value]
        named = _NAME.match(after)
        name = None
        if head.group("kw") not in ("example", "instance") and named is not None:
            name = named.group("name").split(".{")[0]
        statement = statement_key(head.group("kw"), code[head.end("kw") : value])
        out.append(Restated(head.group("kw"), name, keyword_at, statement, value, kind))
    return out


def statement_key(keyword: str, signature: str) -> str:
    """A statement as Lean reads it, for comparing two: `lemma` is `theorem`, comments and the
    layout go (blanks inside brackets, runs of blanks)."""
    word = "theorem" if keyword == "lemma" else keyword
    text = " ".join(strip_comments(signature).split())
    text = re.sub(r"([(\[{⟨⦃])\s+", r"\1", text)
    text = re.sub(r"\s+([)\]}⟩⦄,])", r"\1", text)
    return f"{word} {text}".strip()


# -- goal displays ------------------------------------------------------------------------------

_HYPOTHESIS: Final = re.compile(r"^(?:[^\s:]+\s+)*[^\s:]+\s+:\s+\S")
_CASE_TAG: Final = re.compile(r"^case\s+[^\s=]+(?:\s+[^\s=]+)*$")


def is_goal_display(text: str) -> bool:
    """Text that is one or more goals as Lean prints them: `case tag` lines, hypotheses
    (`h : p`, `x y : ℕ`), a `⊢ target` line (their continuations indented), nothing else."""
    lines = [line for line in strip_comments(text).split("\n") if line.strip()]
    if not lines or not any(line.lstrip().startswith("⊢") for line in lines):
        return False
    base = min(len(line) - len(line.lstrip()) for line in lines)
    for line in lines:
        stripped = line.strip()
        if len(line) - len(line.lstrip()) > base:
            continue  # a hypothesis or target continued on the next line
        if stripped.startswith("⊢") or _CASE_TAG.match(stripped) or _HYPOTHESIS.match(stripped):
            continue
        return False
    return True
