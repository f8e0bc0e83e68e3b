"""The tactic suite with Lean verification, run like a user runs it (pytest in a subprocess).

Without a toolchain every attempt must end `toolchain_missing` (environment): the tests error,
nothing counts against the model, and the terminal and summary say Lean was missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lean_fakes import install_toolchain, path_with, path_without_lean

REPO = Path(__file__).resolve().parents[3]


def test_synthetic_without_lean_says_so(run_suite: Any) -> None:
    res = run_suite("--lsrb-verification=synthetic", "--lsrb-max-items=3", env={"PATH": path_without_lean()})
    attempts = res.attempts()
    assert len(attempts) == 3
    assert {a["verification_outcome"] for a in attempts} == {"toolchain_missing"}
    assert {a["verification_error_domain"] for a in attempts} == {"environment"}
    assert "3 errors" in res.stdout and "failed" not in res.stdout.splitlines()[-1]
    assert "NOT JUDGED" in res.stdout and "no Lean toolchain" in res.stdout
    assert "toolchain_missing (`lean` is not on PATH" in res.stdout
    summary = res.summary()
    assert summary["verification_error_kinds"] == {"toolchain_missing": 3}
    assert summary["verification_error_domains"] == {"environment": 3}
    assert summary["verification_unjudged"] == 3
    assert summary["verification_pass_at_k_1"] is None  # nothing judged, nothing against the model
    assert summary["profile_config_path"] == str(REPO / "profiles")
    assert summary["profile_match_counts"] == {"default": 3}


def test_synthetic_with_a_fake_lean_judges(run_suite: Any, tmp_path: Path) -> None:
    install_toolchain(tmp_path / "bin")
    rules = [
        {
            "contains": "omega",
            "messages": [{"severity": "error", "data": "omega could not prove the goal", "at": "omega"}],
        }
    ]
    res = run_suite(
        "--lsrb-verification=synthetic",
        "--lsrb-max-items=4",
        "--lsrb-samples=2",
        "--lsrb-temperature=0.7",
        env={"PATH": path_with(tmp_path / "bin"), "FAKE_LEAN_RULES": json.dumps(rules)},
    )
    attempts = res.attempts()
    assert len(attempts) == 8, res.stdout[-2000:]
    outcomes = {a["verification_outcome"] for a in attempts}
    assert outcomes <= {"closed", "lean_error", "forbidden_token", "not_attempted"} and "closed" in outcomes
    for a in attempts:
        if a["tactic"] == "omega":
            verdict = (a["verification_outcome"], a["verification_error_subkind"])
            assert verdict == ("lean_error", "tactic_failed")
    summary = res.summary()
    assert summary["verification_unjudged"] == 0
    assert 0 < summary["verification_pass_at_k_1"] <= summary["verification_pass_at_k_2"] <= 1
