"""repo_replay's verdicts as SorryDB's (issue #29, item 3), against the fake `lake lean` whose
`#print axioms` reports are transitive as Lean's are (tests/tactic/lean/lean_fakes.py):

- a target that reaches `sorryAx` through a lemma proved by sorry (in the file or imported)
  closes, recorded `inherited_sorry`; `reject_inherited_sorry` refuses it; a sorry the answer
  brings itself is still `sorry_axiom`;
- a primed target name (`t'`) is judged (Lean prints `'t'' depends on axioms: ...`);
- a file with a `module` header, where Lean refuses `#print axioms`, is judged from a scratch
  non-module file that imports the checked copy;
- `choice` printed for `Classical.choice` under `open Classical` is Lean's axiom, not a new one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from test_lean_verifiers import _replay_with, row, rules

from pytest_lsrb.engine.verifier import VerificationResult
from pytest_lsrb.tactic.verifiers.repo_replay import RepoReplayVerifier

BLUEPRINT = (
    "import Repo.Defs\n\n"
    "theorem helper (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n\n"
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"
)
TARGET_LINE = 7  # the target's `  sorry`


def _check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, tactic: str, profile: str = "", **kw: Any
) -> VerificationResult:
    v = _replay_with(tmp_path, monkeypatch, source, profile)
    try:
        r = row(**{"start_line": TARGET_LINE, "end_line": TARGET_LINE, **kw})
        return v.check(r, tactic, v.profile_for(r))
    finally:
        v.close()


def _lean_calls(fake_lean: Path) -> list[dict[str, Any]]:
    calls = [json.loads(c) for c in (fake_lean / "lean.log").read_text().splitlines()]
    return [c for c in calls if c["argv"] != ["--version"]]


@pytest.mark.parametrize(
    ("tactic", "profile", "expected"),
    [
        # the blueprint's way: the answer uses the lemma still proved by sorry -> SorryDB accepts
        ("exact helper p q hp hq", "", ("closed", "inherited_sorry")),
        ("exact helper p q hp hq", "reject_inherited_sorry = true\n", ("lean_error", "inherited_sorry")),
        # a clean answer owes nothing and is plainly closed
        ("exact ⟨hp, hq⟩", "", ("closed", None)),
    ],
)
def test_a_lemma_proved_by_sorry_in_the_file_is_not_the_answer_s_sorry(
    tmp_path: Path,
    fake_lean: Path,
    monkeypatch: pytest.MonkeyPatch,
    tactic: str,
    profile: str,
    expected: tuple[str, str | None],
) -> None:
    res = _check(tmp_path, monkeypatch, BLUEPRINT, tactic, profile)
    assert (res.outcome, res.subkind) == expected, res.detail
    if expected[1] == "inherited_sorry":
        assert "helper" in (res.detail or "")
        owed = _lean_calls(fake_lean)[-1]["text"].split("\n")
        # asked on the unpatched file (the target's sorry still there), one line of probes
        assert owed[TARGET_LINE - 1] == "  sorry"
        assert any(line.startswith("#print axioms ") and "#print axioms helper" in line for line in owed)


def test_the_strict_inherited_sorry_flag_refuses_what_the_profile_allows(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--lsrb-strict-inherited-sorry (the run option the verifier reads) is the profile key's
    run-wide spelling: the same answer, under a profile that leaves the key off, fails."""
    v = _replay_with(tmp_path, monkeypatch, BLUEPRINT, "")
    options = {**v.config.options, "strict_inherited_sorry": True}
    strict = RepoReplayVerifier(dataclasses.replace(v.config, options=options))
    try:
        r = row(start_line=TARGET_LINE, end_line=TARGET_LINE)
        res = strict.check(r, "exact helper p q hp hq", strict.profile_for(r))
        assert (res.outcome, res.subkind) == ("lean_error", "inherited_sorry"), res.detail
        lenient = v.check(r, "exact helper p q hp hq", v.profile_for(r))
        assert (lenient.outcome, lenient.subkind) == ("closed", "inherited_sorry"), lenient.detail
    finally:
        v.close()
        strict.close()


def test_the_strict_inherited_sorry_flag_is_in_the_summary_config(run_suite: Any, tmp_path: Path) -> None:
    strict = run_suite("--lsrb-strict-inherited-sorry", "--lsrb-max-items=1", out=tmp_path / "strict")
    assert strict.returncode == 0, strict.stdout + strict.stderr
    assert strict.summary()["config"]["strict_inherited_sorry"] is True
    plain = run_suite("--lsrb-max-items=1", out=tmp_path / "plain")
    assert plain.summary()["config"]["strict_inherited_sorry"] is False


