"""Tabs in an answer: Lean refuses them, and an answer that holds one is refused in Lean's words.

Lean's whitespace parser (`whitespace` in src/Lean/Parser/Basic.lean) stops at a tab between
tokens with `mkUnexpectedError "tabs are not allowed; please configure your editor to expand
them"` (and at a lone carriage return, "isolated carriage returns are not allowed"); a tab inside a
comment or a string literal is not whitespace and stands. SorryDB splices the model's text as it
is, so a tab-indented proof is Lean's parse error there. The answer reader lines an answer up
by its indentation and would lose a tab it stripped (`\tintro h\n\texact h` read as `intro h` /
`exact h`, which Lean would then accept): an answer whose code lines the model indented with tabs
(`tab_indented`), or whose code holds a tab anywhere (`tab_in_code`), is `lean_error`/`parse` with
Lean's message, the model's, as Lean judges the text the model wrote.
"""

from __future__ import annotations

from typing import Final

from pytest_lsrb.tactic.lean.lexer import code_view

TAB_MESSAGE: Final = "tabs are not allowed; please configure your editor to expand them"


def tab_in_code(text: str) -> bool:
    """Whether a tab stands between tokens of `text` (not in a comment or a string literal)."""
    return "\t" in code_view(text)


def tab_indented(raw: str, answer: str) -> bool:
    """Whether the model wrote a line of `answer` (read out of its output `raw`) indented with a
    tab, or `answer`'s code holds a tab: what Lean would refuse in the text as written."""
    if tab_in_code(answer):
        return True
    if "\t" not in raw:
        return False
    wanted = {line.strip() for line in code_view(answer).split("\n") if line.strip()}
    for line in raw.split("\n"):
        indent = line[: len(line) - len(line.lstrip())]
        if "\t" in indent and code_view(line).strip() in wanted:
            return True
    return False
