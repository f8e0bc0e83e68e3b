"""Lean 4's lexical grammar, as far as reading an answer needs it: what is a comment, what is a
string or character literal, and what is code.

Lean has no separate lexer: its parser reads tokens with the functions of
`src/Lean/Parser/Basic.lean` (moved to `src/Lean/Parser/LeanToken.lean` in 2025; the rules below
are the same in both, read at leanprover/lean4 commit 00c1b82):

- `whitespace`: between tokens, `--` starts a line comment up to the newline, and `/-` a block
  comment; `/--` and `/-!` open doc comments, which `docComment` reads with the same
  `finishCommentBlock` (its third character is consumed with the opener in both cases).
- `finishCommentBlock (nesting)`: block comments nest: every `/-` inside opens one more level,
  every `-/` closes one; quotes mean nothing inside a comment. An unterminated comment runs to
  the end of the input (Lean: "unterminated comment").
- `strLitFnAux` + `quotedCharCoreFn`: a string runs from `"` to the next unescaped `"` (it may
  span lines); `\\` escapes one character (`\\x..`, `\\u....` and the string gap `\\` newline
  are longer, but never contain a quote).
- `interpolatedStrFn` (`StrInterpolation.lean`): in `s!"..."`, `m!"..."`, `f!"..."`,
  `throwError "..."` and every syntax taking `interpolatedStr`, `{ ... }` is a term, read as code.
  Which syntax is in force is not lexical, so braces inside every string are read as code: a
  `sorry` in `"{sorry}"` is never hidden from the guard.
- `rawStrLitFnAux` (`isRawStrLitStart`, tried where a token starts): `r"..."`, `r#"..."#` - no
  escapes, closed by `"` and as many `#` as opened it.
- `tokenFnAux` (`tokenFnCore` in LeanToken.lean): `'` starts a character literal only where a
  token starts and the next character is not `'` (`f '' s` is Mathlib's image); inside an
  identifier `'` is `isIdRest` (`h'`, `x₁'`), so `h'` is a name and `'a'` a character.
  `charLitFnAux`: one (possibly escaped) character, then `'`; anything else is not a literal
  here (Lean: "missing end of character literal").
- `identFnAux`: `«` opens an escaped name part that runs to `»` (`isIdEndEscape`); nothing in it
  is a comment or a string (`«a -- b»` is one name).

Where Lean reports an error and stops (an unterminated string or name escape), the scanner reads
the opening character as code and goes on, so prose around code (`it's`, a lone `"`) never
swallows the text after it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final, Literal

Kind = Literal["code", "comment", "string", "char"]


@dataclass(frozen=True)
class Span:
    kind: Kind
    start: int
    end: int  # exclusive


_ESCAPE_OPEN: Final = "«"
_ESCAPE_CLOSE: Final = "»"


def _is_id_rest(ch: str) -> bool:
    """Lean's `isIdRest`: letters (Greek and letter-like included), digits, sub/superscripts,
    `_`, `'`, `!`, `?`. Python's `isalnum` covers the letter and digit classes Lean admits."""
    return ch.isalnum() or ch in "_'!?"


def _token_start(text: str, i: int) -> bool:
    """Whether a token can start at `i` (not inside an identifier or a numeral)."""
    return i == 0 or not _is_id_rest(text[i - 1])


def _block_comment_end(text: str, i: int) -> int:
    """End of the block comment whose `/-` is at `i` (Lean's `whitespace` + `finishCommentBlock`)."""
    n, depth = len(text), 1
    j = i + 3  # `/-` and the character after it (`-`/`!` of a doc comment, or skipped)
    if i + 2 >= n:
        return n
    while j < n:
        two = text[j : j + 2]
        if two == "-/":
            depth -= 1
            j += 2
            if depth == 0:
                return j
        elif two == "/-":
            depth += 1
            j += 2
        else:
            j += 1
    return n


def _char_literal_end(text: str, i: int) -> int | None:
    """End of the character literal at `i` (`'a'`, `'\\n'`, `'\\x41'`), or None."""
    n = len(text)
    if i + 1 >= n or text[i + 1] == "'" or text[i + 1] == "\n":
        return None
    j = i + 2
    if text[i + 1] == "\\":
        if i + 2 >= n:
            return None
        esc = text[i + 2]
        j = i + 3 + (2 if esc == "x" else 4 if esc == "u" else 0)
    return j + 1 if j < n and text[j] == "'" else None


def _raw_string_end(text: str, i: int) -> int | None:
    """End of the raw string literal whose `r` is at `i`, or None when none starts there."""
    j = i + 1
    while j < len(text) and text[j] == "#":
        j += 1
    if j >= len(text) or text[j] != '"':
        return None
    close = '"' + "#" * (j - i - 1)
    end = text.find(close, j + 1)
    return None if end < 0 else end + len(close)


