"""What replaced the target sorry, read as SorryDB reads it (issue #47, item 1).

SorryDB's `llm` strategy (sorrydb/strategies/llm_strategy.py at 71959ed) asks for "the ENTIRE code
block ... with ONLY the sorry replaced" and diffs the answer against the file it sent
(`extract_proof_from_diff`): the proof is what the answer holds where the sorry stood. Chat models
answer so: they restate the declaration, or the file, with the sorry filled in, sometimes a sorry
nested under a bullet, an induction arm or a calc step.

The reader does the same where it sent the source (`Site`: the context shown and the sorry's
place in it); without one, the declaration's own `:=` is found at bracket depth 0 by Lean's
lexical rules. These are the cases that over-read the rule: named arguments, structure
instances and `let` in a restated header; a restated statement that differs from the target's;
a nested sorry filled; a fence inside a comment; a goal display; a definition that is no proof.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.answer import Site, read_answer

# -- `:=` inside a restated header (no source: the declaration's own `:=`) ---------------------


@pytest.mark.parametrize(
    ("raw", "proof"),
    [
        # named argument (SorryDB's Example.lean, answered so by Claude Sonnet 4.5 and Gemini 3 Flash)
        (
            "```lean\ntheorem neg_is_some_none : ¬IsSome (α := α) none := by intro h; cases h\n```",
            "intro h; cases h",
        ),
        # a structure instance in the statement (the example SorryDB's own TODO names)
        (
            "```lean\ntheorem proof : { data := #[1.0, 2.0, 3.0] }.toByteArray.size % 8 = 0 := by\n"
            "  decide\n```",
            "decide",
        ),
        # `let` in the statement: its `:=` is the let's, its `;` ends it
        ("```lean\ntheorem two_add : let x := 2; x + x = 4 := by\n  intro x\n  rfl\n```", "intro x\nrfl"),
        # a default argument, a `:=` inside a string and inside a comment
        (
            '```lean\ntheorem t (n : Nat := 3) (s : String := ":= no") : n = n /- := -/ := by\n  rfl\n```',
            "rfl",
        ),
        # `«»` names may hold anything
        ("```lean\ntheorem «a := b» (p : Prop) (hp : p) : p := by\n  exact hp\n```", "exact hp"),
        # a term proof after a named argument
        ("```lean\ntheorem f : g (x := 1) = g (x := 1) := rfl\n```", "exact rfl"),
    ],
)
def test_the_proof_starts_at_the_declarations_own_assignment(raw: str, proof: str) -> None:
    answer = read_answer(raw, "proof")
    assert answer.tactic == proof
    assert answer.refusal is None


def test_a_definition_is_no_proof() -> None:
    """`def two := 2` defines data: it is not `exact 2`."""
    for mode in ("proof", "tactic"):
        answer = read_answer("```lean\ndef two := 2\n```", mode)
        assert answer.tactic == "" and not answer.valid, mode


def test_a_doc_comment_never_hides_the_declaration() -> None:
    raw = "/-- The statement. -/\ntheorem foo (p : Prop) (hp : p) : p := by\n  exact hp"
    assert read_answer(raw, "proof").tactic == "exact hp"
    assert read_answer(raw).tactic == "exact hp"


# -- comments go before fences are chosen --------------------------------------------------------


def test_a_fence_inside_a_comment_is_not_the_answer() -> None:
    """A Goedel-Prover-V2 form: the plan, its own code fence included, in a `/- ... -/` block, the
    complete proof after `-/`."""
    raw = (
        "/- Proof plan. We first show the key inequality:\n"
        "```lean4\ntheorem key (a b : ℝ) : 0 ≤ (a - b) ^ 2 := by\n  positivity\n```\n"
        "then conclude by nlinarith. -/\n"
        "theorem main (a b : ℝ) : 2 * a * b ≤ a ^ 2 + b ^ 2 := by\n"
        "  nlinarith [sq_nonneg (a - b)]\n"
    )
    assert read_answer(raw, "proof").tactic == "nlinarith [sq_nonneg (a - b)]"


# -- tactic mode: brackets and calc blocks, not columns alone ------------------------------------


@pytest.mark.parametrize(
    ("raw", "tactic"),
    [
        # a `]` (and the list's items) at the tactic's own column are still inside its brackets
        (
            "nlinarith [sq_nonneg (a - b), sq_nonneg (a + b),\nsq_nonneg c\n]\nlinarith",
            "nlinarith [sq_nonneg (a - b), sq_nonneg (a + b),\nsq_nonneg c\n]",
        ),
        ("exact ⟨h1,\nh2⟩\nsimp", "exact ⟨h1,\nh2⟩"),
        # calc steps at calc's column are its steps (Lean's calcSteps checks no column against calc)
        ("calc a = b := by rw [h]\n_ = c := by simp\nexact foo", "calc a = b := by rw [h]\n_ = c := by simp"),
    ],
)
def test_brackets_and_calc_decide_where_a_tactic_ends(raw: str, tactic: str) -> None:
    assert read_answer(raw).tactic == tactic


# -- a goal display is no tactic -----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "case inl\nh : p\n⊢ p ∨ q",
        "```lean\ncase inr.h\nn : ℕ\nhn : 0 < n\n⊢ n ≠ 0\n```",
        "The remaining goal is:\n```\nx y : ℕ\nh : x = y\n⊢ y = x\n```",
        "⊢ a + b = b + a",
    ],
)
def test_a_goal_display_is_no_tactic(raw: str) -> None:
    for mode in ("tactic", "proof"):
        answer = read_answer(raw, mode)
        assert answer.tactic == "" and not answer.valid, (mode, answer)
        assert "goal_display" in answer.answer_format


# -- with the source: what replaced the target sorry ---------------------------------------------

RCASES = (
    "-- Error: missing cases\n"
    "example (n : Nat) (h : n < 3) : n = 0 ∨ n = 1 ∨ n = 2 := by\n"
    "  rcases n with _ | n'\n"
    "  · left; rfl\n"
    "  -- Need to handle the successor case!\n"
    "  sorry"
)
RCASES_SITE = Site(RCASES, (6, 2), (6, 7))


def test_a_nested_sorry_filled_in_yields_its_replacement() -> None:
    """Claude Sonnet 4.5 on SorryDB's RCases.lean (verified; SorryDB's extraction: `omega`)."""
    raw = (
        "I can use `omega` to solve this arithmetic constraint:\n\n```lean\n-- Error: missing cases\n"
        "example (n : Nat) (h : n < 3) : n = 0 ∨ n = 1 ∨ n = 2 := by\n  rcases n with _ | n'\n"
        "  · left; rfl\n  -- Need to handle the successor case!\n  omega\n```"
    )
    answer = read_answer(raw, "proof", site=RCASES_SITE)
    assert answer.tactic == "omega" and answer.valid
    assert "fill" in answer.answer_format
    assert read_answer(raw, "tactic", site=RCASES_SITE).tactic == "omega"


BULLETS = "theorem t (a b : ℕ) : a + b = a → b = 0 := by\n  induction b with d hd\n  · intro h\n    sorry\n"
BULLETS_SITE = Site(BULLETS.rstrip("\n"), (4, 4), (4, 9))


@pytest.mark.parametrize(
    ("raw", "fill"),
    [
        # under a bullet, the declaration restated up to it and a later bullet invented after it
        (
            "```lean\ntheorem t (a b : ℕ) : a + b = a → b = 0 := by\n  induction b with d hd\n"
            "  · intro h\n    rfl\n  · intro h\n    simp at h\n```",
            "rfl",
        ),
        # the block filled over two lines, re-indented by the model's own hand
        (
            "```lean\ntheorem t (a b : ℕ) : a + b = a → b = 0 := by\n  induction b with d hd\n"
            "  · intro h\n    simp at h\n    exact h\n```",
            "simp at h\nexact h",
        ),
    ],
)
def test_a_fill_under_a_bullet_is_that_bullets_block(raw: str, fill: str) -> None:
    assert read_answer(raw, "proof", site=BULLETS_SITE).tactic == fill


CALC = "theorem c (a b : ℕ) (h : a = b) : a + 0 = b := by\n  calc a + 0 = a := by sorry\n    _ = b := h"
_CALC_COLUMN = CALC.split("\n")[1].index("sorry")
CALC_SITE = Site("\n".join(CALC.split("\n")[:2]), (2, _CALC_COLUMN), (2, _CALC_COLUMN + 5))


def test_a_calc_step_filled_in_yields_that_steps_proof() -> None:
    raw = "```lean\n" + CALC.replace("by sorry", "by simp") + "\n```"
    answer = read_answer(raw, "proof", site=CALC_SITE)
    assert answer.tactic == "simp"


def test_the_whole_file_restated_with_other_sorries_kept() -> None:
    """SorryDB's prompt shows the file up to the sorry; an answer restates it all, the file's other
    sorries left as they were: only the target's replacement is the answer."""
    context = (
        "import Mathlib\n\ntheorem other : True := by\n  sorry\n\n"
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry"
    )
    raw = (
        "```lean\nimport Mathlib\n\ntheorem other : True := by\n  sorry\n\n"
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  exact ⟨hp, hq⟩\n```"
    )
    answer = read_answer(raw, "proof", site=Site(context, (7, 2), (7, 7)))
    assert answer.tactic == "exact ⟨hp, hq⟩" and not answer.contains_sorry


def test_a_term_position_fill_reads_as_the_tactic_the_splice_wraps() -> None:
    """`map_eq := sorry` in a structure: SorryDB's extraction is the term `by simp [...]`; the
    splice writes `(by ...)` around a tactic, so the reading is the tactic."""
    context = (
        "lemma IsBernoulliOn.identDistrib_mem (hX : IsBernoulliOn X u p P) :\n"
        "    IdentDistrib (fun ω ↦ i ∈ X ω) (fun ω ↦ j ∈ X ω) P P where\n"
        "  aemeasurable_fst := by fun_prop\n"
        "  map_eq := sorry"
    )
    site = Site(context, (4, 12), (4, 17))
    by_block = context.replace(":= sorry", ":= by simp [hX, hi, hj]")
    assert read_answer(f"```lean\n{by_block}\n```", "proof", site=site).tactic == "simp [hX, hi, hj]"
    term = context.replace(":= sorry", ":= hX.map_eq ▸ rfl")
    assert read_answer(f"```lean\n{term}\n```", "proof", site=site).tactic == "exact hX.map_eq ▸ rfl"


# -- a restated statement must be the target's -----------------------------------------------

TARGET = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry"
TARGET_SITE = Site(TARGET, (2, 2), (2, 7))


@pytest.mark.parametrize(
    "restated",
    [
        "theorem t (p q : Prop) (hp : p) (hq : p) : p ∧ q := by\n  exact ⟨hp, hq⟩",  # a hypothesis changed
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∨ q := by\n  exact Or.inl hp",  # the conclusion
        "theorem t (p q : Prop) (hp : p) (hq : q) (h : False) : p ∧ q := by\n  exact h.elim",  # one more
    ],
)
def test_a_changed_statement_is_refused_in_one_sentence(restated: str) -> None:
    answer = read_answer(f"```lean\n{restated}\n```", "proof", site=TARGET_SITE)
    assert answer.refusal is not None and not answer.valid
    assert answer.refusal.count(". ") == 0 and answer.refusal.endswith(".")
    assert "changes the statement" in answer.refusal
    assert "changed_statement" in answer.answer_format


@pytest.mark.parametrize(
    "restated",
    [
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  exact ⟨hp, hq⟩",
        # laid out anew, a comment added: the same statement to Lean
        "theorem t (p q : Prop)\n    (hp : p) (hq : q) :  -- the pair\n    p ∧ q := by\n  exact ⟨hp, hq⟩",
    ],
)
def test_a_faithful_restatement_yields_the_fill(restated: str) -> None:
    answer = read_answer(f"```lean\n{restated}\n```", "proof", site=TARGET_SITE)
    assert answer.refusal is None and answer.tactic == "exact ⟨hp, hq⟩" and answer.valid


def test_an_answer_that_restates_nothing_is_read_as_before() -> None:
    for raw in ("exact ⟨hp, hq⟩", "```lean\nconstructor\n· exact hp\n· exact hq\n```"):
        plain = read_answer(raw, "proof")
        with_site = read_answer(raw, "proof", site=TARGET_SITE)
        assert (with_site.tactic, with_site.refusal) == (plain.tactic, None)


# -- laws ----------------------------------------------------------------------------------------

_TACTICS = ("simp", "omega", "rfl", "linarith", "exact h", "norm_num", "constructor", "intro x")
_HYPS = ("(h : a = b)", "(n : ℕ)", "(f : ℕ → ℕ := id)", "(s : Set ℕ := {x | x = 0})", "[inst : Foo (α := ℕ)]")


@st.composite
def _restated(draw: st.DrawFn) -> tuple[Site, str, str]:
    """A declaration whose proof is a bullet tree with the target sorry somewhere in it, and an
    answer that restates it with only that sorry replaced (a fill of one to three lines), maybe
    in a fence, maybe followed by the model's guess at the lines after it (shallower)."""
    hyps = " ".join(draw(st.lists(st.sampled_from(_HYPS), max_size=3)))
    head = f"theorem t {hyps} : a = b := by"
    depth = draw(st.integers(0, 2))
    lines = [head]
    for level in range(depth + 1):
        pad = "  " * (level + 1)
        lines += [pad + t for t in draw(st.lists(st.sampled_from(_TACTICS), max_size=2))]
        if level < depth:
            lines.append(pad + "· " + draw(st.sampled_from(_TACTICS)))
    column = 2 * (depth + 1)
    context = "\n".join([*lines, " " * column + "sorry"])
    fill = draw(st.lists(st.sampled_from(_TACTICS), min_size=1, max_size=3))
    guessed = draw(st.lists(st.sampled_from(_TACTICS), max_size=2)) if depth else []
    after = [" " * (column - 2) + "· " + t for t in guessed]  # the enclosing block's next bullet
    code = "\n".join([*lines, *(" " * column + t for t in fill), *after])
    raw = draw(st.sampled_from(["{}", "```lean\n{}\n```", "Here it is:\n\n```lean4\n{}\n```\nDone."])).format(
        code
    )
    site = Site(context, (len(lines) + 1, column), (len(lines) + 1, column + 5))
    return site, raw, "\n".join(fill)


@given(_restated())
def test_restating_the_source_with_only_the_sorry_replaced_yields_the_replacement(
    case: tuple[Site, str, str],
) -> None:
    """Law: an answer that is the source with only the target sorry replaced reads as that
    replacement, the statement unchanged."""
    site, raw, fill = case
    answer = read_answer(raw, "proof", site=site)
    assert answer.tactic == fill and answer.refusal is None
    assert read_answer(raw, "tactic", site=site).tactic == fill.split("\n")[0]


@given(_restated(), st.sampled_from(["a = b", "b = a", "a ≠ b"]))
def test_a_statement_is_changed_exactly_when_its_text_is(
    case: tuple[Site, str, str], conclusion: str
) -> None:
    """Law: with the conclusion rewritten, the answer is refused iff the statement differs."""
    site, raw, _ = case
    changed = raw.replace(": a = b := by", f": {conclusion} := by", 1)
    answer = read_answer(changed, "proof", site=site)
    assert (answer.refusal is not None) == (conclusion != "a = b")


@given(
    st.lists(
        st.sampled_from(["h : p", "x y : ℕ", "hxy : x < y", "inst✝ : Fintype α", "f : ℕ →\n    ℕ"]),
        max_size=4,
    ),
    st.sampled_from(["", "case inl\n", "case succ.h\n"]),
    st.sampled_from(["p ∨ q", "x + y = y + x", "f 0 = 0"]),
)
def test_a_goal_as_lean_prints_it_is_never_a_tactic(hyps: list[str], case: str, target: str) -> None:
    shown = case + "".join(h + "\n" for h in hyps) + f"⊢ {target}"
    for raw in (shown, f"```\n{shown}\n```"):
        answer = read_answer(raw)
        assert answer.tactic == "" and "goal_display" in answer.answer_format


@given(
    st.text(max_size=300),
    st.text(max_size=200),
    st.sampled_from(["tactic", "proof"]),
    st.sampled_from(["  sorry", "theorem t : p := by sorry", "  exact ⟨sorry, h⟩", "  · sorry"]),
)
def test_reading_with_a_site_never_crashes(raw: str, above: str, mode: str, line: str) -> None:
    """Law: any answer reads against any source (hostile text is normal input); what it reads
    holds no forbidden token when valid."""
    context = f"{above}\n{line}"
    row = context.count("\n") + 1
    site = Site(context, (row, line.index("sorry")), (row, line.index("sorry") + 5))
    answer = read_answer(raw, "proof" if mode == "proof" else "tactic", site=site)
    assert not (answer.valid and answer.contains_sorry)
    for text in (raw, f"```lean\n{context.replace('sorry', raw[:40] or 'simp')}\n```"):
        read_answer(text, "proof", site=site)
