"""The two copies of a repository file that repo_replay checks: the baseline and the patched one.

Both carry the same two additions, so one position map takes every baseline position to the
patched copy: the target declaration is named when it has no name (lean/declaration.py), and
`#print axioms <target>` follows it. The baseline keeps the sorry; the patched copy has the
answer spliced over it (lean/splice.py). Lines before the target declaration are the same
text in both (`prefix_lines`): a REPL elaborates them once and reuses that environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.acceptance import AxiomProbe, axiom_probe_line
from pytest_lsrb.tactic.lean.declaration import Declaration, find_declaration, insert_probe, named_source
from pytest_lsrb.tactic.lean.outcome import Pos
from pytest_lsrb.tactic.lean.splice import SorryKind, Spliced, splice

_SORRY_LIKE: Final = re.compile(r"(?<![\w.])(?:sorry|admit)(?![\w'])|^\s*stop\b", re.M)


@dataclass(frozen=True)
class Baseline:
    """The unpatched file with the target named and probed."""

    text: str
    span: tuple[Pos, Pos]  # the sorry, in this text
    declaration: Declaration
    probe: AxiomProbe | None
    target_keeps_sorry: bool  # the target declaration has sorries besides this one

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

    def moved(self, pos: Pos) -> Pos:
        """Where a baseline position (outside the replaced span) is in the patched copy."""
        start, end = self.baseline.span
        if pos < start or (pos < end and pos[0] != end[0]):
            return pos
        if pos[0] == end[0]:
            return (start[0], self.spliced.span[1][1] + (pos[1] - end[1]))
        return (pos[0] - self.line_delta, pos[1])


def _without_comments(text: str) -> str:
    return re.sub(r"--[^\n]*", "", re.sub(r"/-.*?-/", "", text, flags=re.S))


def make_baseline(source: str, start: Pos, end: Pos) -> Baseline | None:
    """None when no declaration holds the sorry (nothing to ask `#print axioms` about)."""
    decl = find_declaration(source, start[0])
    if decl is None:
        return None
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
    lines = source.split("\n")
    body = "\n".join(lines[decl.first_line - 1 : decl.last_line])
    sorry_count = len(_SORRY_LIKE.findall(_without_comments(body)))
    return Baseline(text, span, decl, probe, target_keeps_sorry=sorry_count > 1)


def make_patched(baseline: Baseline, tactic: str, kind: SorryKind | None = None) -> Patched:
    """The baseline with `tactic` spliced over its sorry (raises SpliceError when it cannot be)."""
    start, end = baseline.span
    spliced = splice(baseline.text, start, end, tactic, kind)
    line_delta = end[0] - start[0]
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
