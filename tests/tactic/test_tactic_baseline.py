"""The mock tactic baseline: what it proposes for goal shapes, and that it stays well-behaved on
real goals from SorryDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.tactic.answer import read_tactic
from pytest_lsrb.tactic.baseline import candidate_tactics, hypotheses_and_target, mock_tactic_answer

SHAPES = [
    # (goal, a tactic that must be proposed, the one that must come first or None)
    ("p q : Prop\nhp : p\nhq : q\n⊢ p", "exact hp", "exact hp"),
    ("p q : Prop\nhp : p\nhpq : p → q\n⊢ q", "exact hpq hp", "exact hpq hp"),
    ("p q : Prop\nhpq : p → q\n⊢ q", "apply hpq", "apply hpq"),
    ("p q : Prop\nh : p ↔ q\nhq : q\n⊢ p", "exact h.mpr hq", "exact h.mpr hq"),
    ("p q : Prop\nh : p ↔ q\nhp : p\n⊢ q", "exact h.mp hp", "exact h.mp hp"),
    ("p : Prop\nhp : p\nhnp : ¬p\n⊢ False", "exact hnp hp", "exact hnp hp"),
    ("p : Prop\nh : False\n⊢ p", "exact h.elim", "exact h.elim"),
    ("p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", "exact ⟨hp, hq⟩", "exact ⟨hp, hq⟩"),
    ("p q : Prop\nhq : q\n⊢ p ∨ q", "exact Or.inr hq", "exact Or.inr hq"),
    ("f : Nat → Nat\nh : ∀ (n : Nat), f n = n\n⊢ f 3 = 3", "exact h 3", "exact h 3"),
    ("f : Nat → Nat\nh : ∀ (n : Nat), f n = n\n⊢ f (a + 1) = a + 1", "exact h (a + 1)", None),
    ("n : Nat\nh : ∃ k, n = 2 * k\n⊢ n % 2 = 0", "obtain ⟨k, hk⟩ := h", "obtain ⟨k, hk⟩ := h"),
    ("p q : Prop\nh : p ∨ q\n⊢ q ∨ p", "rcases h with h | h", "rcases h with h | h"),
    ("a b : Nat\nh : a = b\n⊢ a + 1 = b + 1", "subst h", "subst h"),
    ("⊢ ∀ (a b : Nat), a + b = b + a", "intro a b", "intro a b"),
    ("α : Type u\nP : α → Prop\n⊢ ∀ (x : α), P x → P x", "intro x", "intro x"),
    ("p q : Prop\n⊢ p → q → p", "intro h", "intro h"),
    ("p : Prop\nh : p\n⊢ ¬¬p", "intro h'", "intro h'"),
    ("p q : Prop\n⊢ ¬(p ∧ q) → True", "intro h", None),
    ("p : Prop\ninst✝ : Decidable p\n⊢ p ∨ ¬p", "by_cases h : p", "exact Decidable.em p"),
    ("α : Type u\ninst✝ : Inhabited α\n⊢ ∃ x, x = default", "exists default", "exists default"),
    ("a b : Nat\n⊢ a * b = b * a", "rw [Nat.mul_comm]", "rw [Nat.mul_comm]"),
    ("a b : Int\n⊢ a + b = b + a", "rw [Int.add_comm]", "rw [Int.add_comm]"),
    ("a b : Nat\nh : a < b\n⊢ a ≤ b", "omega", "omega"),
    ("⊢ [1, 2, 3].length = 3", "decide", None),
    ("p : Prop\n⊢ p ↔ p", "exact Iff.rfl", "exact Iff.rfl"),
    ("⊢ True", "trivial", "trivial"),
]


@pytest.mark.parametrize(("goal", "wanted", "first"), SHAPES, ids=[s[1] for s in SHAPES])
def test_the_shape_of_the_goal_picks_the_tactic(goal: str, wanted: str, first: str | None) -> None:
    cands = candidate_tactics(goal)
    assert wanted in cands
    if first is not None:
        assert cands[0] == first


@pytest.mark.parametrize(
    ("goal", "absent"),
    [
        ("l : List Nat\n⊢ List.map id l = l", "omega"),  # a list equation is not arithmetic
        ("f : Nat → Nat\n⊢ f 3 = 3", "omega"),  # nor is an unknown function
        ("α : Type u\ninst✝ : DecidableEq α\na : α\n⊢ (if a = a then 1 else 0) = 1", "omega"),
        ("a b : Nat\n⊢ a + b = b + a", "decide"),  # decide cannot see through variables
        ("a b : Nat\n⊢ a = b ↔ b = a", "rfl"),  # an iff between different sides is not rfl
    ],
)
def test_the_baseline_does_not_propose_what_cannot_work(goal: str, absent: str) -> None:
    assert absent not in candidate_tactics(goal)


def test_instance_hypotheses_are_never_named_and_never_used_as_facts() -> None:
    goal = "α : Type u_1\ninst✝¹ : BEq α\ninst✝ : LawfulBEq α\na : α\n⊢ (a == a) = true"
    cands = candidate_tactics(goal)
    assert cands and not any("✝" in c for c in cands)
    assert "simp_all" not in cands  # no propositional hypothesis here
    # A hypothesis only reachable by an inaccessible name is used through `assumption`.
    assert candidate_tactics("p : Prop\nh✝ : p\n⊢ p")[0] == "assumption"
    # An inaccessible variable still counts for arithmetic.
    assert "omega" in candidate_tactics("x✝ : Nat\n⊢ x✝ + 0 = x✝")


def test_the_goal_is_read_with_its_instances_and_wrapped_lines() -> None:
    hyps, target = hypotheses_and_target("α : Type u\ninst✝ : DecidableEq α\nh :\n  a =\n    b\n⊢ a =\n    b")
    assert hyps == [("α", "Type u"), ("inst✝", "DecidableEq α"), ("h", "a = b")]
    assert target == "a = b"
    # The wrapped hypothesis is a fact the baseline can use.
    assert candidate_tactics("a b : Nat\nh :\n  a =\n    b\n⊢ a = b")[0] == "exact h"


def test_real_sorrydb_goals_get_valid_answers_without_inaccessible_names() -> None:
    data = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    sample = data / "sorrydb" / "SorryDB_2601_sample.json"
    if not sample.is_file():
        pytest.skip(f"the SorryDB sample is not present at {sample}")
    goals = [rec["debug_info"]["goal"] for rec in json.loads(sample.read_text("utf-8"))["sorries"]]
    answers = set()
    for goal in goals:
        cands = candidate_tactics(goal)
        assert cands and not any("✝" in c or "\n" in c for c in cands), (goal, cands)
        for seed in range(3):
            answer = read_tactic(mock_tactic_answer(goal, seed))
            assert answer.valid, (goal, answer)
            answers.add(answer.tactic)
    assert len(answers) >= 10


@pytest.mark.parametrize(
    ("goal", "wanted", "absent"),
    [
        # ¬ binds tighter than ∧: this is a conjunction, not a negation.
        ("A B C : Prop\n⊢ ¬A ∧ B ∧ C", "constructor", "rintro ⟨h₁, h₂⟩"),
        # ↔ is looser than ∨ and ∧: these hypotheses are iffs, not a disjunction or a conjunction.
        ("A B C : Prop\nh : B ↔ A ∨ C\nhb : B\n⊢ A ∨ C", "exact h.mp hb", "rcases h with h | h"),
        ("A C : Prop\nh : A ↔ (¬A ∧ ¬C) ∧ ¬C\n⊢ ¬A", "intro h'", "obtain ⟨h₁, h₂⟩ := h"),
        # An implication whose conclusion is a conjunction is still an implication.
        ("p q : Prop\n⊢ p → q ∧ p", "intro h", "constructor"),
        # `∃ r, f r = x ∧ p r` does not close by `rfl` alone.
        ("f : Nat → Nat\n⊢ ∃ r, f r = 0 ∧ r > 0", "refine ⟨?_, ?_⟩", "exact ⟨_, rfl⟩"),
        # A goal that mentions `sorry` never makes the baseline write one.
        ("⊢ sorry ∨ ¬sorry", "left", "exact Decidable.em sorry"),
    ],
)
def test_connective_precedence_is_lean_s(goal: str, wanted: str, absent: str) -> None:
    cands = candidate_tactics(goal)
    assert wanted in cands and absent not in cands


def _reference_answer(goal_text: str, seed: int) -> str:
    """mock_tactic_answer as first written: a fresh Random(seed) and the weights 1/rank."""
    import random

    rng = random.Random(seed)
    cands = tuple(candidate_tactics(goal_text))
    tactic = rng.choices(cands, weights=[1.0 / (i + 1) for i in range(len(cands))], k=1)[0]
    style = rng.random()
    if style < 0.15:
        return f"```lean\n{tactic}\n```"
    if style < 0.25:
        return f"The next tactic is:\n{tactic}"
    return tactic


_GOALS = st.sampled_from([goal for goal, _, _ in SHAPES]) | st.text(max_size=60)


@given(goal=_GOALS, seed=st.integers(min_value=0, max_value=2**63 - 1))
@example(goal="p q : Prop\nhp : p\nhq : q\n⊢ p", seed=0)
def test_the_mock_answer_draws_as_a_fresh_generator_would(goal: str, seed: int) -> None:
    # The generator is reused per thread and the running sums of the weights are cached: the
    # answer must stay what a new Random(seed) with the weights 1/rank gives (records unchanged).
    assert mock_tactic_answer(goal, seed) == _reference_answer(goal, seed)
