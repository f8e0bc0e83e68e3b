"""The token guard (tactic/guard.py): what an answer may not hold, decided before Lean runs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.guard import contains_forbidden, one_tactic, refuse
from pytest_lsrb.tactic.lean.options import CEILINGS, UNLIMITED_AT_ZERO


@pytest.mark.parametrize(
    "answer",
    [
        "sorry",
        "admit",
        "exact sorryAx _ false",
        "exact @sorryAx _ false",
        "exact _root_.sorryAx _ false",  # passed the old guard (issue #29)
        "exact «sorryAx» _ false",
        "exact @_root_.«sorryAx» _ false",
        "exact (_root_.sorryAx (1 = 2) true)",
        "refine ⟨?_, sorry⟩",
        "have h : P := by\n  sorry",
    ],
)
def test_every_spelling_of_sorry_is_caught(answer: str) -> None:
    assert contains_forbidden(answer)
    refusal = refuse(answer)
    assert refusal is not None and refusal.subkind == "sorry", answer


@pytest.mark.parametrize(
    "answer",
    ["exact foo.sorry_lemma", "exact h.admit'", "exact not_sorry", "exact «sorry_free» x", "simp [Sorry.x]"],
)
def test_other_names_that_contain_sorry_are_not_sorry(answer: str) -> None:
    assert not contains_forbidden(answer)
    assert refuse(answer) is None


def test_stop_is_refused_but_is_not_contains_sorry() -> None:
    """`stop tacs` is `repeat sorry`: refused; the record's contains_sorry keeps to the card's three."""
    assert not contains_forbidden("stop simp")
    refusal = refuse("stop simp")
    assert refusal is not None and refusal.subkind == "sorry"


@pytest.mark.parametrize(
    "answer",
    [
        # the kernel bypass: closes a false goal with a clean `#print axioms` (issue #29)
        "set_option debug.skipKernelTC true in exact (by decide +kernel : False).elim",
        "set_option maxHeartbeats 0 in\n  repeat simp",
        "set_option maxRecDepth 1000000 in decide",
        "set_option trace.Meta.synthInstance true in simp",
        "set_option synthInstance.maxHeartbeats 0 in infer_instance",
        "set_option debug.byAsSorry true in exact foo",
        "set_option «debug».skipKernelTC true in decide",
        "· set_option maxHeartbeats 0 in nlinarith",
        "exact (by set_option debug.skipKernelTC true in decide)",
        "simp\nset_option maxHeartbeats 1000",  # not a `... in` tactic: a command
        # a budget that never runs out is "no limit" by another name (issue #47)
        "set_option maxHeartbeats 100000000000 in\n  repeat simp",
        "set_option maxHeartbeats 4000001 in simp",
        "set_option synthInstance.maxHeartbeats 99999999 in infer_instance",
        "set_option maxHeartbeats 0x0 in simp",  # Lean's numerals: 0x0 is 0
        "set_option maxHeartbeats 0xFFFFFFFF in simp",
        "set_option maxRecDepth 0b11111111111111111111 in decide",
    ],
)
def test_options_on_the_deny_list_are_refused(answer: str) -> None:
    refusal = refuse(answer, proof=True)
    assert refusal is not None and refusal.subkind == "option", answer


@pytest.mark.parametrize(
    "answer",
    [
        "set_option maxRecDepth 2000 in simp",  # ordinary Mathlib style (issue #41)
        "set_option maxRecDepth 100000 in decide",
        "set_option maxHeartbeats 400000 in\n  nlinarith [sq_nonneg (a - b)]",
        "set_option linter.unusedVariables false in norm_num",
        "set_option pp.all true in simp",
        "· set_option maxRecDepth 0 in decide",  # fails at once in Lean: the answer's own error
        "set_option maxHeartbeats 4000000 in simp",  # the ceiling itself
        "set_option maxHeartbeats 3200000 in\n  nlinarith",  # seen in public repositories
        "set_option synthInstance.maxHeartbeats 1600000 in infer_instance",
    ],
)
def test_other_options_are_lean_to_judge(answer: str) -> None:
    """Until issue #41 every option was refused; Lean's own limits are ordinary tactics, and
    only the deny list (lean/options.py) changes how an answer is judged."""
    assert refuse(answer) is None, answer


@pytest.mark.parametrize(
    "answer",
    [
        "omega /- sorry -/",
        "simp -- sorry would also do",
        "/- a /- nested sorry -/ still comment -/ decide",
        'simp [show "sorry" = "sorry" from rfl]',
        "exact h' -- admit",
        "/-- doc: set_option debug.skipKernelTC true in -/ simp",
        "norm_num -- theorem foo : False := sorry",
    ],
)
def test_comments_and_strings_are_not_code(answer: str) -> None:
    assert not contains_forbidden(answer), answer
    assert refuse(answer) is None, answer


def test_an_interpolated_string_holds_code() -> None:
    refusal = refuse('exact (s!"{sorry}" = "x").elim')
    assert refusal is not None and refusal.subkind == "sorry"


@pytest.mark.parametrize(
    "answer",
    [
        'simp\nnotation "x" => 1',
        "simp\nopaque foo : Nat",
        "simp\nattribute [simp] foo",
        "namespace Foo",
        "simp\nend",
        "open Real",
        "simp\nlemma foo : True := trivial",
    ],
)
def test_every_command_keyword_is_refused(answer: str) -> None:
    """Proof mode let these through before issue #41 (the old list lacked them)."""
    refusal = refuse(answer, proof=True)
    assert refusal is not None and refusal.subkind == "command", answer


