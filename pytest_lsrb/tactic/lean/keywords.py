"""Lean 4 keywords that cannot stand where a name is written (a binder, `#print axioms NAME`).

Collected from the tokens Lean's parsers declare as keywords (`src/Lean/Parser/Term.lean`,
`Command.lean`, `Do.lean`, `Tactic.lean`; Lean v4.22): an identifier equal to one of them is
read as the keyword, so Lean's pretty printer writes such a binder quoted (`«this»`), and a goal
restated with the bare word does not parse. `this` is one since Lean 4's `have` binds it.
"""

from __future__ import annotations

from typing import Final

LEAN_KEYWORDS: Final = frozenset(
    [
        *("by", "fun", "λ", "have", "show", "from", "at", "with", "then", "else", "if", "let"),
        *("do", "match", "in", "end", "theorem", "lemma", "def", "where", "calc", "this"),
        *("suffices", "obtain", "Type", "Sort", "Prop", "forall", "exists", "deriving"),
        *("instance", "example", "structure", "class", "open", "namespace", "section"),
        *("variable", "universe", "mut", "return", "for", "unless", "private", "protected"),
        *("noncomputable", "termination_by", "decreasing_by", "using", "only", "says"),
        *("set_option", "local", "scoped", "attribute", "macro", "syntax", "import", "module"),
        *("public", "meta", "partial", "unsafe", "nomatch", "nofun", "abbrev", "axiom"),
        *("inductive", "opaque", "try", "catch", "finally", "break", "continue", "extends"),
        *("mutual", "nonrec", "omit", "include", "notation", "infix", "infixl", "infixr"),
        *("prefix", "postfix", "elab", "macro_rules", "elab_rules", "initialize", "export"),
    ]
)


def quote_name(name: str) -> str:
    """`name` as Lean must write it: `«this»` for a keyword, unchanged otherwise."""
    return f"«{name}»" if name in LEAN_KEYWORDS else name
