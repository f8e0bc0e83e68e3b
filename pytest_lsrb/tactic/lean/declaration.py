"""The declaration that holds a sorry: where it starts and ends, and the name `#print axioms` needs.

Read from the source text the way Mathlib-style files are laid out: a declaration's keyword line
starts at column 0 (after its doc comment, attributes and `set_option ... in` lines, which belong
to it), its proof is indented, and the next
command starts again at column 0. Equation arms (`| 0 => ...`), `where`, `deriving`,
`termination_by`/`decreasing_by` and comments at column 0 continue the declaration.

An `example` or an unnamed `instance` has no name to ask `#print axioms` about, so the checked
copy names it (`lsrb_target`): `example` becomes `noncomputable def lsrb_target` (how an
`example` elaborates, without the compiler), `instance : C` becomes `instance lsrb_target : C`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.keywords import LEAN_KEYWORDS
from pytest_lsrb.tactic.lean.lexer import code_view

TARGET_NAME: Final = "lsrb_target"
_MODIFIERS: Final = r"(?:(?:private|protected|noncomputable|partial|unsafe|nonrec|public|meta)\s+)*"
_KEYWORD: Final = re.compile(
    r"^(?P<attrs>(?:@\[[^\]]*\]\s*)*)"
    + _MODIFIERS
    + r"(?P<kw>theorem|lemma|def|instance|example|abbrev|opaque)\b"
    r"(?P<rest>.*)$"
)
_PRIORITY: Final = re.compile(r"^\s*\(priority\s*:=[^)]*\)")
_NAME: Final = re.compile(r"^\s*(?P<name>[^\s:({\[⦃⟨]+)")
# `set_option maxHeartbeats 400000 in` (also open/variable/omit/include ... in) on the line above
# a declaration applies to it alone: it belongs to the declaration's command.
_SCOPED_TO_NEXT: Final = re.compile(r"^(?:set_option|open|variable|omit|include|attribute)\b.*\bin\s*$")
_CONTINUES: Final = re.compile(r"^(?:\||--|/-|where\b|deriving\b|termination_by\b|decreasing_by\b|[)\]}⟩])")


@dataclass(frozen=True)
class Declaration:
    """Lines (1-based, inclusive) of the declaration around a sorry, and its name (None: unnamed)."""

    first_line: int  # its doc comment / attributes included
    keyword_line: int
    last_line: int
    keyword: str
    name: str | None


def find_declaration(text: str, line: int) -> Declaration | None:
    """The declaration holding `line`, or None when no declaration keyword precedes it."""
    lines = text.split("\n")
    keyword_line = None
    for i in range(min(line, len(lines)), 0, -1):
        m = _KEYWORD.match(lines[i - 1])
        if m is not None:
            keyword_line, match = i, m
            break
    if keyword_line is None:
        return None
    keyword = match.group("kw")
    rest = match.group("rest")
    name: str | None = None
    if keyword != "example":
        if keyword == "instance":
            rest = _PRIORITY.sub("", rest)
        named = _NAME.match(rest)
        if named is not None and not (keyword == "instance" and rest.lstrip().startswith(("where", ":="))):
            name = named.group("name").rstrip(".")  # `foo.{u}`: universe parameters are not the name
    first = keyword_line
    while first > 1:
        above = lines[first - 2].strip()
        if _SCOPED_TO_NEXT.match(lines[first - 2]):  # `set_option ... in`: part of this command
            first -= 1
            continue
        if above.startswith("@[") or above.endswith("-/"):
            first -= 1
            # walk to the start of a doc comment block
            while first > 1 and "/-" not in lines[first - 1] and above.endswith("-/"):
                first -= 1
            continue
        break
    last = len(lines)
    for j in range(line + 1, len(lines) + 1):
        current = lines[j - 1]
        if current.strip() and not current[0].isspace() and not _CONTINUES.match(current):
            last = j - 1
            break
    while last > line and not lines[last - 1].strip():
        last -= 1
    return Declaration(first, keyword_line, last, keyword, name)


def declaration_key(text: str, decl: Declaration) -> str:
    """What names a declaration across edits of its file: its name, or for an unnamed one
    (`example`, `instance : C`) its keyword line as written."""
    if decl.name is not None:
        return decl.name
    return " ".join(text.split("\n")[decl.keyword_line - 1].split())


def declarations(text: str) -> list[tuple[str, Declaration]]:
    """Every declaration of `text` with its key, in file order."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if _KEYWORD.match(line):
            decl = find_declaration(text, number)
            if decl is not None:
                out.append((declaration_key(text, decl), decl))
    return out


def find_by_key(text: str, key: str, ordinal: int = 0) -> Declaration | None:
    """The `ordinal`-th declaration (0-based) of `text` whose key is `key`, or None."""
    same = [decl for k, decl in declarations(text) if k == key]
    return same[ordinal] if ordinal < len(same) else None


def named_source(text: str, decl: Declaration) -> tuple[str, str] | None:
    """(source with the target named, the name to ask about); None when it cannot be named."""
    if decl.name is not None:
        return text, decl.name
    lines = text.split("\n")
    head = lines[decl.keyword_line - 1]
    if decl.keyword == "example":
        renamed = re.sub(r"\bexample\b", f"noncomputable def {TARGET_NAME}", head, count=1)
    elif decl.keyword == "instance":
        m = re.search(r"\binstance\b(\s*\(priority\s*:=[^)]*\))?", head)
        if m is None:
            return None
        renamed = head[: m.end()] + f" {TARGET_NAME}" + head[m.end() :]
    else:
        return None
    lines[decl.keyword_line - 1] = renamed
    return "\n".join(lines), TARGET_NAME


def insert_probe(text: str, after_line: int, probe: str) -> tuple[str, int]:
    """`text` with the line `probe` inserted after `after_line`; returns it and the probe's line."""
    lines = text.split("\n")
    lines[after_line:after_line] = ["", probe, ""]
    return "\n".join(lines), after_line + 2


# A Lean identifier as a constant's name can be written: dotted components, each ASCII-led or
# guillemet-quoted (`«a b»`); `ℕ`-style notation and numeric projections (`h.1`) are not names.
_NAME_REF: Final = re.compile(
    r"(?<![\w.'«»!?])(?:[A-Za-z_][\w'!?]*|«[^»\n]*»)(?:\.(?:[A-Za-z_][\w'!?]*|«[^»\n]*»))*"
)


def referenced_names(*texts: str, exclude: frozenset[str] = frozenset(), limit: int = 64) -> tuple[str, ...]:
    """Names `texts` may refer to declarations by, in order of first use, the first text's first
    (comments and strings skipped), at most `limit`: what `#print axioms` is asked about to learn
    what a target owes (the answer first, so a long proof's other names cannot crowd it out)."""
    bare = " ".join(code_view(text) for text in texts)
    out: dict[str, None] = {}
    for m in _NAME_REF.finditer(bare):
        name = m.group(0)
        if name in LEAN_KEYWORDS or name in exclude or name.split(".")[-1] in exclude:
            continue
        out.setdefault(name)
        if len(out) >= limit:
            break
    return tuple(out)
