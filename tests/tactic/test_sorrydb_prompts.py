"""SorryDB's prompts word for word and its file cut (tactic/prompts.py; issue #47 item 3).

The prompts are pinned to the SHA-256 of SorryDB's own text at 71959ed (the `PROMPT` literals of
sorrydb/strategies/llm_strategy.py and agentic_strategy.py, `TACTIC_GENERATION_PROMPT` of
tactic_strategy.py, read from a clone of SorryDB/SorryDB): an edit to ours fails here."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.prompts import (
    AGENTIC_PROMPT,
    LLM_PROMPT,
    SourceFile,
    agentic_prompt,
    file_context,
    one_shot_prompt,
)
from pytest_lsrb.tactic.search import SEARCH_PROMPT


@pytest.mark.parametrize(
    ("prompt", "sha256"),
    [
        (LLM_PROMPT, "3091b35bb14edba8506e3c54230aff860d15f893a0cd35a34efdeb8d18788c16"),
        (AGENTIC_PROMPT, "89824999a71292680b449a6b5df714da3a74874b9bbefb3c8f7f0ea110b20576"),
        (SEARCH_PROMPT, "8e20fb15048d5a7fbf7c6a50fdb1797e9c8d474e50900910d9839d880fa8c429"),
    ],
)
def test_the_prompts_are_sorrydbs_to_the_byte(prompt: str, sha256: str) -> None:
    assert hashlib.sha256(prompt.encode()).hexdigest() == sha256


FILE = (
    "import Mathlib\n\ntheorem a : True := by\n  trivial\n\n"
    "theorem b (n : ℕ) : n = n := by\n  sorry\n\ntheorem c : 1 = 1 := rfl\n"
)


def test_the_one_shot_and_the_self_correcting_prompts_show_the_file_as_sorrydb_does() -> None:
    source = SourceFile(FILE, 7, 2, 7)
    one = one_shot_prompt(source, "n : ℕ\n⊢ n = n")
    assert "<context>\n```lean\nimport Mathlib\n" in one and "  sorry\n```\n</context>" in one
    assert "theorem c" not in one and "```lean\nn : ℕ\n⊢ n = n\n```" in one
    assert "The given file contains a sorry on the last line, column 2. \n</target_sorry\n" in one
    first = agentic_prompt(source, "n : ℕ\n⊢ n = n", "")
    assert "<feedback>\n\n</feedback>\nIf there is feedback" in first  # empty in round 1, in place
    assert first.index("</target_sorry>") < first.index("<feedback>") < first.index("Replace the target")
    assert "```lean\n  trivial\n\ntheorem b (n : ℕ) : n = n := by\n  sorry\n```" in agentic_prompt(
        source, "g", "", lines=4
    )


@given(
    st.lists(
        st.sampled_from(["open Nat", "  simp", "  sorry", "", "theorem t : True := by", "\u2028x"]),
        max_size=40,
    ),
    st.integers(-2, 45),
    st.one_of(st.none(), st.integers(0, 50)),
)
def test_the_cut_is_the_last_lines_up_to_the_given_one(lines: list[str], last: int, keep: int | None) -> None:
    """SorryDB's cut: `text.splitlines()[:last]`, then its last `keep` lines when `keep` > 0."""
    text = "\n".join(lines)
    expected = text.splitlines()[: max(0, last)]
    if keep:
        expected = expected[-keep:]
    assert file_context(text, last, keep) == "\n".join(expected)
