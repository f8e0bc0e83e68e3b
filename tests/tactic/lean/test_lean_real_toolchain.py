"""Checks against a real Lean 4 toolchain; they skip with a reason where none is installed."""

from __future__ import annotations

import shutil

import pytest

from pytest_lsrb.engine.verifier import VerifierConfig
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

pytestmark = [
    pytest.mark.lean,
    pytest.mark.skipif(
        shutil.which("lean") is None,
        reason="no Lean 4 toolchain: `lean` is not on PATH (install elan to run these)",
    ),
]


def row(goal: str) -> TacticRow:
    return TacticRow.model_validate(
        {
            "item_id": "real",
            "repo_remote": "https://github.com/pytest-lsrb/builtin-goals",
            "repo_branch": "main",
            "repo_commit": "0" * 40,
            "repo_lean_version": "v4.22.0",
            "path": "A.lean",
            "start_line": 1,
            "start_column": 0,
            "end_line": 1,
            "end_column": 5,
            "goal_text": goal,
        }
    )


@pytest.mark.parametrize(
    ("goal", "tactic", "outcome", "subkind"),
    [
        ("n : Nat\n⊢ n + 0 = n", "rfl", "closed", None),
        ("p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", "constructor", "progress", None),
        ("n : Nat\n⊢ n + 0 = n", "exact foo", "lean_error", "unknown_identifier"),
        ("n : Nat\n⊢ n + 0 = n", "exact (", "lean_error", "parse"),
        ("α : Type u\nx✝ : α\ninst✝ : Inhabited α\n⊢ Nonempty α", "exact ⟨default⟩", "closed", None),
    ],
)
def test_synthetic_with_real_lean(goal: str, tactic: str, outcome: str, subkind: str | None) -> None:
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", timeout_s=120))
    res = v.verify(row(goal), tactic, attempt_seed=0)
    v.close()
    assert (res.outcome, res.subkind) == (outcome, subkind), res.detail
