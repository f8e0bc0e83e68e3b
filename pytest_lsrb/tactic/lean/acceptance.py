"""The acceptance rule: when an answer closes its goal. One rule for every mode and backend.

An answer is `closed` only when all of these hold, checked in this order:
1. Lean reports no error (an `unsolved goals` error for the block holding the answer alone is
   `progress`, recorded as its own outcome; any other error is `lean_error`);
2. the sorries are exactly the others: every sorry of the unpatched source except the replaced
   one is still there, at the same place (moved by the splice) with the same goal, and there is
   no new one (`new_sorry`). With a REPL this diffs its `sorries` lists position by position, as
   SorryDB's verifier does; `lean --json` reports no sorry list, so there the `declaration uses
   'sorry'` warnings are diffed by position instead (one per declaration);
3. Lean's `#print axioms` report for the target declaration, printed after it, holds no
   `sorryAx` (`sorry_axiom`: `stop`, `apply?`, `exact?`'s partial proofs and `admit` all end in
   `sorryAx`, as does a lemma proved with sorry), no `Lean.ofReduceBool`/`Lean.trustCompiler`
   (`native_decide`; allowed by the profile's `allow_native_decide`), and no axiom outside
   Lean's three (`propext`, `Classical.choice`, `Quot.sound`) that the target did not already
   depend on (`custom_axiom`). No report at all (`#exit` in the answer) is `axioms_unreported`.
   `sorryAx` the target reaches through a declaration it names that already depends on it (a
   lemma proved by sorry in this file or an imported one, decided on the unpatched file, which
   the answer cannot change) is not the answer's: SorryDB accepts such a proof, and so do we,
   recording `inherited_sorry` on the closed verdict (`reject_inherited_sorry` in a profile
   makes it `lean_error`/`inherited_sorry` instead).

When the target declaration keeps other sorries of its own, the verifier replaces them by a
stand-in axiom (lean/patch.py), so `sorryAx` in the report is still the answer's. Only where
that does not compile is `sorryAx` expected (`sorry_expected`), and step 2 is what finds a new one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.tactic.lean.outcome import (
    LeanMessage,
    Pos,
    SorryInfo,
    Verdict,
    error_subkind,
    judge_messages,
)

STANDARD_AXIOMS: Final = frozenset({"propext", "Classical.choice", "Quot.sound"})
SORRY_AXIOM: Final = "sorryAx"
# `native_decide` trusts the compiler: `Lean.ofReduceBool` (and, from Lean 4.2x, `Lean.trustCompiler`
# plus an auxiliary `..._native.native_decide.ax_N` axiom).
NATIVE_AXIOMS: Final = frozenset({"Lean.ofReduceBool", "Lean.trustCompiler"})
# Lean's report (src/Lean/Elab/Print.lean, `printAxiomsOf`): `'{constName}' depends on axioms:
# [..]` or `'{constName}' does not depend on any axioms`. The name is quoted but not escaped, so
# `'foo'' depends ...` is the report on `foo'`: the name runs to the last quote before the verb.
_AXIOM_REPORT: Final = re.compile(
    r"^\s*'(?P<name>.+?)'\s+(?:depends on axioms:\s*\[(?P<axioms>.*)\]|does not depend on any axioms)\s*$",
    re.S,
)
# Lean versions that print the list with `MessageData.ofConstName` shorten each name by the open
# namespaces (`open Classical` prints `choice`); the axioms a proof can reach that way are these.
SHORT_AXIOM_NAMES: Final = {
    "choice": "Classical.choice",
    "sound": "Quot.sound",
    "ofReduceBool": "Lean.ofReduceBool",
    "trustCompiler": "Lean.trustCompiler",
}
_LIST_ITEM: Final = re.compile(r"(?:[^,\s«]|«[^»]*»)+")


def is_native(axiom: str) -> bool:
    return axiom in NATIVE_AXIOMS or "_native." in axiom or axiom.startswith("_native")


def canonical_axiom(name: str) -> str:
    """An axiom's full name from the name Lean printed (`choice` under `open Classical`, `_root_.`)."""
    name = name.removeprefix("_root_.")
    return SHORT_AXIOM_NAMES.get(name, name)


