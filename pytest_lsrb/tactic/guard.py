"""The token guard: what an answer may not contain, decided from its text before Lean runs.

An answer is a tactic (or, with `--lsrb-answer proof`, a proof body), never options or commands:

- `sorry`, `admit`, `stop` and `sorryAx` in every spelling Lean resolves to the same constant
  (`@sorryAx`, `_root_.sorryAx`, `«sorryAx»`, `@_root_.«sorryAx»`) are `forbidden_token/sorry`;
- `set_option NAME VALUE in tac` is a tactic and is allowed, except an option on the one deny
  list (lean/options.py: `debug.*` such as `debug.skipKernelTC`, `trace.*`, and a heartbeat or
  recursion limit past its one ceiling, `maxHeartbeats 0` included), which is
  `forbidden_token/option`; a `set_option`
  that is not a `... in` tactic is a command;
- commands (`theorem`, `#eval`, `notation`, `namespace`, `end`, `run_tac`, ...) are
  `forbidden_token/command` (lean/keywords.py's one list);

Everything is decided on the answer's code (lean/lexer.py): a `sorry` or a keyword inside a
comment or a string literal is not code (`omega /- sorry -/` passes), a `sorry` inside an
interpolated string's `{...}` is.
- search tactics (`exact?`, `apply?`, `rw?`, `hint`, `library_search`) are allowed by default,
  as SorryDB's verifier allows them (its own ProveAllStrategy sends `exact?`): one that finds a
  proof closes, `apply?`'s admitted goal is `sorryAx` and fails the axiom check.
  `--lsrb-forbid-search-tactics` makes them `forbidden_token/search` for a stricter benchmark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.keywords import command_token
from pytest_lsrb.tactic.lean.lexer import code_view
from pytest_lsrb.tactic.lean.options import denied_option

FORBIDDEN_NAMES: Final = frozenset({"sorry", "admit", "sorryAx"})
# `stop tacs` is `repeat sorry`: refused too, though the record's contains_sorry keeps to the card's three.
_STOP_NAMES: Final = FORBIDDEN_NAMES | {"stop"}
# A name as Lean reads it: dotted parts, each plain or «quoted», optionally after `@`.
_NAME: Final = re.compile(r"@?(?:«[^»\n]*»|[A-Za-z_][\w'!?]*)(?:\.(?:«[^»\n]*»|[A-Za-z_][\w'!?]*))*")
_SET_OPTION: Final = re.compile(r"(?<![\w.'«])set_option(?![\w'])")
# `set_option NAME VALUE in` (Lean's `Parser.Tactic.set_option`; VALUE a number, `true`/`false`
# or a string literal, blanked in the code view).
_OPTION_IN: Final = re.compile(r"set_option\s+((?:«[^»\n]*»|[^\s«]+))\s+(\"[^\"\n]*\"|\S+)\s+in(?![\w'])")
_SEARCH_TACTIC: Final = re.compile(r"(?<![\w.'])(?:exact\?|apply\?|rw\?|hint|library_search)(?![\w'?!])")


def _resolved(name: str) -> str:
    """`@_root_.«sorryAx»` -> `sorryAx`: the constant a spelling names."""
    parts = [p[1:-1] if p.startswith("«") and p.endswith("»") else p for p in name.lstrip("@").split(".")]
    while parts and parts[0] == "_root_":
        parts = parts[1:]
    return ".".join(parts)


def forbidden_name(text: str, names: frozenset[str] = FORBIDDEN_NAMES) -> str | None:
    """The first name in `text` that is sorry/admit/stop/sorryAx in any spelling, or None.

    A name is read whole (`foo.sorry_lemma`, `h.admit'` are other names), so only a spelling
    Lean resolves to the forbidden constant or keyword counts. Comments and string literals are
    not code: a name in them is not read."""
    text = code_view(text)
    for match in _NAME.finditer(text):
        start = match.start()
        if start and (text[start - 1].isalnum() or text[start - 1] in "_'.?!"):
            continue  # inside a longer token (`x.sorry` handled as a whole name)
        if _resolved(match.group(0)) in names:
            return match.group(0)
    return None


def contains_forbidden(text: str) -> bool:
    return forbidden_name(text) is not None


@dataclass(frozen=True)
class Refusal:
    subkind: str
    detail: str


def refuse(answer: str, *, forbid_search: bool = False, proof: bool = False) -> Refusal | None:
    """Why `answer` is `forbidden_token` before Lean runs, or None when Lean should judge it.

    `proof`: a whole proof body (`--lsrb-answer proof`) may span lines; a tactic answer's later
    lines must be its own nested block (indented deeper than its first line)."""
    name = forbidden_name(answer, _STOP_NAMES)
    if name is not None:
        return Refusal("sorry", f"{name} in the answer (sorry/admit/stop/sorryAx in any spelling)")
    code = code_view(answer)
    option = _option_refusal(answer, code)
    if option is not None:
        return option
    search = _SEARCH_TACTIC.search(code)
    if search is not None and forbid_search:
        return Refusal(
            "search",
            f"{search.group(0)} searches for a proof instead of giving one (--lsrb-forbid-search-tactics)",
        )
    token = command_token(answer)
    if token is not None:
        return Refusal("command", f"the answer contains the command keyword {token!r}")
    if not proof and not one_tactic(answer):
        return Refusal("multiline", "a tactic answer is one tactic: its later lines must be its nested block")
    return None


def _option_refusal(answer: str, code: str) -> Refusal | None:
    """The refusal of the first `set_option` in the code that is denied or not a tactic."""
    for match in _SET_OPTION.finditer(code):
        option = _OPTION_IN.match(answer, match.start())
        if option is None:
            return Refusal("option", "set_option without `in` is a command: an answer is a tactic")
        name = option.group(1).replace("«", "").replace("»", "")
        why = denied_option(name, option.group(2))
        if why is not None:
            return Refusal("option", why)
    return None


def one_tactic(answer: str) -> bool:
    """Whether every line of code after the first is indented deeper than the first (its nested
    block), or stands at its column as an arm (`| zero => simp`) or a `<;> tac` continuation.
    Comment lines are not code."""
    lines = [line for line in code_view(answer).strip("\n").split("\n") if line.strip()]
    if len(lines) <= 1:
        return True
    base = len(lines[0]) - len(lines[0].lstrip())

    def belongs(line: str) -> bool:
        indent = len(line) - len(line.lstrip())
        return indent > base or (indent == base and line.lstrip().startswith(("|", "<;>")))

    return all(belongs(line) for line in lines[1:])
