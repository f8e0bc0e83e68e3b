"""Reading the first tactic line out of model output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.answer import first_tactic_line, read_answer, read_tactic
from pytest_lsrb.tactic.guard import contains_forbidden, one_tactic


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


@given(st.text(max_size=200), st.sampled_from(["tactic", "proof"]))
def test_extraction_never_crashes_and_keeps_one_tactic(raw: str, mode: str) -> None:
    """Law: a tactic answer is one tactic (later lines are its nested block), and valid answers
    hold no forbidden token."""
    answer = read_answer(raw, "proof" if mode == "proof" else "tactic")
    if mode == "tactic":
        assert one_tactic(answer.tactic), answer
    assert answer.nonempty == bool(answer.tactic.strip())
    assert not (answer.valid and contains_forbidden(answer.tactic))
    assert answer.answer_format


# The examples (#16), and what chat and reasoning models wrap around a tactic.
@pytest.mark.parametrize(
    ("raw", "tactic"),
    [
        ("<think>\nThe goal is an inequality.\n</think>\nsimp", "simp"),
        ("**Tactic:** `exact h`", "exact h"),
        ("Sure! The next tactic is `omega`.", "omega"),
        ("**Next tactic**: `rw [h]`", "rw [h]"),
        ("The goal needs arithmetic.</think>\n\nlinarith", "linarith"),  # opening tag stripped
        ("<think>I will try `simp` and then", ""),  # truncated reasoning holds no answer
        ("Here it is:\n```lean4\nnorm_num\n```", "norm_num"),
        ("```text\nnot this\n```\n```lean\nexact h\n```", "exact h"),
        ("1. `intro x`", "intro x"),
        ("exact #s.card_pos", "exact #s.card_pos"),  # Mathlib's Finset.card notation stays
        ("exact h -- uses `h`", "exact h"),
    ],
)
def test_chat_and_reasoning_formats(raw: str, tactic: str) -> None:
    assert first_tactic_line(raw) == tactic


_TACTICS = st.sampled_from(
    [
        "simp",
        "omega",
        "exact h",
        "rw [Nat.add_comm]",
        "exact #s.card_pos",
        "refine ⟨?_, ?_⟩",
        "simp only [h] at h'",
        "linarith [sq_nonneg x]",
        "apply le_of_lt",
        "norm_num",
    ]
)
_WRAPPERS = st.sampled_from(
    [
        "{t}",
        "<think>\n{noise}\n</think>\n{t}",
        "<think>{noise}</think>\n\n**Tactic:** `{t}`",
        "**Tactic:** `{t}`",
        "Sure! The next tactic is `{t}`.",
        "```lean\n{t}\n```",
        "```lean4\nimport Mathlib\nset_option maxHeartbeats 400000\nopen Real\n\n"
        "theorem lsrb (x : ℝ) : x = x := by\n  {t}\n```",
        "<think>{noise}</think>\n```lean4\ntheorem t : P := by\n  {t}\n  sorry\n```\n"
        "```lean4\ntheorem t : P := by\n  {t}\n```",
        "{noise_line}:::{t}",
        "Here is the next step:\n```lean\n{t}\n```\nIt closes the goal.",
        "Tactic: {t}",
        "- `{t}`",
    ]
)
_NOISE = st.text(st.characters(blacklist_characters="<>`", blacklist_categories=("Cs",)), max_size=80)


@given(_TACTICS, _WRAPPERS, _NOISE)
def test_wrapped_tactic_reads_back(tactic: str, wrapper: str, noise: str) -> None:
    """Law: whatever format wraps a tactic, reading gives the tactic back."""
    noise_line = noise.replace("\n", " ").replace(":::", "")
    assert first_tactic_line(wrapper.format(t=tactic, noise=noise, noise_line=noise_line)) == tactic


@given(_TACTICS, _NOISE)
def test_reasoning_never_leaks(tactic: str, noise: str) -> None:
    """Law: text inside a reasoning block is never the answer."""
    answer = read_tactic(f"<think>{noise}\nexact bogus_from_reasoning\n</think>\n{tactic}")
    assert answer.tactic == tactic and answer.valid


def test_several_samples_raise_the_default_temperature(tmp_path: Path) -> None:
    """At the suite's temperature 0, k samples of a goal are k copies of one answer."""
    from pytest_lsrb.engine.options import RunConfig
    from pytest_lsrb.engine.suite import load_suite
    from pytest_lsrb.tactic.task import SAMPLED_TEMPERATURE, TacticTask

    suite = load_suite(Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1")
    task = TacticTask()

    def configured(given: frozenset[str] = frozenset(), **values: Any) -> float:
        config = RunConfig(
            {"samples": 1, "temperature": 0.0, "verification": "none", **values},
            suite,
            tmp_path,
            from_command_line=given,
        )
        return float(task.configure(config).values["temperature"])

    assert configured() == 0.0
    assert configured(samples=4) == SAMPLED_TEMPERATURE == 0.8
    assert configured(frozenset({"temperature"}), samples=4) == 0.0  # the user's choice stands
    assert configured(samples=4, temperature=0.3) == 0.3


def test_progress_is_its_own_rate() -> None:
    from pytest_lsrb.tactic.task import TacticSummary

    summary = TacticSummary()
    for outcome, domain in [
        ("closed", None),
        ("progress", None),
        ("progress", None),
        ("lean_error", "model"),
        ("toolchain_missing", "environment"),
    ]:
        summary.add(
            {
                "verification_attempted": True,
                "verification_outcome": outcome,
                "verification_error_domain": domain,
            }
        )
    done = summary.finish()
    assert done["verification_progress_rate"] == 2 / 4  # the unjudged check is left out
    assert done["verification_outcomes"]["progress"] == 2


@pytest.mark.parametrize(
    ("raw", "mode", "read"),
    [
        # an option inside the answer is the answer's (the guard refuses it), never dropped as header
        (
            "```lean\nset_option maxRecDepth 10000 in\n  decide\n```",
            "tactic",
            "set_option maxRecDepth 10000 in\n  decide",
        ),
        (
            "```lean4\nimport Mathlib\nset_option maxHeartbeats 400000\ntheorem t : P := by\n"
            "  set_option maxHeartbeats 0 in\n    nlinarith\n```",
            "proof",
            "set_option maxHeartbeats 0 in\n  nlinarith",
        ),
    ],
)
def test_options_inside_an_answer_are_kept_for_the_guard(raw: str, mode: str, read: str) -> None:
    answer = read_answer(raw, "proof" if mode == "proof" else "tactic")
    assert answer.tactic == read


@pytest.mark.parametrize(
    ("raw", "tactic"),
    [
        # arms at the tactic's own column are its syntax (Lean's `induction ... with | ...` style)
        (
            "```lean\ninduction n with\n| zero => simp\n| succ n ih => omega\nexact h\n```",
            "induction n with\n| zero => simp\n| succ n ih => omega",
        ),
        ("```lean\nconstructor\n<;> linarith\nsimp\n```", "constructor\n<;> linarith"),
        (
            "```lean\nfirst\n  | linarith\n  | nlinarith [sq_nonneg x]\n```",
            "first\n  | linarith\n  | nlinarith [sq_nonneg x]",
        ),
        # bullets after a tactic are the next tactics
        ("```lean\nconstructor\n· exact hp\n· exact hq\n```", "constructor"),
        # a proof body written at column 0 under its header
        ("```lean4\ntheorem t (x : ℕ) : x + 0 = x := by\nsimp\nrfl\n```", "simp"),
    ],
)
def test_arms_and_continuations_belong_to_the_tactic(raw: str, tactic: str) -> None:
    answer = read_tactic(raw)
    assert answer.tactic == tactic
    assert one_tactic(answer.tactic)


def test_harmony_final_channel_is_the_answer() -> None:
    """gpt-oss's harmony format (openai/harmony: analysis channel, then the final channel), as a
    server that does not parse it returns it."""
    raw = (
        "<|channel|>analysis<|message|>Need to close a + 0 = a; try `omega`? simp works.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>simp<|return|>"
    )
    answer = read_tactic(raw)
    assert (answer.tactic, answer.answer_format) == ("simp", "final_channel+bare")


def test_an_indented_code_block_ends_where_its_indentation_does() -> None:
    raw = "The goal can be closed with:\n\n    exact h.symm\n\nDone."
    assert read_answer(raw, "proof").tactic == "exact h.symm"


@pytest.mark.parametrize(
    "raw",
    [
        "```lean4\nnamespace Foo\n\ntheorem t (x : ℕ) : x + 0 = x := by\n  simp\n  rfl\n\nend Foo\n```",
        "```lean4\ntheorem t (x : ℕ) : x + 0 = x := by\nsimp\nrfl\n\n#print axioms t\n```",
    ],
)
def test_the_proof_ends_at_the_next_command(raw: str) -> None:
    assert read_answer(raw, "proof").tactic == "simp\nrfl"


def test_a_continuation_followed_by_more_fences_is_still_the_continuation() -> None:
    """DeepSeek-Prover-V1.5 (quick_start.py's format) sometimes writes on after closing the fence."""
    raw = "  nlinarith [sq_nonneg (a - b)]\n```\n\nAnother attempt:\n```\n\n```"
    answer = read_tactic(raw)
    assert (answer.tactic, answer.answer_format) == ("nlinarith [sq_nonneg (a - b)]", "continuation")
