"""A target declaration that keeps other sorries: they stand in as an axiom, so a sorry the answer
brings (a lemma proved by sorry, `stop`, `apply?`) shows in the target's axioms in file mode too.
Unit checks on the copies (lean/patch.py), then repo_replay against the fake `lake lean`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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
    # one baseline, one answer, and where sorryAx shows, one run asking the unpatched file what the
    # names in the target owe (lemma_admitted_upstream is no declaration there: the answer's)
    owed = outcome[1] == "sorry_axiom"
    assert len([f for f in files if f["argv"] != ["--version"]]) == 2 + owed


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


def test_over_the_repl_a_lemma_proved_by_sorry_is_seen_despite_the_target_s_other_sorries(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SorryDB's own check (diff the REPL's sorry lists) cannot see a sorry that comes from another
    declaration, and with other sorries in the target `sorryAx` was expected. With the stand-ins
    the REPL's prefix holds the axiom, and `sorryAx` in the target's report is the answer's. The
    fake REPL answers only this sequence: one prefix elaboration for the baseline and both answers."""
    base = make_baseline(KEEPS, (ROW_LINE, ROW_COL), (ROW_LINE, ROW_COL + 5))
    assert base is not None and base.probe is not None
    cut = base.prefix_lines
    prefix = "\n".join(base.text.split("\n")[:cut])
    assert prefix.endswith(STAND_IN_AXIOM + "\n") and prefix.startswith("import Repo.Defs\n")

    def body(text: str) -> str:
        return "\n".join(text.split("\n")[cut:])

    probe = base.probe.line - cut
    at_probe = {"pos": {"line": probe, "column": 0}, "endPos": {"line": probe, "column": 13}}

    def report(*axioms: str) -> dict[str, Any]:
        return {"severity": "info", **at_probe, "data": f"'t' depends on axioms: [{', '.join(axioms)}]"}

    row_in_body = (base.span[0][0] - cut, base.span[0][1])
    sorry_here = {
        "proofState": 0,
        "pos": {"line": row_in_body[0], "column": row_in_body[1]},
        "endPos": {"line": row_in_body[0], "column": row_in_body[1] + 5},
        "goal": "p q : Prop\nhp : p\nhq : q\n⊢ p",
    }
    warning = {
        "severity": "warning",
        "pos": {"line": 1, "column": 8},
        "endPos": {"line": 1, "column": 9},
        "data": "declaration uses `sorry`",
    }
    other = {**warning, "pos": {"line": 3, "column": 8}, "endPos": {"line": 3, "column": 13}}
    exchanges = [
        ({"cmd": prefix}, {"env": 0, "messages": [other]}),
        (
            {"cmd": body(base.text), "env": 0},
            {"env": 1, "sorries": [sorry_here], "messages": [warning, report(STAND_IN, "sorryAx")]},
        ),
        (
            {"cmd": body(make_patched(base, "exact hp").text), "env": 0},
            {"env": 2, "messages": [report(STAND_IN)]},
        ),
        (
            {"cmd": body(make_patched(base, "exact admitted_upstream hp").text), "env": 0},
            {"env": 3, "messages": [report(STAND_IN, "sorryAx")]},
        ),
    ]
    session = tmp_path / "session"
    session.with_suffix(".in").write_text(
        "\n\n".join(json.dumps(q, ensure_ascii=False) for q, _ in exchanges) + "\n\n"
    )
    session.with_suffix(".expected.out").write_text(
        "\n\n".join(json.dumps(r, ensure_ascii=False) for _, r in exchanges) + "\n\n"
    )
    v = _replay_with(
        tmp_path,
        monkeypatch,
        KEEPS,
        f'replay_method = "repl"\nrepl_command = ["{tmp_path / "bin" / "repl"}", "{session}"]\n',
    )
    try:
        r = row(start_line=ROW_LINE, start_column=ROW_COL, end_line=ROW_LINE, end_column=ROW_COL + 5)
        results = [v.check(r, t, v.profile_for(r)) for t in ("exact hp", "exact admitted_upstream hp")]
    finally:
        v.close()
    assert [(x.outcome, x.subkind) for x in results] == [("closed", None), ("lean_error", "sorry_axiom")], [
        x.detail for x in results
    ]


@settings(max_examples=60)
@given(
    pieces=st.lists(
        st.sampled_from(["sorry", "h", "sorry", "-- sorry", "⟨sorry, h⟩"]), min_size=1, max_size=6
    ),
    which=st.integers(min_value=0, max_value=20),
)
def test_the_span_always_lands_on_its_sorry_whatever_stands_in_around_it(
    pieces: list[str], which: int
) -> None:
    """Sorries before the row's on its line, after it, and on other lines: the instrumented copy's
    span still holds exactly `sorry`, every other sorry outside comments is the stand-in, and
    the axiom is declared once."""
    body = [
        f"  have h{i} : True := by exact {p}" if not p.startswith("--") else f"  {p}"
        for i, p in enumerate(pieces)
    ]
    line = "  exact ⟨" + ", ".join(["sorry"] * (len(pieces) + 1)) + "⟩"
    source = "\n".join([TARGET, *body, line, ""])
    cols = [i for i in range(len(line)) if line.startswith("sorry", i)]
    col = cols[which % len(cols)]
    row_line = len(body) + 2
    base = make_baseline(source, (row_line, col), (row_line, col + 5))
    assert base is not None
    assert span_text(base.text, *base.span) == "sorry"
    code_sorries = sum(p.count("sorry") for p in pieces if not p.startswith("--")) + len(cols) - 1
    assert base.stand_ins == code_sorries
    assert base.text.count(STAND_IN_AXIOM) == 1
    assert base.text.count(STAND_IN) == code_sorries + 1  # the axiom names it once more