def test_open_in_is_a_tactic() -> None:
    assert refuse("open Real in simp [sqrt_eq_iff]") is None


def test_an_option_name_inside_another_name_is_not_an_option() -> None:
    assert refuse("exact my_set_option_lemma") is None


def test_search_tactics_follow_sorrydb_unless_forbidden() -> None:
    for tactic in ("exact?", "apply?", "rw?", "hint", "first | exact? | simp"):
        assert refuse(tactic) is None, tactic
        refusal = refuse(tactic, forbid_search=True)
        assert refusal is not None and refusal.subkind == "search", tactic


@pytest.mark.parametrize(
    "answer", ["simp\ntheorem t : True := trivial", "#eval 1", "run_tac pure ()", "decide\n#exit"]
)
def test_commands_are_refused(answer: str) -> None:
    refusal = refuse(answer, proof=True)
    assert refusal is not None and refusal.subkind == "command", answer


def test_a_comment_line_is_not_a_second_tactic() -> None:
    assert one_tactic("simp\n-- done")


def test_a_tactic_answer_is_one_tactic_and_a_proof_may_be_many() -> None:
    block = "have h : 0 < x := by\n  positivity"
    assert one_tactic(block) and refuse(block) is None
    two = "intro x\nsimp"
    assert not one_tactic(two)
    refusal = refuse(two)
    assert refusal is not None and refusal.subkind == "multiline"
    assert refuse(two, proof=True) is None


def test_lean_closing_an_answer_outside_the_tactic_list_passes_its_test() -> None:
    """`valid` is the check without Lean; when Lean closed the answer (a project's own macro, a
    tactic newer than tactics.py), Lean's verdict decides the test."""
    from pytest_lsrb.tactic.task import TacticTask

    task = TacticTask()
    closed = {
        "tactic": "my_macro",
        "valid": False,
        "verification_attempted": True,
        "verification_success": True,
    }
    assert task.judge(closed).outcome == "pass"
    unchecked = {"tactic": "p : Prop", "valid": False, "verification_attempted": False}
    assert task.judge(unchecked).outcome == "fail"
    forged = {"tactic": "exact _root_.sorryAx _ false", "contains_sorry": True, "verification_success": True}
    assert task.judge(forged).outcome == "fail"


def test_the_one_command_list_is_refused_word_for_word_and_is_no_tactic() -> None:
    from pytest_lsrb.tactic.lean.keywords import COMMAND_KEYWORDS, IN_TACTICS
    from pytest_lsrb.tactic.tactics import is_tactic_keyword

    for word in sorted(COMMAND_KEYWORDS - {"set_option"}):
        refusal = refuse(f"simp\n{word} foo", proof=True)
        assert refusal is not None and refusal.subkind == "command", word
        assert refuse(f"simp -- {word} foo\n/- {word} -/", proof=True) is None, word
    # the two commands that are also tactics (`open Foo in tac`, `set_option o v in tac`)
    assert {w for w in COMMAND_KEYWORDS if is_tactic_keyword(w)} == IN_TACTICS


@given(st.sampled_from(sorted(CEILINGS)), st.integers(0, 2**64))
def test_every_limit_is_bounded_by_its_one_ceiling(name: str, value: int) -> None:
    """Whatever the spelling of the number (decimal, hex, binary), an answer's limit is refused
    exactly when it is above the option's ceiling or is a heartbeat budget of 0 (no limit)."""
    unlimited = value == 0 and name in UNLIMITED_AT_ZERO
    for spelled in (str(value), hex(value), bin(value)):
        refused = refuse(f"set_option {name} {spelled} in simp") is not None
        assert refused is (value > CEILINGS[name] or unlimited), (name, spelled)