def parse_axiom_report(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(declaration, axioms) from `#print axioms` output, or None when `text` is not one.

    Lean prints `'foo' depends on axioms: [propext, sorryAx]` (wrapped over lines when long)
    or `'foo' does not depend on any axioms`; the name may be primed (`'foo''`), dotted,
    guillemet-quoted (`'«a b»'`) or private. Axiom names come back in full (`canonical_axiom`).
    """
    m = _AXIOM_REPORT.match(text)
    if m is None:
        return None
    listed = " ".join((m.group("axioms") or "").split())
    return m.group("name"), tuple(canonical_axiom(a) for a in _LIST_ITEM.findall(listed))


def axiom_verdict(
    axioms: Iterable[str],
    *,
    allow_native: bool,
    expected: Iterable[str] = (),
    sorry_expected: bool = False,
    inherited: Sequence[str] = (),
    reject_inherited: bool = False,
) -> Verdict | None:
    """The failure the target's axioms show, or None when they are fine.

    `expected`: axioms the target already depended on before the answer (a repository's own
    axioms); `sorry_expected`: the target keeps other sorries, so `sorryAx` is no evidence;
    `inherited`: declarations the target names that already depend on `sorryAx` (a lemma
    proved by sorry, in this file or imported; decided on the baseline): `sorryAx` reached
    through them is not the answer's, as SorryDB judges, unless `reject_inherited`.
    """
    found = tuple(axioms)
    if SORRY_AXIOM in found and not sorry_expected:
        if not inherited:
            return Verdict(
                "lean_error",
                "sorry_axiom",
                "the proof depends on sorryAx (stop, apply?, admit or a lemma proved by sorry)",
            )
        if reject_inherited:
            return Verdict("lean_error", INHERITED_SORRY, _inherited_detail(inherited) + " (rejected)")
    native = [a for a in found if is_native(a)]
    if native and not allow_native:
        return Verdict(
            "lean_error",
            "native_decide",
            f"the proof trusts the compiler ({', '.join(native)}); allow_native_decide is off",
        )
    allowed = STANDARD_AXIOMS | set(expected) | {SORRY_AXIOM}
    custom = [a for a in found if a not in allowed and not is_native(a)]
    if custom:
        return Verdict("lean_error", "custom_axiom", f"the proof depends on new axioms: {', '.join(custom)}")
    return None


INHERITED_SORRY: Final = "inherited_sorry"


def _inherited_detail(inherited: Sequence[str]) -> str:
    shown = ", ".join(inherited[:5]) + (f" and {len(inherited) - 5} more" if len(inherited) > 5 else "")
    return f"sorryAx reaches the target through {shown}, which already depend on it"


def owed_sorry(reports: Iterable[tuple[str, tuple[str, ...]]]) -> tuple[str, ...]:
    """The declarations among `reports` (name, axioms) that depend on `sorryAx`."""
    return tuple(dict.fromkeys(name for name, axioms in reports if SORRY_AXIOM in axioms))


@dataclass(frozen=True)
class AxiomProbe:
    """Where the `#print axioms` line sits in the checked source (1-based line)."""

    line: int
    target: str


def axiom_probe_line(target: str) -> str:
    return f"#print axioms {target}"


def _on_line(message: LeanMessage, line: int) -> bool:
    return message.pos[0] == line


def sorry_diff(
    before: Sequence[SorryInfo],
    after: Sequence[SorryInfo],
    *,
    replaced: tuple[Pos, Pos],
    moved: Callable[[Pos], Pos],
    compare_goals: bool = True,
) -> Verdict | None:
    """SorryDB's check on two REPL `sorries` lists: all but the replaced sorry are still there
    (position moved by the splice, same goal) and none is new. None when they match."""
    expected = sorted(
        (moved(s.pos), s.goal if compare_goals else "")
        for s in before
        if s.pos is not None and s.pos != replaced[0]
    )
    found = sorted((s.pos, s.goal if compare_goals else "") for s in after if s.pos is not None)
    if expected == found:
        return None
    new = [p for p, _ in found if p not in {q for q, _ in expected}]
    if new:
        where = ", ".join(f"{p[0]}:{p[1]}" for p in new)
        return Verdict("lean_error", "new_sorry", f"the answer leaves a new sorry at {where}")
    return Verdict("lean_error", "new_sorry", "the other sorries changed (position or goal) after the answer")


def warning_diff(
    before: Sequence[LeanMessage],
    after: Sequence[LeanMessage],
    *,
    moved: Callable[[Pos], Pos],
    target_lines: tuple[int, int],
    target_keeps_sorry: bool,
) -> Verdict | None:
    """The same check from `declaration uses 'sorry'` warnings (one per declaration), for Lean
    runs without a sorry list. `target_lines`: the target declaration's lines after the splice."""
    first, last = target_lines

    def inside(pos: Pos) -> bool:
        return first <= pos[0] <= last

    expected = sorted(moved(m.pos) for m in before if m.is_sorry_warning)
    expected = [p for p in expected if not inside(p)]
    found = sorted(m.pos for m in after if m.is_sorry_warning)
    in_target = [p for p in found if inside(p)]
    outside = [p for p in found if not inside(p)]
    if outside != expected:
        return Verdict(
            "lean_error", "new_sorry", "another declaration's sorry warnings changed after the answer"
        )
    if in_target and not target_keeps_sorry:
        return Verdict("lean_error", "new_sorry", "the target declaration still uses sorry after the answer")
    return None


def no_sorry_left(messages: Sequence[LeanMessage], sorries: Sequence[SorryInfo]) -> Verdict | None:
    """For a script whose only sorry was the replaced one: any sorry left is new."""
    if sorries:
        where = ", ".join(f"{s.pos[0]}:{s.pos[1]}" for s in sorries if s.pos is not None)
        return Verdict("lean_error", "new_sorry", f"the answer leaves a sorry ({where or 'no position'})")
    if any(m.is_sorry_warning for m in messages):
        return Verdict("lean_error", "new_sorry", "Lean still warns that the goal uses sorry")
    return None


def accept(
    messages: Sequence[LeanMessage],
    span: tuple[Pos, Pos],
    *,
    probe: AxiomProbe | None,
    allow_native: bool,
    sorry_check: Callable[[], Verdict | None],
    expected_axioms: Iterable[str] = (),
    sorry_expected: bool = False,
    progress_span: tuple[Pos, Pos] | None = None,
    inherited: Sequence[str] = (),
    reject_inherited: bool = False,
    text: str | None = None,
) -> Verdict:
    """The verdict on one answer (see the module docstring for the rule); `text`: the checked
    file, whose lines the errors shown to the model quote."""
    probe_msgs = [m for m in messages if probe is not None and _on_line(m, probe.line)]
    rest = [m for m in messages if m not in probe_msgs]
    verdict = judge_messages(rest, span, progress_span=progress_span, text=text)
    if verdict.outcome != "closed":
        return verdict
    diff = sorry_check()
    if diff is not None:
        return diff
    if probe is None:
        return verdict
    probe_errors = [m for m in probe_msgs if m.is_error]
    if probe_errors:
        return Verdict(
            "reconstruction_failed",
            "axiom_report",
            f"#print axioms {probe.target} failed ({error_subkind(probe_errors[0].data)}): "
            f"{probe_errors[0].brief()}",
        )
    reports = [r for r in (parse_axiom_report(m.data) for m in probe_msgs) if r is not None]
    if not reports:
        return Verdict(
            "lean_error",
            "axioms_unreported",
            f"Lean printed no axiom report for {probe.target} after the answer (did it end the file?)",
        )
    found = reports[0][1]
    failed = axiom_verdict(
        found,
        allow_native=allow_native,
        expected=expected_axioms,
        sorry_expected=sorry_expected,
        inherited=inherited,
        reject_inherited=reject_inherited,
    )
    if failed is None and inherited and SORRY_AXIOM in found and not sorry_expected:
        return Verdict("closed", INHERITED_SORRY, _inherited_detail(inherited))
    return failed or verdict
