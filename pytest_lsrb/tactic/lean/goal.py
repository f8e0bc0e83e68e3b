"""Pretty-printed Lean goals: parse them, and restate one as a standalone `example` when faithful.

A goal as Lean prints it:

    case h                               optional case tag
    x y : ℕ                              grouped binders
    inst✝ : DecidableEq α                an anonymous instance (inaccessible name)
    h :                                  a type wrapped onto indented lines
      ∀ (i : Fin n),
        f i = g i
    s : Set α := {x | p x}               a let-bound hypothesis
    ⊢ f 0 = g 0                          the target (continued on indented lines)

Restating turns hypotheses into binders of `example`, names with `✝` into `«x✝»` (a legal name
no user can type by accident), keyword names into `«this»` (lean/keywords.py), universe names
into a `universe` line, and hypotheses from the first let-bound one on into `let`/`∀` in the
statement, introduced again by `intro`. Goals that
cannot be restated faithfully are reported with a reason: `⋯` (an elided proof term),
metavariables (`?m.5`, `?u.7`), several `⊢` (more than one goal), a `sorry` inside the goal, or a
goal Lean failed to print.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.keywords import quote_name as keyword_quoted

_NAME: Final = r"(?:«[^»\n]+»|[^\s:()\[\]{}⟨⟩,«»⊢]+)"
_HYP_LINE: Final = re.compile(rf"^(?P<names>{_NAME}(?: {_NAME})*) :(?: (?P<rest>.*))?$")
_INACCESSIBLE: Final = re.compile(r"(?<![\w.«'])([^\W\d][\w'!?]*✝[⁰¹²³⁴⁵⁶⁷⁸⁹]*)")
_METAVAR: Final = re.compile(r"(?<![\w.'?!])\?[A-Za-z_][\w.]*")
_SORRY: Final = re.compile(r"(?<![\w.'])sorry(?![\w'])")
_UNIVERSE_AFTER_SORT: Final = re.compile(r"(?<![\w.])(?:Type|Sort)\s+(\([^()]*\)|[A-Za-z_][\w']*)")
_EXPLICIT_LEVELS: Final = re.compile(r"\.\{([^{}]*)\}")
_LEVEL_NAME: Final = re.compile(r"(?<![\w?])([A-Za-z_][\w']*)")
_LEVEL_WORDS: Final = frozenset({"max", "imax"})
_LET_WORD: Final = re.compile(r"(?<![\w.])(?:let|have)(?![\w'])")
_OPEN: Final = "([{⟨"
_CLOSE: Final = ")]}⟩"


class GoalParseError(ValueError):
    """The text is not a goal this parser can read; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Hypothesis:
    names: tuple[str, ...]
    type: str  # on one line; `layout` keeps Lean's line breaks for restating
    value: str | None = None  # set for let-bound hypotheses `x : T := v`
    layout: Layout | None = None

    @property
    def is_instance(self) -> bool:
        """An anonymous instance binder (Lean names those `inst✝`, `inst✝¹`, ...)."""
        return all(n.startswith("inst✝") for n in self.names)

    @property
    def is_let(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Layout:
    """A wrapped text as Lean printed it: the first line's column and every line (the later
    ones with their own indentation), so a restatement can keep column-sensitive syntax
    (`do` blocks, `match` alternatives) in shape."""

    column: int
    lines: tuple[str, ...]

    def render(self, column: int) -> str:
        """The text with its first line at `column`, later lines moved by the same amount."""
        if len(self.lines) == 1:
            return self.lines[0]
        rest = self.lines[1:]
        shift = column - self.column
        least = min(len(x) - len(x.lstrip(" ")) for x in rest)
        shift = max(shift, column + 2 - least)  # stay right of the opening line
        return "\n".join([self.lines[0], *((" " * shift + x) if shift >= 0 else x[-shift:] for x in rest)])


@dataclass(frozen=True)
class Goal:
    case_tag: str | None
    hypotheses: tuple[Hypothesis, ...]
    target: str
    target_layout: Layout | None = None

    @property
    def names(self) -> list[str]:
        return [n for h in self.hypotheses for n in h.names]


@dataclass(frozen=True)
class Restatement:
    """A goal restated as `example`: the pieces, and the text with any proof body."""

    universes: tuple[str, ...]
    binders: tuple[str, ...]
    statement: str
    intros: tuple[str, ...]
    case_tag: str | None = None

    def preamble(self) -> list[str]:
        return [f"universe {' '.join(self.universes)}"] if self.universes else []

    def example_lines(self, body: Sequence[str], head: str = "example") -> list[str]:
        """`example ... := by` (or `head ... := by`) and the indented proof: `intro` (if any),
        then `body`."""
        lines = [head]
        lines += [f"    {b}" for b in self.binders]
        lines[-1] += " :"
        lines.append(f"    {self.statement} := by")
        if self.intros:
            lines.append("  intro " + " ".join(self.intros))
        lines += [f"  {line}" for line in body]
        return lines


@dataclass(frozen=True)
class Unrestatable:
    reason: str


def quote_name(name: str) -> str:
    """A hypothesis name as source text: names Lean made inaccessible (`x✝`) and keywords
    (`this`, which Lean prints bare for the hypothesis `have :` made) go in «»."""
    if name.startswith("«"):
        return name
    return f"«{name}»" if "✝" in name else keyword_quoted(name)


def quote_inaccessible(text: str) -> str:
    return _INACCESSIBLE.sub(lambda m: f"«{m.group(1)}»", text)


def split_value(rest: str) -> tuple[str, str | None]:
    """`T := v` -> (T, v) at bracket depth 0; (rest, None) when there is no such `:=`."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif depth == 0 and rest.startswith(" := ", i) and not _LET_WORD.search(rest[:i]):
            return rest[:i].strip(), rest[i + 4 :].strip()
    if rest.endswith(" :="):
        return rest[:-3].strip(), ""
    return rest.strip(), None


def parse_goal(text: str, *, lenient: bool = False) -> Goal:
    """Parse one pretty-printed goal; raise `GoalParseError` when it is not one goal.

    `lenient`: read whatever text comes (the mock baseline and the goal slices read users' index
    rows), never raising: a line that is no hypothesis is skipped, every line after the first `⊢`
    continues the target, and a text without `⊢` has an empty target."""
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    case_tag: str | None = None
    if lines and lines[0].startswith("case "):
        case_tag = lines[0][5:].strip()
        lines = lines[1:]
    raw: list[tuple[str, int, list[str]]] = []  # (names, column of the type, [type lines])
    target: list[str] | None = None

    def refuse(reason: str) -> None:
        if not lenient:
            raise GoalParseError(reason)

    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            refuse("several goals (blank line inside the goal text)")
        elif line.startswith("⊢"):
            if target is not None:
                refuse("several goals (more than one ⊢)")
                target.append(line[1:].strip())
            else:
                target = [line[1:].lstrip()]
        elif line[0] in " \t":
            if target is not None:
                target.append(line.rstrip())
            elif raw:
                raw[-1][2].append(line.rstrip())
            else:
                refuse(f"line {lineno} continues nothing: {line.strip()[:60]!r}")
        elif target is not None:
            refuse(f"line {lineno} after the target is not indented: {line[:60]!r}")
            target.append(line)
        else:
            m = _HYP_LINE.match(line)
            if m:
                raw.append((m["names"], len(m["names"]) + 3, [m["rest"] or ""]))
            else:
                refuse(f"line {lineno} is not a hypothesis `names : type`: {line[:60]!r}")
    if target is None:
        refuse("no ⊢ target")
        target = []
    hyps: list[Hypothesis] = []
    for names, column, parts in raw:
        if not parts[0]:  # `h :` with the type on the next lines
            parts = parts[1:]
            column = min((len(x) - len(x.lstrip(" ")) for x in parts), default=0)
            parts = [parts[0].lstrip(), *parts[1:]] if parts else parts
        flat_type, value = split_value(" ".join(p.strip() for p in parts if p.strip()))
        if not flat_type:
            refuse(f"hypothesis {names} has no type")
        layout: Layout | None = None
        if len(parts) > 1 and value is None:
            layout = Layout(column, tuple(parts))
        elif len(parts) > 1:  # a let value wrapped onto later lines keeps its shape
            head_type, head_value = split_value(parts[0])
            if head_value is not None and head_type == flat_type:
                at = column + len(parts[0]) - len(head_value)
                layout = Layout(at, (head_value, *parts[1:]))
        hyps.append(Hypothesis(tuple(names.split(" ")), flat_type, value, layout))
    statement = " ".join(p.strip() for p in target if p.strip())
    if not statement:
        refuse("the target after ⊢ is empty")
    target_layout = Layout(2, tuple(target)) if len(target) > 1 else None
    return Goal(case_tag, tuple(hyps), statement, target_layout)


def unrestatable_reason(text: str) -> str | None:
    """Why `text` cannot be restated faithfully (checked before parsing), or None."""
    if not text.strip():
        return "the goal text is empty"
    if "failed to pretty print" in text:
        return "Lean failed to pretty-print the goal"
    if "⋯" in text:
        return "the goal elides a term as ⋯ (pp.proofs/pp.deepTerms)"
    mvar = _METAVAR.search(text)
    if mvar:
        return f"the goal holds a metavariable ({mvar.group(0)})"
    targets = sum(1 for line in text.split("\n") if line.startswith("⊢"))
    if targets > 1:
        return f"several goals ({targets} ⊢)"
    if _SORRY.search(text):
        return "the goal contains sorry"
    return None


def universe_names(texts: Sequence[str]) -> tuple[str, ...]:
    """Universe names used by `Type u`, `Sort (max u v)` and explicit `.{u, v}` levels."""
    found: list[str] = []
    for text in texts:
        chunks = [m.group(1) for m in _UNIVERSE_AFTER_SORT.finditer(text)]
        chunks += [m.group(1) for m in _EXPLICIT_LEVELS.finditer(text)]
        for chunk in chunks:
            for name in _LEVEL_NAME.findall(chunk):
                if name not in _LEVEL_WORDS and name not in found:
                    found.append(name)
    return tuple(found)


_BINDER_COLUMN: Final = 4  # binders and the statement start at this column in `example`


def _binder(h: Hypothesis) -> str:
    names = " ".join(quote_name(n) for n in h.names)
    open_, close = ("[", "]") if h.is_instance else ("(", ")")
    prefix = f"{open_}{names} : "
    typ = h.layout.render(_BINDER_COLUMN + len(prefix)) if h.layout else h.type
    return prefix + quote_inaccessible(typ) + close


def _quantifier(h: Hypothesis) -> str:
    """One hypothesis moved into the statement (a line at `_BINDER_COLUMN`)."""
    typ = quote_inaccessible(h.type)
    if h.value is not None:
        head = f"let {quote_name(h.names[0])} : {typ} := "
        value = h.layout.render(_BINDER_COLUMN + len(head)) if h.layout else h.value
        return head + quote_inaccessible(value)
    names = " ".join(quote_name(n) for n in h.names)
    head = f"∀ [{names} : " if h.is_instance else f"∀ ({names} : "
    body = h.layout.render(_BINDER_COLUMN + len(head)) if h.layout else h.type
    return head + quote_inaccessible(body) + ("]," if h.is_instance else "),")


def restate_goal(goal: Goal) -> Restatement | Unrestatable:
    for h in goal.hypotheses:
        if h.value is not None and (len(h.names) != 1 or not h.value):
            return Unrestatable(f"let-bound hypothesis {' '.join(h.names)} has no single value")
    first_let = next((i for i, h in enumerate(goal.hypotheses) if h.is_let), len(goal.hypotheses))
    head, tail = goal.hypotheses[:first_let], goal.hypotheses[first_let:]
    target = goal.target_layout.render(_BINDER_COLUMN) if goal.target_layout else goal.target
    # One line per moved hypothesis: a line break ends a `let` as `;` would.
    parts = [*(_quantifier(h) for h in tail), quote_inaccessible(target)]
    statement = f"\n{' ' * _BINDER_COLUMN}".join(parts)
    binders = tuple(_binder(h) for h in head)
    leftover = re.sub(r"«[^»\n]*»", "", " ".join([statement, *binders]))
    if "✝" in leftover:
        name = re.search(r"[\w.']*✝[⁰¹²³⁴⁵⁶⁷⁸⁹]*", leftover)
        return Unrestatable(f"the goal names an inaccessible constant ({name.group(0) if name else '✝'})")
    intros = tuple(quote_name(n) for h in tail for n in h.names)
    texts = [goal.target, *(h.type for h in goal.hypotheses), *(h.value or "" for h in goal.hypotheses)]
    return Restatement(
        universes=universe_names(texts),
        binders=binders,
        statement=statement,
        intros=intros,
        case_tag=goal.case_tag,
    )


def restate(text: str) -> Restatement | Unrestatable:
    """Restate a goal text as an `example`, or say why that would not be faithful."""
    reason = unrestatable_reason(text)
    if reason is not None:
        return Unrestatable(reason)
    try:
        goal = parse_goal(text)
    except GoalParseError as exc:
        return Unrestatable(exc.reason)
    return restate_goal(goal)
