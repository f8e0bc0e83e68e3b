"""Splicing a tactic over a sorry: only the sorry's span changes.

Checked against the real SorryDB locations (lines, columns, spans) laid over synthetic file
contents, and as a hypothesis property on arbitrary text around a sorry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.lean.splice import SpliceError, infer_sorry_kind, span_text, splice


def synthetic_file(start: tuple[int, int], end: tuple[int, int]) -> str:
    """A file whose span [start, end) starts with `sorry` (1-based lines, 0-based columns)."""
    width = max(start[1], end[1]) + 20
    lines = ["~" * width for _ in range(end[0] + 2)]
    line = lines[start[0] - 1]
    lines[start[0] - 1] = " " * start[1] + "sorry " + line[start[1] + 6 :]
    return "\n".join(lines) + "\n"


def offset(text: str, pos: tuple[int, int]) -> int:
    return sum(len(x) + 1 for x in text.split("\n")[: pos[0] - 1]) + pos[1]


def test_every_sorrydb_location(sorrydb_path: Path) -> None:
    sorries = json.loads(sorrydb_path.read_text(encoding="utf-8"))["sorries"]
    kinds = {"tactic": 0, "term": 0}
    for record in sorries:
        loc = record["location"]
        start, end = (loc["start_line"], loc["start_column"]), (loc["end_line"], loc["end_column"])
        text = synthetic_file(start, end)
        assert span_text(text, start, end).startswith("sorry")
        out = splice(text, start, end, "simp [foo] at h ⊢")
        a, b = offset(text, start), offset(text, end)
        assert out.text == text[:a] + out.replacement + text[b:]  # only the span changed
        assert span_text(out.text, *out.span) == out.replacement
        kinds[infer_sorry_kind(text, start)] += 1
    assert kinds["tactic"] == len(sorries)  # alone at the start of its line: tactic position


@pytest.mark.parametrize(
    ("line", "kind", "replacement"),
    [
        ("theorem t : p := by sorry", "tactic", "simp"),
        ("theorem t : p := sorry", "term", "(by simp)"),
        ("  exact foo sorry", "term", "(by simp)"),
        ("  · sorry", "tactic", "simp"),
        ("  case h => sorry", "tactic", "simp"),
        ("  | zero => sorry", "tactic", "simp"),
        ("def f := fun x => sorry", "term", "(by simp)"),
        ("  refine ⟨sorry, h⟩", "term", "(by simp)"),
        ("  constructor <;> sorry", "tactic", "simp"),
    ],
)
def test_tactic_or_term_position(line: str, kind: str, replacement: str) -> None:
    col = line.index("sorry")
    out = splice(line + "\n", (1, col), (1, col + 5), "simp")
    assert out.replacement == replacement, kind
    assert out.text == line[:col] + replacement + line[col + 5 :] + "\n"


def test_term_sorry_on_its_own_line_after_assignment() -> None:
    text = "theorem t : p :=\n  sorry\n"
    assert infer_sorry_kind(text, (2, 2)) == "term"
    assert infer_sorry_kind("theorem t : p := by\n  sorry\n", (2, 2)) == "tactic"


def test_the_row_kind_overrides_inference() -> None:
    out = splice("theorem t : p := by sorry\n", (1, 20), (1, 25), "simp", kind="term")
    assert out.replacement == "(by simp)"


def test_a_span_without_sorry_is_refused() -> None:
    with pytest.raises(SpliceError, match="not sorry"):
        splice("theorem t : p := by simp\n", (1, 20), (1, 24), "rfl")
    with pytest.raises(SpliceError, match="outside"):
        splice("x\n", (9, 0), (9, 5), "rfl")


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=80)
_tactic = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda t: t.strip() != "")


@given(prefix=_text, suffix=_text, tactic=_tactic, kind=st.sampled_from(["tactic", "term"]))
def test_only_the_sorry_span_changes(prefix: str, suffix: str, tactic: str, kind: str) -> None:
    text = prefix + "sorry" + suffix
    line = prefix.count("\n") + 1
    col = len(prefix) - (prefix.rfind("\n") + 1)
    out = splice(text, (line, col), (line, col + 5), tactic, kind=kind)
    assert out.text == prefix + out.replacement + suffix
    assert out.replacement == (tactic.strip() if kind == "tactic" else f"(by {tactic.strip()})")
    assert span_text(out.text, *out.span) == out.replacement


# The positions issue #16 lists: each is placed (tactic or term) or refused with a reason.
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # term-mode arms and branches
        ("def f : Nat → Nat\n  | 0 => sorry\n  | n + 1 => n\n", "term"),
        ("def f (n : Nat) : Nat :=\n  match n with\n  | 0 => sorry\n  | _ => 1\n", "term"),
        ("def f (n : Nat) : Nat :=\n  if n = 0 then sorry else 1\n", "term"),
        ("def g (xs : Array Nat) (i : Nat) : Nat := xs[i]'sorry\n", "term"),
        # tactic-mode arms, branches and combinator arguments
        (
            "theorem t (n : Nat) : n = n := by\n  induction n with\n"
            "  | zero => sorry\n  | succ n ih => rfl\n",
            "tactic",
        ),
        ("theorem t (n : Nat) : n = n := by\n  match n with\n  | 0 => sorry\n  | _ => rfl\n", "tactic"),
        ("theorem t (p : Prop) [Decidable p] : True := by\n  if h : p then sorry else trivial\n", "tactic"),
        ("theorem t : p ∧ q := by\n  constructor\n  all_goals sorry\n", "tactic"),
        ("theorem t : p := by\n  try sorry\n", "tactic"),
        ("theorem t : p := by\n  first | exact h | sorry\n", "tactic"),
        ("theorem t : p ∧ q := by\n  constructor\n  on_goal 2 => sorry\n", "tactic"),
        ("def f (n : Nat) : Nat := f (n - 1)\ndecreasing_by sorry\n", "tactic"),
        ("theorem t : p ∧ q := by\n  constructor\n  { sorry }\n  { exact hq }\n", "tactic"),
    ],
)
def test_positions_from_the_syntax_around_the_sorry(text: str, kind: str) -> None:
    row = next(i for i, line in enumerate(text.split("\n"), 1) if "sorry" in line)
    col = text.split("\n")[row - 1].index("sorry")
    assert infer_sorry_kind(text, (row, col)) == kind
    out = splice(text, (row, col), (row, col + 5), "simp")
    assert out.replacement == ("simp" if kind == "tactic" else "(by simp)")


def test_xs_index_proof_sorry_is_a_sorry() -> None:
    text = "def g (xs : Array Nat) (i : Nat) : Nat := xs[i]'sorry\n"
    col = text.index("sorry")
    assert splice(text, (1, col), (1, col + 5), "omega").text == text.replace("sorry", "(by omega)")


def test_conv_block_is_refused_with_a_reason() -> None:
    text = "theorem t : a + b = b + a := by\n  conv =>\n    lhs\n    sorry\n"
    with pytest.raises(SpliceError, match="conv block"):
        splice(text, (4, 4), (4, 9), "rw [Nat.add_comm]")


def test_stop_block_is_replaced_whole() -> None:
    """SorryDB records `stop` and the tactics it skips as one multi-line span (VCV-io's
    UniformSelect.lean:392:4-395:30 is one)."""
    text = (
        "theorem t : p := by\n  induction n with\n  | succ m ih =>\n"
        "    stop\n    simp [ih]\n    use x\n  | zero => rfl\n"
    )
    out = splice(text, (4, 4), (6, 9), "exact ih")
    assert (
        out.text
        == "theorem t : p := by\n  induction n with\n  | succ m ih =>\n    exact ih\n  | zero => rfl\n"
    )
    assert out.span == ((4, 4), (4, 12))


def test_brace_block_is_recorded_for_progress() -> None:
    text = "theorem t : p ∧ q := by\n  constructor\n  { sorry }\n"
    out = splice(text, (3, 4), (3, 9), "skip")
    assert out.block == ((3, 2), (3, 10)) and out.text.split("\n")[2] == "  { skip }"


@pytest.mark.parametrize(
    ("text", "line", "name", "keyword"),
    [
        (
            "namespace A\n\n@[simp] theorem foo.{u} (x : Nat) : x = x := by\n  sorry\n\nend A\n",
            4,
            "foo",
            "theorem",
        ),
        ("/-- doc -/\nprivate lemma bar : True := by\n  trivial\n  sorry\n\ndef z := 1\n", 4, "bar", "lemma"),
        ("example : True := by\n  sorry\n", 2, None, "example"),
        (
            "set_option maxHeartbeats 400000 in\nopen Nat in\n/-- doc -/\ntheorem big : True := by\n"
            "  sorry\n",
            5,
            "big",
            "theorem",
        ),
        ("instance (priority := 10) : Inhabited Nat := by\n  sorry\n", 2, None, "instance"),
    ],
)
def test_the_declaration_around_a_sorry(text: str, line: int, name: str | None, keyword: str) -> None:
    from pytest_lsrb.tactic.lean.declaration import TARGET_NAME, find_declaration, named_source

    decl = find_declaration(text, line)
    assert decl is not None and (decl.name, decl.keyword) == (name, keyword)
    assert decl.last_line == line  # the next command (or the end) closes it
    named = named_source(text, decl)
    assert named is not None and named[1] == (name or TARGET_NAME)
    if name is None:
        assert f" {TARGET_NAME}" in named[0].split("\n")[decl.keyword_line - 1]


def test_set_option_in_belongs_to_the_declaration_below_it() -> None:
    """`set_option maxHeartbeats N in` applies to the next command only: the REPL's prefix must not
    end with it, and nothing may be put between it and the declaration (the stand-in axiom)."""
    from pytest_lsrb.tactic.lean.declaration import find_declaration
    from pytest_lsrb.tactic.lean.patch import STAND_IN_AXIOM, make_baseline

    text = (
        "import Mathlib\n\nset_option maxHeartbeats 400000 in\nopen Nat in\n/-- doc -/\n"
        "theorem big (p : Prop) (hp : p) : p ∧ p := by\n  constructor\n  · sorry\n  · sorry\n"
    )
    decl = find_declaration(text, 8)
    assert decl is not None and (decl.first_line, decl.keyword_line) == (3, 6)
    base = make_baseline(text, (8, 4), (8, 9))
    assert base is not None and base.stand_ins == 1
    lines = base.text.split("\n")
    assert lines[2:5] == [STAND_IN_AXIOM, "", "set_option maxHeartbeats 400000 in"]
    assert "\n".join(lines[: base.prefix_lines]).rstrip().endswith(STAND_IN_AXIOM)


# -- block answers: a tactic with its nested block, or a whole proof (--lsrb-answer proof) -----


def test_a_block_in_tactic_position_stands_at_the_sorrys_column() -> None:
    text = "theorem t (x : Nat) : 0 < x + 1 := by\n  · sorry\n"
    spliced = splice(text, (2, 4), (2, 9), "have h : 0 < x + 1 := by\n  omega\nexact h")
    assert spliced.text == (
        "theorem t (x : Nat) : 0 < x + 1 := by\n  · have h : 0 < x + 1 := by\n      omega\n    exact h\n"
    )
    assert spliced.span == ((2, 4), (4, 11))  # Lean's positions for the block: its first and last lines
    assert spliced.block is None


def test_a_block_in_term_position_goes_in_by_lined_up() -> None:
    text = "example (p q : Prop) (hp : p) (hq : q) : p ∧ q := ⟨hp, sorry⟩\n"
    spliced = splice(text, (1, 55), (1, 60), "have h := hq\nexact h")
    assert spliced.text == (
        "example (p q : Prop) (hp : p) (hq : q) : p ∧ q := ⟨hp, (by have h := hq\n"
        + " " * (55 + len("(by "))
        + "exact h)⟩\n"
    )


def test_a_patched_copy_maps_positions_after_a_block() -> None:
    from pytest_lsrb.tactic.lean.patch import make_baseline, make_patched

    source = "theorem t (x : Nat) : 0 < x + 1 := by\n  sorry\n\ntheorem u : True := trivial\n"
    baseline = make_baseline(source, (2, 2), (2, 7))
    assert baseline is not None
    patched = make_patched(baseline, "have h : 0 < x + 1 := by\n  omega\nexact h")
    lines = patched.text.split("\n")
    assert lines[1:4] == ["  have h : 0 < x + 1 := by", "    omega", "  exact h"]
    assert patched.line_delta == -2  # two lines more than the baseline
    assert patched.moved((4, 0)) == (6, 0)  # `theorem u` two lines down
    assert patched.probe is not None and baseline.probe is not None
    assert patched.probe.line == baseline.probe.line + 2
    assert lines[patched.probe.line - 1].startswith("#print axioms")
