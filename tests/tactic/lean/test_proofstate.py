"""Proof-state steps (lean/proofstate.py) read from the real REPL's recorded replies, what a step
decides about an answer, and when a sorry is the only tactic of its block."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_lsrb.tactic.lean.proofstate import (
    screen_verdict,
    sorry_stands_alone,
    step_from_reply,
    tactic_request,
)
from pytest_lsrb.tactic.lean.repl import read_transcript


def replies(transcripts: Path, name: str) -> list[dict[str, object]]:
    return read_transcript(transcripts / f"{name}.expected.out")


def test_steps_of_the_real_repl(transcripts: Path) -> None:
    _, open_goals, _, done = replies(transcripts, "proof_step")
    step = step_from_reply(open_goals)
    assert (step.proof_state, step.goals, step.closes) == (1, ("⊢ Int",), False)
    assert screen_verdict(step) is not None and screen_verdict(step).outcome == "progress"  # type: ignore[union-attr]
    finished = step_from_reply(done)
    assert finished.closes and finished.status == "Completed"
    assert screen_verdict(finished) is None  # "Completed" is no verdict: the file decides

    branching = [step_from_reply(r) for r in replies(transcripts, "proof_branching")[1:]]
    assert [len(s.goals) for s in branching] == [2, 1, 1, 0]


def test_an_error_on_the_state_is_the_answer_s(transcripts: Path) -> None:
    # error recovery: no goal left, status "contains sorry", the error in messages
    recovered = step_from_reply(replies(transcripts, "invalid_tactic")[1])
    assert not recovered.closes and recovered.goals == ()
    verdict = screen_verdict(recovered)
    assert verdict is not None and (verdict.outcome, verdict.subkind) == ("lean_error", "unknown_identifier")
    # a tactic that does not parse: the REPL's `Lean error:` refusal
    unparsed = screen_verdict(step_from_reply(replies(transcripts, "unknown_tactic")[1]))
    assert unparsed is not None and (unparsed.outcome, unparsed.subkind) == ("lean_error", "parse")


def test_an_unknown_state_is_not_the_answer_s(transcripts: Path) -> None:
    step = step_from_reply(replies(transcripts, "unknown_proof_state")[1])
    assert step.refused == "Unknown proof state." and screen_verdict(step) is None


def test_a_block_answer_keeps_its_relative_layout() -> None:
    assert tactic_request("  constructor\n  · exact hp\n  · exact hq", 3) == {
        "tactic": "constructor\n· exact hp\n· exact hq",
        "proofState": 3,
    }


@pytest.mark.parametrize(
    ("text", "span", "alone"),
    [
        ("theorem t : A := by\n  sorry\n\n#print axioms t\n", ((2, 2), (2, 7)), True),
        ("theorem t : A := by sorry\n", ((1, 20), (1, 25)), True),
        ("theorem t : A := by  -- why\n  sorry\n", ((2, 2), (2, 7)), True),
        ("theorem t : A ∧ B := by\n  constructor\n  · sorry\n  · exact hb\n", ((3, 4), (3, 9)), True),
        ("theorem t : A := by\n  have h : B := by sorry\n  exact h\n", ((2, 19), (2, 24)), True),
        (
            "theorem t : A := by\n  cases h with\n  | inl x => sorry\n  | inr y => simp\n",
            ((3, 13), (3, 18)),
            True,
        ),
        ("theorem t : A := ⟨by sorry, h⟩\n", ((1, 21), (1, 26)), True),
        # the block holds other tactics: the goals an answer leaves go to them
        ("theorem t : A ∧ B := by\n  constructor\n  sorry\n  exact hb\n", ((3, 2), (3, 7)), False),
        ("theorem t : A := by\n  sorry\n  done\n", ((2, 2), (2, 7)), False),
        ("theorem t : A := by\n  constructor <;> sorry\n", ((2, 18), (2, 23)), False),
        ("theorem t : A := by sorry; simp\n", ((1, 20), (1, 25)), False),
        # term position: no tactic block
        ("theorem t : A := sorry\n", ((1, 17), (1, 22)), False),
    ],
)
def test_when_a_sorry_stands_alone(
    text: str, span: tuple[tuple[int, int], tuple[int, int]], alone: bool
) -> None:
    assert text.split("\n")[span[0][0] - 1][span[0][1] : span[1][1]] == "sorry"
    assert sorry_stands_alone(text, *span) is alone


def test_an_answer_s_span_ends_at_its_last_code() -> None:
    """Lean's ranges end at a syntax's last token: the `unsolved goals` of the block holding an
    answer does not reach the comment lines after it, so the answer's span must not either."""
    from pytest_lsrb.tactic.lean.splice import code_span

    text = "theorem t : A := by\n  constructor -- split\n  -- done\n\n#print axioms t\n"
    assert code_span(text, ((2, 2), (3, 9))) == ((2, 2), (2, 13))
    assert code_span(text, ((2, 2), (2, 13))) == ((2, 2), (2, 13))
    assert code_span("  /- only -/ \n", ((1, 2), (1, 12))) == ((1, 2), (1, 12))  # no code: unchanged
