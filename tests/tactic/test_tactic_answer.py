"""Reading the first tactic line out of model output."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.answer import contains_forbidden, first_tactic_line, read_tactic


@pytest.mark.parametrize(
    ("raw", "tactic"),
    [
        ("simp", "simp"),
        ("  omega  \n", "omega"),
        ("```lean\nintro h\nexact h\n```", "intro h"),
        ("```\nconstructor\n```\nThis splits the conjunction.", "constructor"),
        ("The next tactic is:\nrfl", "rfl"),
        ("Sure! Here is the tactic:\n\n`exact Nat.succ_le_of_lt h`", "exact Nat.succ_le_of_lt h"),
        ("Tactic: simp [Nat.add_comm]", "simp [Nat.add_comm]"),
        ("by simp", "simp"),
        ("-- a comment\nomega -- closes it", "omega"),
        ("refine ⟨?_, ?_⟩", "refine ⟨?_, ?_⟩"),
        ("· simp", "· simp"),
        ("", ""),
        ("I think we should use induction on n because the goal is recursive.", ""),
    ],
)
def test_first_tactic_line(raw: str, tactic: str) -> None:
    assert first_tactic_line(raw) == tactic


@pytest.mark.parametrize(
    ("raw", "valid", "nonempty", "sorry"),
    [
        ("simp", True, True, False),
        ("sorry", False, True, True),
        ("exact sorryAx _", False, True, True),
        ("admit", False, True, True),
        ("exact foo.sorry_lemma", True, True, False),  # a name containing 'sorry' is not sorry
        ("exact (h", False, True, False),  # unbalanced
        ("", False, False, False),
    ],
)
def test_read_tactic_flags(raw: str, valid: bool, nonempty: bool, sorry: bool) -> None:
    answer = read_tactic(raw)
    assert (answer.valid, answer.nonempty, answer.contains_sorry) == (valid, nonempty, sorry)


@given(st.text(max_size=200))
def test_extraction_never_crashes_and_keeps_one_line(raw: str) -> None:
    answer = read_tactic(raw)
    assert "\n" not in answer.tactic
    assert answer.nonempty == bool(answer.tactic)
    assert not (answer.valid and contains_forbidden(answer.tactic))
