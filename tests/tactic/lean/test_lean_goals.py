"""The goal parser and restatement: unit cases for each feature, and all 291 real SorryDB goals."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.lean.goal import GoalParseError, Restatement, Unrestatable, parse_goal, restate
from pytest_lsrb.tactic.lean.script import choose_header, command_token, control_script, tactic_script


def restated(text: str) -> Restatement:
    r = restate(text)
    assert isinstance(r, Restatement), r
    return r


def test_grouped_binders_case_tag_and_wrapped_types() -> None:
    goal = parse_goal("case h\nx y : ℕ\nh :\n  ∀ (i : ℕ),\n    x + i = y\n⊢ x = y")
    assert goal.case_tag == "h"
    assert [(h.names, h.type) for h in goal.hypotheses] == [
        (("x", "y"), "ℕ"),
        (("h",), "∀ (i : ℕ), x + i = y"),
    ]
    text = "\n".join(restated("x y : ℕ\n⊢ x = y").example_lines(["sorry"]))
    assert text == "example\n    (x y : ℕ) :\n    x = y := by\n  sorry"


def test_instances_and_inaccessible_names_are_quoted_consistently() -> None:
    r = restated("α : Type u_1\ninst✝¹ : DecidableEq α\nh✝ : α\n⊢ @Foo α inst✝¹ h✝")
    assert r.universes == ("u_1",)
    assert r.binders == ("(α : Type u_1)", "[«inst✝¹» : DecidableEq α]", "(«h✝» : α)")
    assert r.statement == "@Foo α «inst✝¹» «h✝»"


def test_let_bound_hypotheses_move_into_the_statement_and_are_introduced() -> None:
    r = restated("x : ℕ\nδ : ℕ := x + 1\nh : δ > 0\n⊢ δ ≠ 0")
    assert r.binders == ("(x : ℕ)",)
    assert r.statement.split("\n    ") == ["let δ : ℕ := x + 1", "∀ (h : δ > 0),", "δ ≠ 0"]
    assert r.intros == ("δ", "h")


def test_universes_from_sort_max_and_explicit_levels() -> None:
    r = restated("α : Sort (max u v)\nC : Type w\ninst : Category.{v', w} C\n⊢ True")
    assert set(r.universes) == {"u", "v", "w", "v'"}
    assert control_script(r, "core").text.splitlines()[1].startswith("universe ")


def test_wrapped_target_keeps_its_shape() -> None:
    r = restated("⊢ f\n      (g x) =\n    h")
    assert r.statement == "f\n        (g x) =\n      h"


def test_unrestatable_goals_say_why() -> None:
    cases = {
        "x : ℕ\n⊢ f ⋯ = 0": "⋯",
        "⊢ ?m.12 = 0": "metavariable",
        "R : Type ?u.194\n⊢ True": "metavariable",
        "⊢ p\n\ncase b\n⊢ q": "several goals",
        "⊢ p\n⊢ q": "several goals",
        "⊢ sorry ↔ p": "sorry",
        "n : ℕ\n⊢ failed to pretty print expression (use 'set_option pp.rawOnError true')": "pretty-print",
        "inst✝ : A\n⊢ Foo.bar✝ inst✝ = 0": "inaccessible constant",
        "just some text": "hypothesis",
    }
    for text, why in cases.items():
        r = restate(text)
        assert isinstance(r, Unrestatable), text
        assert why in r.reason, (text, r.reason)


def test_scripts_put_the_tactic_where_the_span_says() -> None:
    r = restated("n : Nat\n⊢ n + 0 = n")
    script = tactic_script(r, "mathlib", "simp")
    lines = script.text.split("\n")
    (line, col), (eline, ecol) = script.proof_span
    assert lines[line - 1][col:ecol] == "simp" and line == eline
    assert lines[:2] == ["import Mathlib", "set_option autoImplicit false"]
    assert script.header_lines == 1 and script.body.startswith("set_option")
    assert control_script(r, "core").text.count("sorry") == 1


def test_header_choice_and_command_guard() -> None:
    assert choose_header("auto", "n : Nat\n⊢ n = n") == "core"
    assert choose_header("auto", "n : ℕ\n⊢ n = n") == "mathlib"
    assert choose_header("core", "n : ℕ\n⊢ n = n") == "core"
    assert command_token("exact h #eval IO.println 1") == "#eval"
    assert command_token("simp; theorem x : False := sorry") == "theorem"
    assert command_token("exact #[1, 2].size_pos") is None
    assert command_token("simp [def_eq]") is None
    # Mathlib's `#s` (Finset.card) and `#α` (Cardinal.mk) are notation, not commands
    assert command_token("exact #s.card_pos") is None
    assert command_token("simp [Finset.card_pos] at #α") is None
    assert command_token("exact h #exit") == "#exit"
    assert command_token("exact h #eval! 1") == "#eval!"
    # meta code in a tactic line: it can admit the goal or run IO
    assert command_token("run_tac Lean.Elab.admitGoal (← Lean.Elab.Tactic.getMainGoal)") == "run_tac"


def test_all_sorrydb_goals_restate_or_say_why(sorrydb_path: Path) -> None:
    sorries = json.loads(sorrydb_path.read_text(encoding="utf-8"))["sorries"]
    assert len(sorries) == 291
    reasons: Counter[str] = Counter()
    restated_count = 0
    for record in sorries:
        goal = record["debug_info"]["goal"]
        r = restate(goal)
        if isinstance(r, Unrestatable):
            assert r.reason
            reasons[r.reason.split(" (")[0]] += 1
            continue
        restated_count += 1
        script = control_script(r, "mathlib")
        lines = script.text.split("\n")
        assert script.probe is not None and lines[script.probe.line - 1] == "#print axioms lsrb_goal"
        assert lines[script.proof_span[0][0] - 1] == "  sorry" and sum("sorry" in x for x in lines) == 1
        unquoted = re.sub(r"«[^»]*»", "", " ".join([r.statement, *r.binders]))
        assert "✝" not in unquoted
    share = restated_count / len(sorries)
    print(
        f"\nSorryDB sample: {restated_count}/{len(sorries)} goals restated ({share:.1%}); "
        f"skipped: {dict(reasons.most_common())}"
    )
    assert share > 0.7
    assert reasons["the goal elides a term as ⋯"] > 0 and reasons["the goal contains sorry"] > 0


# -- one parser, read strictly (restating) or leniently (the mock baseline, the goal slices) --


def test_the_lenient_reading_takes_what_it_can_of_any_text() -> None:
    """The baseline and the slices read users' goal texts: several goals, stray lines and no
    target at all give a reading, never an error."""
    several = parse_goal("a b : ℕ\nh : a = b\n⊢ p\n\ncase b\n⊢ q", lenient=True)
    assert several.names == ["a", "b", "h"] and several.target == "p case b q"
    assert parse_goal("just some text", lenient=True) == parse_goal("⊢", lenient=True)
    assert parse_goal("  dangling\nx : T\n⊢ x = x", lenient=True).names == ["x"]
    let = parse_goal("case h\ns : Set α := {x | p x}\n⊢ s = s", lenient=True)
    assert (
        let.case_tag == "h" and let.hypotheses[0].type == "Set α" and let.hypotheses[0].value == "{x | p x}"
    )


@given(
    st.text(max_size=80)
    | st.lists(st.sampled_from(["⊢ p", "h :", "  a", "x y : T", "", "case c"])).map("\n".join)
)
def test_the_lenient_reading_never_raises_and_agrees_where_the_strict_one_reads(text: str) -> None:
    lenient = parse_goal(text, lenient=True)
    try:
        strict = parse_goal(text)
    except GoalParseError:
        return
    assert strict == lenient


def test_both_readings_agree_on_every_real_goal(sorrydb_path: Path) -> None:
    for record in json.loads(sorrydb_path.read_text(encoding="utf-8"))["sorries"]:
        goal = record["debug_info"]["goal"]
        assert parse_goal(goal) == parse_goal(goal, lenient=True)
