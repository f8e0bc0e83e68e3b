"""Lean's `#print axioms` reports: read for any name, and printed by the fake as Lean prints them.

Lean's text (src/Lean/Elab/Print.lean, `printAxiomsOf`): `'{constName}' depends on axioms:
[...]` with the list in `Name.lt` order, or `'{constName}' does not depend on any axioms`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pytest_lsrb.tactic.lean.acceptance import axiom_verdict, canonical_axiom, parse_axiom_report
from pytest_lsrb.tactic.lean.declaration import referenced_names
from pytest_lsrb.tactic.lean.keywords import quote_name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("'foo' depends on axioms: [propext, sorryAx]", ("foo", ("propext", "sorryAx"))),
        ("'foo'' depends on axioms: [sorryAx]", ("foo'", ("sorryAx",))),
        ("'foo''' does not depend on any axioms", ("foo''", ())),
        ("'Foo.«bar baz»' does not depend on any axioms", ("Foo.«bar baz»", ())),
        (
            "'Millennium.xi.even' depends on axioms: [propext,\n Classical.choice,\n Quot.sound]",
            ("Millennium.xi.even", ("propext", "Classical.choice", "Quot.sound")),
        ),
        # `open Classical` with a Lean that prints names by `MessageData.ofConstName`
        (
            "'t' depends on axioms: [propext, choice, sound]",
            ("t", ("propext", "Classical.choice", "Quot.sound")),
        ),
        (
            "'t' depends on axioms: [Foo.«my axiom», ofReduceBool]",
            ("t", ("Foo.«my axiom»", "Lean.ofReduceBool")),
        ),
        ("unknown constant 'h'", None),
        ("'t' depends on", None),
    ],
)
def test_reports_are_read_for_any_lean_name(text: str, expected: tuple[str, tuple[str, ...]] | None) -> None:
    assert parse_axiom_report(text) == expected


def test_short_names_are_lean_s_axioms_not_new_ones() -> None:
    assert canonical_axiom("_root_.sorryAx") == "sorryAx"
    report = parse_axiom_report("'t' depends on axioms: [propext, choice, sound]")
    assert report is not None
    assert axiom_verdict(report[1], allow_native=False) is None  # was custom_axiom for `choice`


def test_inherited_sorry_is_accepted_unless_rejected_and_never_hides_other_axioms() -> None:
    found = ("propext", "sorryAx")
    assert axiom_verdict(found, allow_native=False, inherited=("helper",)) is None
    rejected = axiom_verdict(found, allow_native=False, inherited=("helper",), reject_inherited=True)
    assert rejected is not None and (rejected.outcome, rejected.subkind) == ("lean_error", "inherited_sorry")
    native = axiom_verdict((*found, "Lean.ofReduceBool"), allow_native=False, inherited=("helper",))
    assert native is not None and native.subkind == "native_decide"
    plain = axiom_verdict(found, allow_native=False)
    assert plain is not None and plain.subkind == "sorry_axiom"


def test_names_a_target_holds() -> None:
    text = (
        "theorem t (h : p) : q := by\n  -- uses Foo.bar\n  have this := Nat.succ_le.mp h\n"
        '  simp [«weird name», h.le, foo\'] at this\n  exact "sorry" |>.elim\n'
    )
    names = referenced_names(text, exclude=frozenset({"t"}))
    assert names[:3] == ("h", "p", "q")
    assert {"Nat.succ_le.mp", "«weird name»", "h.le", "foo'", "simp", "exact"} <= set(names)
    assert not {"t", "this", "have", "by", "at", "Foo.bar", "sorry", "le"} & set(names)


@pytest.mark.parametrize(
    ("name", "quoted"), [("this", "«this»"), ("fun", "«fun»"), ("x₁", "x₁"), ("h'", "h'")]
)
def test_keywords_are_quoted_as_names(name: str, quoted: str) -> None:
    assert quote_name(name) == quoted


# -- the fake prints what Lean prints ---------------------------------------------------------


def _lean(tmp_path: Path, source: str, *args: str) -> list[dict[str, object]]:
    src = tmp_path / "F.lean"
    src.write_text(source)
    out = subprocess.run(["lean", "--json", *args, str(src)], capture_output=True, text=True, check=False)
    return [json.loads(line) for line in out.stdout.splitlines()]


def _reports(messages: list[dict[str, object]]) -> list[str]:
    return [str(m["data"]) for m in messages if m["severity"] == "information"]


def test_the_fake_reports_transitively_in_lean_s_order(
    tmp_path: Path, fake_toolchain: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lean's order is `Name.lt` (prefix first): `[propext, sorryAx, Classical.choice, Quot.sound]`
    as Lean's own tests and Mathlib's outputs show it."""
    monkeypatch.setenv(
        "FAKE_LEAN_IMPORTED", json.dumps({"Std.good": ["propext", "Classical.choice", "Quot.sound"]})
    )
    source = (
        "namespace Foo\n\ntheorem base' : True := by\n  sorry\n\n"
        "theorem top : True := by\n  have := Std.good\n  exact base'\n\nend Foo\n\n"
        "#print axioms Foo.top #print axioms Foo.base' #print axioms Std.good #print axioms nope\n"
    )
    messages = _lean(tmp_path, source)
    assert _reports(messages) == [
        "'Foo.top' depends on axioms: [propext, sorryAx, Classical.choice, Quot.sound]",
        "'Foo.base'' depends on axioms: [sorryAx]",
        "'Std.good' depends on axioms: [propext, Classical.choice, Quot.sound]",
    ]
    errors = [m for m in messages if m["severity"] == "error"]
    assert [e["data"] for e in errors] == ["unknown constant 'nope'"]
    columns = [m["pos"]["column"] for m in messages if m["pos"]["line"] == 12]  # type: ignore[index]
    probe_line = source.split("\n")[11]
    assert columns == [i for i in range(len(probe_line)) if probe_line.startswith("#print", i)]


def test_the_fake_s_kernel_bypass_report_is_clean_as_lean_s(
    tmp_path: Path, fake_toolchain: dict[str, Path]
) -> None:
    """`set_option debug.skipKernelTC true in` lets `decide +kernel` add its auxiliary lemma
    unchecked (Lean's addDecl, src/Lean/AddDecl.lean): no error and no axiom, though False is proved."""
    source = (
        "theorem t : False := by\n"
        "  set_option debug.skipKernelTC true in exact (by decide +kernel : False).elim\n\n"
        "#print axioms t\n"
    )
    messages = _lean(tmp_path, source)
    assert [m["data"] for m in messages] == ["'t' does not depend on any axioms"]


def test_the_fake_compiles_a_module_an_import_can_ask_about(
    tmp_path: Path, fake_toolchain: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    build = tmp_path / "build"
    module = tmp_path / "src" / "Scratch" / "M.lean"
    module.parent.mkdir(parents=True)
    module.write_text("module\n\nnamespace N\n\ntheorem h : True := by\n  sorry\n\nend N\n")
    olean = build / "Scratch" / "M.olean"
    subprocess.run(["lean", "--json", "-o", str(olean), str(module)], check=True, capture_output=True)
    monkeypatch.setenv("LEAN_PATH", str(build))
    messages = _lean(tmp_path, "import Scratch.M\n\nnamespace N\n#print axioms h\n")
    assert _reports(messages) == ["'N.h' depends on axioms: [sorryAx]"]