def test_an_imported_lemma_proved_by_sorry_is_inherited_too(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository's built module `Repo.Defs` holds `Repo.admitted`, proved by sorry."""
    monkeypatch.setenv("FAKE_LEAN_IMPORTED", json.dumps({"Repo.admitted": ["sorryAx"], "Repo.fine": []}))
    source = BLUEPRINT.replace("helper", "unused")
    inherited = _check(tmp_path, monkeypatch, source, "exact Repo.admitted p q hp hq")
    assert (inherited.outcome, inherited.subkind) == ("closed", "inherited_sorry"), inherited.detail
    assert "Repo.admitted" in (inherited.detail or "")


def test_a_sorry_the_answer_brings_itself_is_still_the_answer_s(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository tactic macro that closes goals with sorry names no declaration that owes it:
    sorryAx is the answer's, even in a file whose other lemma is proved by sorry."""
    rules(monkeypatch, {"contains": "  sorry_tac\n", "messages": [], "axioms": ["sorryAx"]})
    res = _check(tmp_path, monkeypatch, BLUEPRINT, "sorry_tac")
    assert (res.outcome, res.subkind) == ("lean_error", "sorry_axiom"), res.detail


def test_a_primed_target_name_is_judged(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lean writes the name unescaped between quotes: `'t'' does not depend on any axioms`."""
    source = BLUEPRINT.replace("theorem t ", "theorem t' ")
    res = _check(tmp_path, monkeypatch, source, "exact ⟨hp, hq⟩")
    assert (res.outcome, res.subkind) == ("closed", None), res.detail
    reported = [line for c in _lean_calls(fake_lean) for line in c["text"].split("\n") if "axioms t'" in line]
    assert reported and all(line == "#print axioms t'" for line in reported)


MODULE = (
    "module\n\npublic import Repo.Defs\n\nnamespace Foo\n\nopen Classical\n\n"
    "theorem helper (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n\n"
    "public theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n\nend Foo\n"
)
MODULE_LINE = 13


@pytest.mark.parametrize(
    ("tactic", "expected"),
    [
        ("exact ⟨hp, hq⟩", ("closed", None)),
        ("exact helper p q hp hq", ("closed", "inherited_sorry")),
        ("sorry_tac", ("lean_error", "sorry_axiom")),
    ],
)
def test_a_module_file_is_judged_from_a_file_that_imports_it(
    tmp_path: Path,
    fake_lean: Path,
    monkeypatch: pytest.MonkeyPatch,
    tactic: str,
    expected: tuple[str, str | None],
) -> None:
    """Lean refuses `#print axioms` in a module; the checked copy is compiled to an `.olean`
    under a scratch name and a non-module file importing it asks, in the namespace of the target."""
    rules(monkeypatch, {"contains": "  sorry_tac\n", "messages": [], "axioms": ["sorryAx"]})
    res = _check(tmp_path, monkeypatch, MODULE, tactic, start_line=MODULE_LINE, end_line=MODULE_LINE)
    assert (res.outcome, res.subkind) == expected, res.detail
    calls = _lean_calls(fake_lean)
    compiled = [c for c in calls if "-o" in c["argv"]]
    asked = [c for c in calls if c["text"].startswith("import LsrbScratch.Checked\n")]
    assert compiled and len(asked) == len(compiled)  # each checked copy: compiled, then asked
    assert all("-- #print axioms" in c["text"] and "\n#print axioms" not in c["text"] for c in compiled)
    assert all("namespace Foo\nopen Classical\n" in c["text"] for c in asked)


def test_a_module_file_left_in_place_is_refused_by_lean(tmp_path: Path, fake_lean: Path) -> None:
    """What made such files `baseline_failed` before: Lean's refusal, as the fake prints it."""
    import subprocess

    src = tmp_path / "M.lean"
    src.write_text("module\n\ntheorem t : True := trivial\n\n#print axioms t\n")
    out = subprocess.run(["lean", "--json", str(src)], capture_output=True, text=True, check=False)
    messages = [json.loads(line) for line in out.stdout.splitlines()]
    assert [m["data"] for m in messages] == [
        "cannot use `#print axioms` in a `module`; consider temporarily removing the `module` header "
        "or placing the command in a separate file"
    ]
    assert out.returncode == 1


def test_choice_under_open_classical_is_lean_s_own_axiom(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lean versions that print axioms with `MessageData.ofConstName` shorten them by the file's
    `open`s: `Classical.choice` is `choice` under `open Classical` (it was `custom_axiom`)."""
    monkeypatch.setenv("FAKE_LEAN_AXIOM_NAMES", "short")
    source = BLUEPRINT.replace("import Repo.Defs\n", "import Repo.Defs\n\nopen Classical\n")
    rules(
        monkeypatch,
        {"contains": "  by_contra h\n", "messages": [], "axioms": ["propext", "Classical.choice"]},
    )
    res = _check(tmp_path, monkeypatch, source, "by_contra h", start_line=9, end_line=9)
    assert (res.outcome, res.subkind) == ("closed", None), res.detail
    printed = [c for c in _lean_calls(fake_lean) if "by_contra h" in c["text"]]
    assert printed  # the answer's copy was checked (and its report printed `choice`)


def test_a_module_file_takes_the_file_route_under_a_repl_profile(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The REPL cannot import a copy it did not compile: a module file is checked by the file
    route even where the profile says `repl` (the fake REPL here answers no request at all)."""
    session = tmp_path / "session"
    session.with_suffix(".in").write_text("")
    session.with_suffix(".expected.out").write_text("")
    profile = f'replay_method = "repl"\nrepl_command = ["{tmp_path / "bin" / "repl"}", "{session}"]\n'
    res = _check(
        tmp_path,
        monkeypatch,
        MODULE,
        "exact helper p q hp hq",
        profile,
        start_line=MODULE_LINE,
        end_line=MODULE_LINE,
    )
    assert (res.outcome, res.subkind) == ("closed", "inherited_sorry"), res.detail
    assert any("-o" in c["argv"] for c in _lean_calls(fake_lean))


def test_over_the_repl_the_owed_question_runs_in_the_prefix_environment(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a REPL the unpatched file is asked about the target's names as one more command in
    the imports' environment (the fake REPL answers only this exact sequence); Lean's report
    on `helper` (at its `#print`, sorryAx) makes the answer's sorryAx inherited."""
    from pytest_lsrb.tactic.lean.declaration import referenced_names
    from pytest_lsrb.tactic.lean.patch import make_baseline, make_patched, owed_probe

    base = make_baseline(BLUEPRINT, (TARGET_LINE, 2), (TARGET_LINE, 7))
    assert base is not None and base.probe is not None
    cut = base.prefix_lines

    def body(text: str) -> str:
        return "\n".join(text.split("\n")[cut:])

    probe = base.probe.line - cut

    def info(data: str, column: int = 0) -> dict[str, Any]:
        where = {"pos": {"line": probe, "column": column}, "endPos": {"line": probe, "column": column + 6}}
        return {"severity": "info", **where, "data": data}

    answer = "exact helper p q hp hq"
    patched = make_patched(base, answer)
    excluded = frozenset({"t", "lsrb_target", "lsrb_hole"})
    names = referenced_names(answer, patched.target_text, exclude=excluded)
    owed_text = owed_probe(base, names)
    assert owed_text is not None and "helper" in names
    owed_line = owed_text.split("\n")[base.probe.line - 1]
    # Lean places each report at its own `#print` token
    column = {n: owed_line.index(f"#print axioms {n}") for n in names}
    helper_at = column["helper"]
    unknown = [{**info(f"unknown constant '{n}'", column[n]), "severity": "error"} for n in ("hp", "hq")]
    # the prefix (imports and `helper`, with its sorry) runs once; the target's sorry is on the
    # body's line 2
    sorry_here = {
        "proofState": 0,
        "pos": {"line": 2, "column": 2},
        "endPos": {"line": 2, "column": 7},
        "goal": "⊢ p",
    }
    exchanges = [
        ({"cmd": "\n".join(base.text.split("\n")[:cut])}, {"env": 0}),
        (
            {"cmd": body(base.text), "env": 0},
            {"env": 1, "sorries": [sorry_here], "messages": [info("'t' depends on axioms: [sorryAx]")]},
        ),
        (
            {"cmd": body(patched.text), "env": 0},
            {"env": 2, "messages": [info("'t' depends on axioms: [sorryAx]")]},
        ),
        (
            {"cmd": body(owed_text), "env": 0},
            {"env": 3, "messages": [info("'helper' depends on axioms: [sorryAx]", helper_at), *unknown]},
        ),
    ]
    session = tmp_path / "session"
    session.with_suffix(".in").write_text(
        "\n\n".join(json.dumps(q, ensure_ascii=False) for q, _ in exchanges) + "\n\n"
    )
    session.with_suffix(".expected.out").write_text(
        "\n\n".join(json.dumps(r, ensure_ascii=False) for _, r in exchanges) + "\n\n"
    )
    profile = f'replay_method = "repl"\nrepl_command = ["{tmp_path / "bin" / "repl"}", "{session}"]\n'
    res = _check(
        tmp_path, monkeypatch, BLUEPRINT, "exact helper p q hp hq", profile, start_column=2, end_column=7
    )
    assert (res.outcome, res.subkind) == ("closed", "inherited_sorry"), res.detail
