"""summary.json's per-repository and per-Lean-version breakdowns (tactic family): each group's
numbers are what the whole-run summary gives over that group's attempts (the same judging rule)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from pytest_lsrb.engine.summary import Summarizer
from pytest_lsrb.tactic.task import TacticSummary

REPOS = {"https://github.com/o/alpha.git": "v4.9.0", "https://github.com/o/beta": "v4.10.0"}
OUTCOMES: dict[str, dict[str, object]] = {
    "closed": {"verification_attempted": True, "verification_success": True},
    "lean_error": {"verification_attempted": True, "verification_success": False},
    "timeout": {"generation_error_kind": "timeout", "generation_error_domain": "transport"},
    "toolchain": {"verification_attempted": True, "verification_error_domain": "environment"},
}


def record(item: str, sample: int, remote: str, outcome: str) -> dict[str, Any]:
    return {
        "item_id": item,
        "sample_index": sample,
        "valid": True,
        "nonempty": True,
        "verification_mode": "synthetic",
        "repo_remote": remote,
        "repo_lean_version": REPOS[remote],
        **OUTCOMES[outcome],
    }


def test_each_group_has_the_whole_run_numbers_of_its_own_attempts() -> None:
    kinds = itertools.cycle(["closed", "lean_error", "closed", "timeout", "toolchain", "lean_error"])
    records = [
        record(f"{remote[-9:]}-{i}", k, remote, next(kinds))
        for remote in REPOS
        for i in range(4)
        for k in range(2)
    ]
    acc = TacticSummary(samples_per_item=2)
    for rec in records:
        acc.add(rec)
    out = acc.finish()
    assert set(out["by_repository"]) == {"alpha", "beta"}
    assert set(out["by_lean_version"]) == {"v4.9.0", "v4.10.0"}
    for remote, version in REPOS.items():
        group = [r for r in records if r["repo_remote"] == remote]
        whole = Summarizer(2)
        for rec in group:
            whole.add(rec)
        expected = whole.finish()
        name = remote.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]
        for got in (out["by_repository"][name], out["by_lean_version"][version]):
            assert got["attempts"] == expected["attempts"] and got["items"] == expected["items"]
            assert got["judged_attempts"] == expected["judged_attempts"]
            assert got["success_rate"] == pytest.approx(expected["verification_success_rate"])
            assert got["pass_at_1"] == expected["verification_pass_at_k_1"]
            assert got["pass_at_k_items"] == expected["verification_pass_at_k_items"]
