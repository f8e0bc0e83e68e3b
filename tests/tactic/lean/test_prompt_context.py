"""The file context of `--lsrb-context file` (lean/declaration.py `prompt_context`): bounded, and
nothing after the target sorry - no later proof of the same statement - ever reaches the prompt."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.lean.declaration import prompt_context

SOURCE = (
    "import Mathlib\n\nopen Real\n\nnamespace Foo\n\n"
    "theorem t (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := ⟨by sorry, by positivity⟩\n\n"
    "theorem t' (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by positivity\n\nend Foo\n"
)


def test_the_line_stops_at_the_sorry_and_a_later_proof_is_not_shown() -> None:
    line = 7
    column = SOURCE.split("\n")[line - 1].index("sorry")
    context = prompt_context(SOURCE, line, 100, column + len("sorry"))
    assert context.endswith("0 < x ^ 2 := ⟨by sorry")
    assert "positivity" not in context  # neither the rest of the line nor theorem t'
    assert context.startswith("open Real\nnamespace Foo")


_LINES = st.lists(
    st.sampled_from(["open Nat", "theorem a : True := by", "  trivial", "  sorry", "variable (n : ℕ)", ""]),
    min_size=1,
    max_size=30,
)


@given(_LINES, st.data())
def test_nothing_after_the_sorry_and_at_most_n_lines_above_it(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join([*lines, "theorem goal : True := by sorry -- later: trivial", *lines])
    start_line = len(lines) + 1
    end_column = text.split("\n")[start_line - 1].index("sorry") + len("sorry")
    bound = data.draw(st.integers(1, 40))
    context = prompt_context(text, start_line, bound, end_column)
    shown = context.split("\n")
    assert shown[-1] == "theorem goal : True := by sorry"
    before = text.split("\n")[: start_line - 1]
    # every other line shown is a line above the sorry, and the declaration part is bounded
    assert all(line in before or line == "" for line in shown[:-1])
    scope = sum(1 for line in before if line.startswith(("open", "variable")))
    assert len(shown) <= scope + 1 + bound + 1
