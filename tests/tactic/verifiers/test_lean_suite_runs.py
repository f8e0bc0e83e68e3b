"""The tactic suite with Lean verification, run like a user runs it (pytest in a subprocess).

Without a toolchain every attempt must end `toolchain_missing` (environment): the tests error,
nothing counts against the model, and the terminal and summary say Lean was missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from lean_fakes import install_toolchain, path_with, path_without_lean

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("mode", "missing"), [("synthetic", "lean"), ("repo_replay", "lake")])
def test_without_lean_the_run_is_refused_before_any_model_call(
    run_suite: Any, mode: str, missing: str
) -> None:
    """No toolchain for a mode that needs one: one sentence, exit 4 (usage error), and not one
    request reaches the model server (every answer would have been paid for, then unjudged)."""
    with FakeOllama() as server:
        res = run_suite(
            f"--lsrb-verification={mode}",
            "--lsrb-max-items=3",
            "--lsrb-adapter=ollama",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={server.url}",
            env={"PATH": path_without_lean()},
        )
        requests = list(server.requests)
    assert res.returncode == 4, res.stdout + res.stderr
    assert (
        f"--lsrb-verification={mode} needs `{missing}` (profile default), which is not on PATH" in res.stderr
    )
    assert "--lsrb-verification=none" in res.stderr and "Traceback" not in res.stderr
    assert requests == []
    assert not (res.out_dir / "attempts.jsonl").exists()


def test_without_lean_verification_none_runs_unchecked(run_suite: Any) -> None:
    res = run_suite("--lsrb-verification=none", "--lsrb-max-items=3", env={"PATH": path_without_lean()})
    attempts = res.attempts()
    assert len(attempts) == 3 and res.returncode in (0, 1)
    assert {(a["verification_mode"], a["verification_outcome"]) for a in attempts} == {
        ("none", "not_attempted")
    }


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
