"""A target declaration that keeps other sorries: they stand in as an axiom, so a sorry the answer
brings (a lemma proved by sorry, `stop`, `apply?`) shows in the target's axioms in file mode too.
Unit checks on the copies (lean/patch.py), then repo_replay against the fake `lake lean`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_lean_verifiers import _replay_with, row, rules

from pytest_lsrb.tactic.lean.patch import STAND_IN, STAND_IN_AXIOM, make_baseline, make_patched
from pytest_lsrb.tactic.lean.splice import span_text

TARGET = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q ∧ True := by"
KEEPS = (
    "import Repo.Defs\n\n"
    "theorem other : True := by\n  sorry\n\n"
    f"{TARGET}\n"
    "  refine ⟨?_, ?_, sorry⟩  -- a sorry in a comment stays\n"
    "  · sorry\n"
    "  · admit\n"
)
ROW_LINE, ROW_COL = 8, 4  # `  · sorry`


def test_the_target_s_other_sorries_become_the_stand_in_and_the_span_follows() -> None:
    base = make_baseline(KEEPS, (ROW_LINE, ROW_COL), (ROW_LINE, ROW_COL + 5))
    assert base is not None
    assert (base.stand_ins, base.target_keeps_sorry) == (2, False)
    lines = base.text.split("\n")
    assert lines[5:8] == [STAND_IN_AXIOM, "", TARGET]
    assert lines[8] == f"  refine ⟨?_, ?_, {STAND_IN}⟩  -- a sorry in a comment stays"  # term position
    assert lines[10] == f"  · exact {STAND_IN}"  # `admit`, a tactic
    assert lines[3] == "  sorry"  # another declaration's sorry is its own business
    assert span_text(base.text, *base.span) == "sorry" and base.span[0] == (ROW_LINE + 2, ROW_COL)
    assert base.prefix_lines == 7  # the REPL's reused prefix: the file's lines before the target, the axiom
    patched = make_patched(base, "exact hp")
    assert patched.text.split("\n")[9] == "  · exact hp"


def test_a_stand_in_before_the_span_on_its_line_moves_it() -> None:
    source = f"{TARGET}\n  exact ⟨sorry, sorry, trivial⟩\n"
    second = source.split("\n")[1].rindex("sorry")
    base = make_baseline(source, (2, second), (2, second + 5))
    assert base is not None and base.stand_ins == 1
    assert span_text(base.text, *base.span) == "sorry"
    assert base.text.split("\n")[3] == f"  exact ⟨{STAND_IN}, sorry, trivial⟩"


def test_no_stand_in_for_a_stop_block_nor_when_asked_not_to() -> None:
    source = f"{TARGET}\n  constructor\n  · sorry\n  · stop\n    simp\n"
    base = make_baseline(source, (3, 4), (3, 9))
    assert base is not None and (base.stand_ins, base.target_keeps_sorry) == (0, True)
    plain = make_baseline(KEEPS, (ROW_LINE, ROW_COL), (ROW_LINE, ROW_COL + 5), stand_ins=False)
    assert plain is not None and (plain.stand_ins, plain.target_keeps_sorry) == (0, True)
    assert STAND_IN not in plain.text


_TARGET_WARNING = {"severity": "warning", "data": "declaration uses 'sorry'", "at": "t (p q"}
# Lean's report for the instrumented baseline: the target depends on the stand-in and sorryAx
# (the replaced sorry); the other declaration keeps its own warning.
_BASE_RULES: list[dict[str, Any]] = [
    {
        "contains": "theorem other",
        "messages": [{"severity": "warning", "data": "declaration uses 'sorry'", "at": "other"}],
    },
    {"contains": "  · sorry\n", "messages": [_TARGET_WARNING], "axioms": [STAND_IN, "sorryAx"]},
]


@pytest.mark.parametrize(
    ("tactic", "rule", "outcome"),
    [
        ("exact hp", {"axioms": [STAND_IN]}, ("closed", None)),
        # no token guard sees these; before the stand-ins, sorryAx was expected here and both closed
        (
            "exact lemma_admitted_upstream hp",
            {"axioms": [STAND_IN, "sorryAx"]},
            ("lean_error", "sorry_axiom"),
        ),
        (
            "stop simp",
            {"messages": [_TARGET_WARNING], "axioms": [STAND_IN, "sorryAx"]},
            ("lean_error", "new_sorry"),
        ),
        (
            "apply?",
            {
                "messages": [
                    {"severity": "information", "data": "Try this: exact hp", "at": "apply?"},
                    _TARGET_WARNING,
                ],
                "axioms": [STAND_IN, "sorryAx"],
            },
            ("lean_error", "new_sorry"),
        ),
        ("native_decide", {"axioms": [STAND_IN, "Lean.ofReduceBool"]}, ("lean_error", "native_decide")),
    ],
)
def test_file_mode_sees_the_answer_s_sorry_in_a_target_that_keeps_others(
    tmp_path: Path,
    fake_lean: Path,
    monkeypatch: pytest.MonkeyPatch,
    tactic: str,
    rule: dict[str, Any],
    outcome: tuple[str, str | None],
) -> None:
    rules(monkeypatch, *_BASE_RULES, {"contains": f"  · {tactic}\n", "messages": [], **rule})
    v = _replay_with(tmp_path, monkeypatch, KEEPS, "")
    try:
        r = row(start_line=ROW_LINE, start_column=ROW_COL, end_line=ROW_LINE, end_column=ROW_COL + 5)
        res = v.check(r, tactic, v.profile_for(r))
    finally:
        v.close()
    assert (res.outcome, res.subkind) == outcome, res.detail
    files = [json.loads(c) for c in (fake_lean / "lean.log").read_text().splitlines()]
    assert len([f for f in files if f["argv"] != ["--version"]]) == 2  # one baseline, one answer


def test_stand_ins_that_do_not_compile_fall_back_to_the_plain_copies(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A computable `def` cannot use an axiom (Lean: `failed to compile definition, consider
    marking it as 'noncomputable'`): the baseline is checked again without stand-ins, and the
    answer is judged as before them (sorryAx expected, the target's warning tolerated)."""
    no_code = (
        "failed to compile definition, consider marking it as 'noncomputable' because it depends on "
        f"'{STAND_IN}', and it does not have executable code"
    )
    rules(
        monkeypatch,
        *_BASE_RULES,
        {"contains": "  · admit", "messages": [], "axioms": ["sorryAx"]},  # the plain copies
        {"contains": STAND_IN_AXIOM, "messages": [{"severity": "error", "data": no_code, "at": "theorem t"}]},
        {"contains": "exact hp", "messages": [_TARGET_WARNING], "axioms": ["sorryAx"]},
        {
            "contains": "exact lsrb_hole",
            "messages": [
                {"severity": "error", "data": f"unknown identifier '{STAND_IN}'", "at": "lsrb_hole"}
            ],
        },
    )
    v = _replay_with(tmp_path, monkeypatch, KEEPS, "")
    try:
        r = row(start_line=ROW_LINE, start_column=ROW_COL, end_line=ROW_LINE, end_column=ROW_COL + 5)
        closed = v.check(r, "exact hp", v.profile_for(r))
        borrowed = v.check(r, f"exact {STAND_IN}", v.profile_for(r))
    finally:
        v.close()
    assert (closed.outcome, borrowed.outcome, borrowed.subkind) == (
        "closed",
        "lean_error",
        "unknown_identifier",
    )
    runs = [json.loads(c) for c in (fake_lean / "lean.log").read_text().splitlines()]
    assert len([f for f in runs if f["argv"] != ["--version"]]) == 2 + 2  # both baselines, two answers
