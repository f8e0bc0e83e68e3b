"""Goal slices: each condition, their composition, and composition with `-k` in a real run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.slices import goal_slice_predicate, version_key


def row(
    item_id: str,
    goal: str,
    *,
    repo: str = "https://github.com/acme/goals",
    tags: tuple[str, ...] = (),
    lean: str = "v4.22.0",
    path: str = "Goals/Basic.lean",
    kind: str | None = "tactic",
) -> dict[str, Any]:
    return {
        "item_id": item_id,
        "repo_remote": repo,
        "repo_branch": "main",
        "repo_commit": "0" * 40,
        "repo_lean_version": lean,
        "path": path,
        "start_line": 1,
        "start_column": 0,
        "end_line": 1,
        "end_column": 5,
        "goal_text": goal,
        "sorry_kind": kind,
        "tags": list(tags),
    }


ROWS = [
    TacticRow.model_validate(r)
    for r in [
        row("nat0", "n : Nat\n⊢ n + 0 = n", tags=("nat",)),
        row("logic", "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", tags=("logic",), kind="term"),
        row(
            "ml",
            "G : Type\ninst✝ : Group G\na : G\n⊢ a * 1 = a",
            repo="https://github.com/leanprover-community/mathlib4",
            lean="v4.23.0-rc2",
            path="Mathlib/Algebra/Group/Basic.lean",
        ),
        row("tagged", "x : ℝ\n⊢ x = x", tags=("mathlib", "real"), lean="v4.19.0", kind=None),
        row("two", "a b : Nat\n⊢ a = b\n\na b : Nat\n⊢ b = a", tags=("nat",), lean="v4.22.0-rc4"),
    ]
]


def ids(expr: str) -> list[str]:
    keep = goal_slice_predicate(expr)
    return [r.item_id for r in ROWS if keep(r)]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("all", ["nat0", "logic", "ml", "tagged", "two"]),
        ("", ["nat0", "logic", "ml", "tagged", "two"]),
        ("tag:nat", ["nat0", "two"]),
        ("tag:logic|real", ["logic", "tagged"]),
        ("repo:Mathlib4", ["ml"]),
        ("path:Mathlib/Algebra/*", ["ml"]),
        ("lean:v4.22", ["nat0", "logic", "two"]),
        ("lean:v4.22.0", ["nat0", "logic"]),
        ("lean:>=v4.22.0", ["nat0", "logic", "ml"]),
        ("lean:<v4.22.0", ["tagged", "two"]),  # an rc comes before its release
        ("lean:v4.19|v4.23", ["ml", "tagged"]),
        ("kind:term", ["logic"]),
        ("kind:tactic|term", ["nat0", "logic", "ml", "two"]),
        ("hyps:>=3", ["logic", "ml"]),
        ("hyps:2", ["two"]),  # the first goal's hypotheses
        ("hyps:1", ["nat0", "tagged"]),
        ("goals:2", ["two"]),
        ("len:<20", ["nat0", "tagged"]),
        ("inst", ["ml"]),
        ("mathlib", ["ml", "tagged"]),
        ("core", ["nat0", "logic", "two"]),
        ("core,hyps:<=2", ["nat0", "two"]),
        ("!tag:nat", ["logic", "ml", "tagged"]),
        ("core, !kind:term, goals:1", ["nat0"]),
    ],
)
def test_slice_conditions_select_what_their_documentation_says(expr: str, expected: list[str]) -> None:
    assert ids(expr) == expected


def test_version_key_orders_release_candidates_before_their_release() -> None:
    assert version_key("v4.22.0-rc4") < version_key("v4.22.0") < version_key("v4.22.1") < version_key("4.23")


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("tags:nat", "unknown condition 'tags:nat'"),
        ("hyps:many", "'hyps:many' needs a number"),
        ("tag:", "'tag:' needs a value"),
        ("kind:lemma", "sorry kinds are tactic and term"),
        ("lean:latest", "needs a version like v4.22.0"),
        ("core,,nat", "has an empty condition"),
    ],
)
def test_a_bad_slice_is_one_sentence(expr: str, words: str) -> None:
    with pytest.raises(LsrbUsageError, match=words):
        goal_slice_predicate(expr)


def test_a_slice_narrows_the_selection_and_k_narrows_the_tests(run_suite: Any, tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    index.write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in ROWS), "utf-8")
    both = run_suite(
        f"--lsrb-index={index}",
        "--lsrb-goal-slice=!mathlib",
        "--lsrb-samples=2",
        "-k",
        "nat and s1",
        "--lsrb-outcome=record",
    )
    assert both.returncode == 0, both.stdout + both.stderr
    assert sorted((r["item_id"], r["sample_index"]) for r in both.attempts()) == [("nat0", 1), ("two", 1)]
    summary = both.summary()
    # The slice is part of the run's identity; -k is not (it only deselects tests).
    assert summary["selected_items"] == 3 and summary["config"]["goal_slice"] == "!mathlib"
