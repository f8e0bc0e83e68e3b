"""Synthetic mode's reach (issue #29, item 6): keyword binders quoted, the header decided from the
row (never the core header for a Mathlib repository), and every synthetic rate shown with the
subset it is over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_lsrb.engine.outcomes import subset_note
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.session.terminal import summary_lines
from pytest_lsrb.tactic.lean.goal import Restatement, restate
from pytest_lsrb.tactic.lean.script import choose_header, control_script
from pytest_lsrb.tactic.task import TacticSummary


def test_this_and_other_keywords_are_quoted_as_binders() -> None:
    """Lean prints the hypothesis `have :` made as `this`, a keyword: the bare word does not parse
    as a binder; `«this»` is the same name, so `this` in later types still refers to it."""
    restated = restate("α : Type\nthis : Nonempty α\nfun : α → α\nh : this = this\n⊢ ∃ x : α, fun x = x")
    assert isinstance(restated, Restatement)
    assert restated.binders == ("(α : Type)", "(«this» : Nonempty α)", "(«fun» : α → α)", "(h : this = this)")
    let = restate("this : Nat := 3\n⊢ this = 3")
    assert isinstance(let, Restatement) and let.intros == ("«this»",)
    assert "let «this» : Nat := 3" in let.statement


def test_sorrydb_goals_with_this_restate_with_it_quoted(sorrydb_path: Path) -> None:
    rows = json.loads(sorrydb_path.read_text())["sorries"]
    with_this = [r["debug_info"]["goal"] for r in rows if "\nthis : " in "\n" + r["debug_info"]["goal"]]
    restated = [restate(g) for g in with_this]
    scripts = [control_script(r, "mathlib").text for r in restated if isinstance(r, Restatement)]
    assert scripts, "the sample has goals with a `this` hypothesis"
    assert all("(«this» :" in s or "«this»" in s for s in scripts)
    assert not any("(this :" in s for s in scripts)


@pytest.mark.parametrize(
    ("remote", "goal", "header"),
    [
        # a Mathlib repository whose goal happens to print with core names only
        ("https://github.com/fpvandoorn/carleson", "n : Nat\n⊢ n + 0 = n", "mathlib"),
        ("https://github.com/example/unknown-repo.git", "n : Nat\n⊢ n = n", "mathlib"),
        ("https://github.com/leanprover/lean4", "n : Nat\n⊢ n + 0 = n", "core"),
        ("https://github.com/leanprover/lean4", "s : Finset ℕ\n⊢ s = s", "mathlib"),
        ("", "n : Nat\n⊢ n = n", "core"),  # no repository: nothing says Mathlib
    ],
)
def test_the_auto_header_is_decided_from_the_row(remote: str, goal: str, header: str) -> None:
    assert choose_header("auto", goal, remote) == header


def test_the_sorrydb_sample_never_gets_the_core_header_for_a_mathlib_repository(sorrydb_path: Path) -> None:
    rows = json.loads(sorrydb_path.read_text())["sorries"]
    core = {
        r["repo"]["remote"]
        for r in rows
        if choose_header("auto", r["debug_info"]["goal"], r["repo"]["remote"]) == "core"
    }
    assert core <= {"https://github.com/Deducteam/lean2dk", "https://github.com/frenzymath/jixia"}


def _record(i: int, outcome: str, *, judged: bool, success: bool = False) -> dict[str, Any]:
    return {
        "item_id": f"g{i}",
        "sample_index": 0,
        "verification_mode": "synthetic",
        "verification_attempted": True,
        "verification_success": success,
        "verification_outcome": outcome,
        "verification_error_kind": None if success else outcome,
        "verification_error_domain": "model" if judged else "environment",
        "generation_error_kind": None,
        "valid": True,
        "nonempty": True,
    }


def test_every_synthetic_rate_shows_the_subset_it_is_over(tmp_path: Path) -> None:
    summary_part = TacticSummary(1)
    records = [
        _record(0, "closed", judged=True, success=True),
        _record(1, "lean_error", judged=True),
        _record(2, "skipped_unrestatable", judged=False),
        _record(3, "skipped_unrestatable", judged=False),
        _record(4, "reconstruction_failed", judged=False),
    ]
    for rec in records:
        summary_part.add(cast(AttemptRecord, rec))
    part = summary_part.finish()
    assert part["verification_judged_subset"] == {"judged": 2, "not_restatable": 2, "not_reconstructible": 1}
    summary: dict[str, Any] = {
        **part,
        "suite": "goal_to_tactic_proposal_v1",
        "attempts": 5,
        "attempts_expected": 5,
        "items": 5,
        "selected_rows_hash": "0" * 64,
        "shard_index": 0,
        "shard_count": 1,
        "config": {"verification": "synthetic", "samples": 1, "task": "tactic"},
        "judged_attempts": 2,
        "verification_success_rate": 0.5,
        "verification_pass_at_k_1": 0.5,
        "verification_pass_at_k_items": 2,
    }
    assert subset_note(summary) == "; 3 not restatable or not reconstructible"
    lines = summary_lines(summary, tmp_path)
    assert any("0.500 (of 2 judged; 3 not restatable or not reconstructible)" in line for line in lines)
    assert any(
        line.startswith("pass@1") and "not restatable or not reconstructible" in line for line in lines
    )


def test_other_modes_say_nothing_more() -> None:
    part = TacticSummary(1)
    rec = _record(0, "closed", judged=True, success=True) | {"verification_mode": "repo_replay"}
    part.add(cast(AttemptRecord, rec))
    assert "verification_judged_subset" not in part.finish()
    assert subset_note({"verification_success_rate": 1.0}) == ""