def _string_spans(text: str, i: int) -> tuple[list[Span], int] | None:
    """The spans of the string literal opening at `i` (its text as `string`, every `{...}`
    inside as code) and its end, or None when it is never closed."""
    spans: list[Span] = []
    n, start, j = len(text), i, i + 1
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == '"':
            spans.append(Span("string", start, j + 1))
            return spans, j + 1
        elif ch == "{":
            spans.append(Span("string", start, j + 1))
            inner, after = _scan(text, j + 1, until_brace=True)
            if after >= n:
                return None
            spans += inner
            start, j = after, after + 1  # the `}` goes back to the string
        else:
            j += 1
    return None


def _scan(text: str, i: int, *, until_brace: bool = False) -> tuple[list[Span], int]:
    """Spans from `i` to the end (or to the `}` closing an interpolation, whose index is returned)."""
    spans: list[Span] = []
    n, code_start, depth = len(text), i, 0

    def close_code(at: int) -> None:
        if at > code_start:
            spans.append(Span("code", code_start, at))

    while i < n:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        end: int | None = None
        kind: Kind = "code"
        if ch == "-" and nxt == "-":
            newline = text.find("\n", i)
            end, kind = (n if newline < 0 else newline), "comment"
        elif ch == "/" and nxt == "-":
            end, kind = _block_comment_end(text, i), "comment"
        elif ch == '"':
            found = _string_spans(text, i)
            if found is not None:
                close_code(i)
                inner, i = found
                spans += inner
                code_start = i
                continue
        elif ch == "r" and nxt in '#"' and _token_start(text, i):
            end, kind = _raw_string_end(text, i), "string"
        elif ch == "'" and _token_start(text, i):
            end, kind = _char_literal_end(text, i), "char"
        elif ch == _ESCAPE_OPEN:
            close = text.find(_ESCAPE_CLOSE, i + 1)
            i = i + 1 if close < 0 else close + 1  # an escaped name part is code
            continue
        elif until_brace and ch == "{":
            depth += 1
        elif until_brace and ch == "}":
            if depth == 0:
                close_code(i)
                return spans, i
            depth -= 1
        if end is None or kind == "code":
            i += 1
            continue
        close_code(i)
        spans.append(Span(kind, i, end))
        i = code_start = end
    close_code(n)
    return spans, n


@functools.lru_cache(maxsize=4096)
def spans(text: str) -> tuple[Span, ...]:
    """`text` cut into code, comments, strings and characters, in order, covering all of it."""
    return tuple(_scan(text, 0)[0])


def _blanked(text: str, kinds: frozenset[str], fill: str) -> str:
    out: list[str] = []
    for span in spans(text):
        piece = text[span.start : span.end]
        if span.kind in kinds:
            piece = "".join("\n" if c == "\n" else fill for c in piece)
        out.append(piece)
    return "".join(out)


_LITERALS: Final = frozenset({"comment", "string", "char"})


def code_view(text: str) -> str:
    """`text` with every comment and every string/character literal blanked to spaces (newlines
    kept): same length and positions, so what is found in it is code Lean reads."""
    return _blanked(text, _LITERALS, " ")


def comments_blanked(text: str) -> str:
    """`text` with every comment blanked to spaces (newlines kept): same length and positions."""
    return _blanked(text, frozenset({"comment"}), " ")


def strip_comments(text: str, *, closed_only: bool = False) -> str:
    """`text` without its comments; a comment's newlines stay, so lines keep their numbers.
    `closed_only`: a block comment never closed stays as text (prose around code with a stray
    `/-`, where Lean would read the rest of the input as a comment)."""
    if "-" not in text:  # no comment can start (the common case)
        return text
    out: list[str] = []
    for span in spans(text):
        piece = text[span.start : span.end]
        gone = span.kind == "comment" and not (
            closed_only and piece.startswith("/-") and not piece.endswith("-/")
        )
        out.append("\n" * piece.count("\n") if gone else piece)
    return "".join(out)


def has_comment(text: str) -> bool:
    return any(span.kind == "comment" for span in spans(text))


def without_comments(text: str, *, closed_only: bool = False) -> str:
    """`text` without its comments and without the lines that held nothing but a comment (a
    blank line stays blank, and the blanks around a dropped comment line make one): what Lean
    reads, line by line, with no comment line left to be taken for code or prose
    (`/- informal proof -/`, `-- we get:`), nor a blank gap that a comment made."""
    if "-" not in text:
        return text
    kept: list[str] = []
    dropped = False  # a comment line went since the last kept line
    stripped = strip_comments(text, closed_only=closed_only)
    for original, code in zip(text.split("\n"), stripped.split("\n"), strict=True):
        if code.strip():
            kept.append(code.rstrip())
        elif original.strip():
            dropped = True
            continue
        elif not (dropped and kept and not kept[-1].strip()):
            kept.append(code)  # a blank line; two blanks around a dropped comment make one
        dropped = False
    return "\n".join(kept)
