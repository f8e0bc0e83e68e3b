"""The two copies of a repository file that repo_replay checks: the baseline and the patched one.

Both carry the same two additions, so one position map takes every baseline position to the
patched copy: the target declaration is named when it has no name (lean/declaration.py), and
`#print axioms <target>` follows it. The baseline keeps the sorry; the patched copy has the
answer spliced over it (lean/splice.py). Lines before the target declaration are the same
text in both (`prefix_lines`): a REPL elaborates them once and reuses that environment.

When the target declaration holds other sorries, `sorryAx` in its axioms says nothing about the
answer, and `lean --json` gives one `declaration uses 'sorry'` warning per declaration, not one
per sorry. So those other sorries are replaced in both copies by a stand-in axiom declared just
above the target (`axiom _root_.lsrb_hole ... : α`, used as `lsrb_hole` in term position and
`exact lsrb_hole` in tactic position): then any `sorryAx` the target still depends on, and any
sorry warning it still gets, is the answer's — a new `sorry`, `stop`, `apply?`, or a lemma
proved by sorry. Where the stand-ins do not compile (a computable `def` cannot use an axiom, a
`stop` cannot be stood in for, a position guessed wrong), the verifier falls back to the copies
without them (`stand_ins=False`), where only the REPL's sorry list or the token guard sees a new
sorry inside the target.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.acceptance import AxiomProbe, axiom_probe_line
from pytest_lsrb.tactic.lean.declaration import Declaration, find_declaration, insert_probe, named_source
from pytest_lsrb.tactic.lean.outcome import Pos
from pytest_lsrb.tactic.lean.splice import SorryKind, Spliced, infer_sorry_kind, sorry_holes, splice

STAND_IN: Final = "lsrb_hole"
# Universe and type names of its own, so no `universe u` or `variable` of the file can clash.
STAND_IN_AXIOM: Final = f"axiom _root_.{STAND_IN}.{{lsrb_u}} {{lsrb_α : Sort lsrb_u}} : lsrb_α"
_STANDS_IN_FOR: Final = re.compile(r"(?:sorry|admit)\b")


@dataclass(frozen=True)
class Baseline:
    """The unpatched file with the target named and probed."""

    text: str
    span: tuple[Pos, Pos]  # the sorry, in this text
    declaration: Declaration
    probe: AxiomProbe | None
    target_keeps_sorry: bool  # the target declaration has sorries besides this one
    stand_ins: int = 0  # other sorries of the target replaced by the stand-in axiom

    @property
    def prefix_lines(self) -> int:
        return self.declaration.first_line - 1


@dataclass(frozen=True)
class Patched:
    text: str
    spliced: Spliced
    probe: AxiomProbe | None
    target_lines: tuple[int, int]
    line_delta: int  # lines the splice removed (multi-line spans)
    baseline: Baseline

    @property
    def target_text(self) -> str:
        """The target declaration as checked, the answer in it."""
        first, last = self.target_lines
        return "\n".join(self.text.split("\n")[first - 1 : last])

    def moved(self, pos: Pos) -> Pos:
        """Where a baseline position (outside the replaced span) is in the patched copy."""
        start, end = self.baseline.span
        if pos < start or (pos < end and pos[0] != end[0]):
            return pos
        if pos[0] == end[0]:  # after the span on its last line: after the replacement's last line
            return (self.spliced.span[1][0], self.spliced.span[1][1] + (pos[1] - end[1]))
        return (pos[0] - self.line_delta, pos[1])


def make_baseline(source: str, start: Pos, end: Pos, *, stand_ins: bool = True) -> Baseline | None:
    """None when no declaration holds the sorry (nothing to ask `#print axioms` about).
    `stand_ins`: replace the target's other sorries by the stand-in axiom (module docstring)."""
    decl = find_declaration(source, start[0])
    if decl is None:
        return None
    others = [h for h in sorry_holes(source, decl.first_line, decl.last_line) if not start <= h < end]
    if stand_ins and others:
        instrumented = _with_stand_ins(source, decl, others, start, end)
        if instrumented is not None:
            text, new_start, new_end = instrumented
            made = make_baseline(text, new_start, new_end, stand_ins=False)
            if made is not None and not made.target_keeps_sorry:
                return dataclasses.replace(made, stand_ins=len(others))
    named = named_source(source, decl)
    span = (start, end)
    probe: AxiomProbe | None = None
    text = source
    if named is not None:
        text, target = named
        old_head = source.split("\n")[decl.keyword_line - 1]
        new_head = text.split("\n")[decl.keyword_line - 1]
        delta = len(new_head) - len(old_head)
        if delta and start[0] == decl.keyword_line:
            span = ((start[0], start[1] + delta), (end[0], end[1] + delta if end[0] == start[0] else end[1]))
        text, probe_line = insert_probe(text, decl.last_line, axiom_probe_line(target))
        probe = AxiomProbe(probe_line, target)
    return Baseline(text, span, decl, probe, target_keeps_sorry=bool(others))


def _with_stand_ins(
    source: str, decl: Declaration, holes: list[Pos], start: Pos, end: Pos
) -> tuple[str, Pos, Pos] | None:
    """`source` with each hole replaced by the stand-in and the axiom declared above the
    target, and the replaced span's new place; None when a hole is a `stop` (it skips the
    tactics after it, which a stand-in would run)."""
    lines = source.split("\n")
    shift = 0
    for line, col in sorted(holes, reverse=True):
        word = _STANDS_IN_FOR.match(lines[line - 1], col)
        if word is None:
            return None
        kind = infer_sorry_kind("\n".join(lines), (line, col))
        stand_in = STAND_IN if kind == "term" else f"exact {STAND_IN}"
        text = lines[line - 1]
        lines[line - 1] = text[:col] + stand_in + text[word.end() :]
        if line == start[0] and col < start[1]:
            shift += len(stand_in) - (word.end() - col)
    added = 2  # the axiom and a blank line
    lines[decl.first_line - 1 : decl.first_line - 1] = [STAND_IN_AXIOM, ""]
    new_end = (end[0] + added, end[1] + shift if end[0] == start[0] else end[1])
    return "\n".join(lines), (start[0] + added, start[1] + shift), new_end


def make_patched(baseline: Baseline, tactic: str, kind: SorryKind | None = None) -> Patched:
    """The baseline with `tactic` spliced over its sorry (raises SpliceError when it cannot be)."""
    start, end = baseline.span
    spliced = splice(baseline.text, start, end, tactic, kind)
    # lines the splice removed: the span's, less those a block answer adds (may be negative)
    line_delta = (end[0] - start[0]) - (spliced.span[1][0] - spliced.span[0][0])
    probe = None
    if baseline.probe is not None:
        probe = AxiomProbe(baseline.probe.line - line_delta, baseline.probe.target)
    decl = baseline.declaration
    return Patched(
        spliced.text,
        spliced,
        probe,
        (decl.first_line, decl.last_line - line_delta),
        line_delta,
        baseline,
    )


def owed_probe(baseline: Baseline, names: tuple[str, ...]) -> str | None:
    """The unpatched copy with its `#print axioms` line asking about `names` instead of the
    target (one command after another on that line, so no other position moves): what those
    declarations depend on is decided there, before any answer. None without a probe line."""
    if baseline.probe is None or not names:
        return None
    lines = baseline.text.split("\n")
    lines[baseline.probe.line - 1] = " ".join(axiom_probe_line(n) for n in names)
    return "\n".join(lines)
