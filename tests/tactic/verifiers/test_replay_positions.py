"""repo_replay end to end on the splice cases the issue names: each answer is placed where the
syntax around the sorry says (and Lean, here the fake `lake lean`, sees that file), or the item
is skipped with the reason; a `{ tac }` block's goals reported at its `}` are progress."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lean_verifiers import _replay_with, row, rules

from pytest_lsrb.engine.verifier import VerificationResult


def _checked_files(fake_lean: Path) -> list[str]:
    """The sources Lean was run on, in order (the fake logs each file's text)."""
    log = fake_lean / "lean.log"
    calls = [json.loads(c) for c in log.read_text().splitlines()] if log.exists() else []
    return [c["text"] for c in calls if c["argv"] != ["--version"]]


def _one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, needle: str, tactic: str
) -> VerificationResult:
    """Check `tactic` at the `sorry` inside the first occurrence of `needle`."""
    lines = source.split("\n")
    line = next(i for i, text in enumerate(lines, 1) if needle in text)
    col = lines[line - 1].index(needle) + needle.index("sorry")
    v = _replay_with(tmp_path, monkeypatch, source, "")
    try:
        r = row(start_line=line, start_column=col, end_line=line, end_column=col + 5)
        return v.check(r, tactic, v.profile_for(r))
    finally:
        v.close()


def test_brace_block_goals_at_its_closing_brace_are_progress(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = (
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  { sorry }\n  { exact hq }\n"
    )
    # Lean puts `unsolved goals` of `{ tac }` at its `}` (the first one in the patched file).
    rules(
        monkeypatch,
        {
            "contains": "{ skip }",
            "messages": [
                {"severity": "error", "data": "unsolved goals\ncase left\np q : Prop\n⊢ p", "at": "}"}
            ],
        },
    )
    res = _one(tmp_path, monkeypatch, source, "{ sorry", "skip")
    assert (res.outcome, res.success) == ("progress", False), res.detail


@pytest.mark.parametrize(
    ("source", "needle", "placed"),
    [
        ("def f : Nat → Nat\n  | 0 => sorry\n  | n + 1 => n\n", "=> sorry", "  | 0 => (by exact 0)"),
        (
            "def f (n : Nat) : Nat :=\n  if n = 0 then sorry else 1\n",
            "then sorry",
            "  if n = 0 then (by exact 0) else 1",
        ),
        (
            "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  all_goals sorry\n",
            "all_goals sorry",
            "  all_goals exact 0",
        ),
        (
            "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
            "  constructor\n  on_goal 2 => sorry\n  exact hp\n",
            "=> sorry",
            "  on_goal 2 => exact 0",
        ),
        (
            "def g (xs : Array Nat) (i : Nat) : Nat := xs[i]'sorry\n",
            "sorry",
            "def g (xs : Array Nat) (i : Nat) : Nat := xs[i]'(by exact 0)",
        ),
    ],
)
def test_each_position_gets_the_form_lean_parses(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch, source: str, needle: str, placed: str
) -> None:
    res = _one(tmp_path, monkeypatch, source, needle, "exact 0")
    assert res.outcome == "closed", res.detail
    baseline, patched = _checked_files(fake_lean)
    assert placed in patched.split("\n") and placed not in baseline.split("\n")


def test_a_sorry_inside_conv_is_skipped_with_the_reason(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "theorem t (a b : Nat) : a + b = b + a := by\n  conv =>\n    lhs\n    sorry\n"
    res = _one(tmp_path, monkeypatch, source, "sorry", "rw [Nat.add_comm]")
    assert (res.outcome, res.subkind) == ("skipped_unspliceable", "position")
    assert "conv block" in str(res.detail)
    assert _checked_files(fake_lean) == []  # refused before Lean ran
