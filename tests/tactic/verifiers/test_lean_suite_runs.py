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


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
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


# The mock model's answers to the first 8 built-in goals (seed 0): rfl (2), simp (2), omega,
# constructor, refine ⟨?_, ?_⟩, rw [Nat.add_comm]. The fake Lean makes each check end differently.
BLAME_MODES = "hang-if:omega;segv-if:constructor;abort-if:refine"
HEARTBEATS = (
    "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) has been reached\n\n"
    "Note: Use `set_option maxHeartbeats <num>` to set the limit.\n\n"
    "Hint: Additional diagnostic information may be available using the "
    "`set_option diagnostics true` command."
)
INFRA_TACTICS = {"omega": "timeout", "constructor": "oom_or_crash", "refine ⟨?_, ?_⟩": "oom_or_crash"}


def _blame_run(run_suite: Any, tmp_path: Path, out: Path, *args: str, faulty: bool = True) -> Any:
    install_toolchain(tmp_path / "bin")
    profile = tmp_path / "lean.toml"
    profile.write_text('schema_version = 1\nsynthetic_header = "core"\ncheck_timeout_s = 2\n')
    heartbeats = [{"contains": "simp", "messages": [{"severity": "error", "data": HEARTBEATS, "at": "simp"}]}]
    env = {
        "PATH": path_with(tmp_path / "bin"),
        "FAKE_LEAN_RULES": json.dumps(heartbeats),
        "FAKE_LEAN_MODE": BLAME_MODES if faulty else "rules",
        "FAKE_LEAN_LOG": str(tmp_path / "lean.log"),
    }
    return run_suite(
        "--lsrb-verification=synthetic",
        f"--lsrb-profiles={profile}",
        "--lsrb-max-items=8",
        *args,
        out=out,
        env=env,
    )


def test_wall_clock_timeouts_and_crashes_are_the_environments_in_a_run(
    run_suite: Any, tmp_path: Path
) -> None:
    """A real run on the fake toolchain: a check past check_timeout_s, a SIGSEGV and an exit
    without Lean's messages are the environment's (their tests error, summary.json and the gate
    leave them out of pass@k and count them as unjudged); an answer that runs out of
    maxHeartbeats is Lean's error on the answer, the model's failure. A resume with
    --lsrb-retry-errors checks the environment's attempts again and only them."""
    base = _blame_run(run_suite, tmp_path, tmp_path / "base", faulty=False)
    assert base.returncode == 1, base.stdout[-3000:]  # the two heartbeat answers fail
    res = _blame_run(
        run_suite,
        tmp_path,
        tmp_path / "cur",
        f"--lsrb-baseline={tmp_path / 'base'}",
        "--lsrb-min=pass_at_1=0.55",
        "--lsrb-max-drop=pass_at_1=0",
    )
    attempts = res.attempts()
    assert len(attempts) == 8, res.stdout[-3000:]
    fields = ("verification_outcome", "verification_error_domain", "verification_error_subkind")
    by_tactic = {a["tactic"]: tuple(a.get(f) for f in fields) for a in attempts}
    assert by_tactic == {
        "rfl": ("closed", None, None),
        "simp": ("lean_error", "model", "heartbeats"),
        "omega": ("timeout", "environment", None),
        "constructor": ("oom_or_crash", "environment", None),
        "refine ⟨?_, ?_⟩": ("oom_or_crash", "environment", "process_failed"),
        "rw [Nat.add_comm]": ("closed", None, None),
    }
    summary = res.summary()
    assert (summary["judged_attempts"], summary["infrastructure_attempts"]) == (5, 3)
    assert summary["verification_unjudged"] == 3
    assert summary["verification_error_domains"] == {"environment": 3, "model": 2}
    assert summary["verification_error_kinds"] == {"lean_error": 2, "oom_or_crash": 2, "timeout": 1}
    assert summary["valid_rate"] == 1.0  # the model answered all 8 validly
    assert summary["verification_success_rate"] == 3 / 5
    assert (summary["verification_pass_at_k_1"], summary["verification_pass_at_k_items"]) == (3 / 5, 5)
    # the tests: 3 pass, 2 fail (heartbeats), 3 error (the environment's)
    tail = res.stdout[-2000:]
    assert "3 passed" in tail and "2 failed" in tail and "3 errors" in tail, tail
    assert "check_timeout_s (wall clock)" in res.stdout and "do not count against the model" in res.stdout
    # the gate: pass_at_1 0.6 >= 0.55 (3/8 had the environment's failures counted), and the
    # items paired with the baseline are the 5 judged in both: no flip, no regression
    gate = json.loads((res.out_dir / "gate.json").read_text())
    assert (gate["regressed"], gate["exit_status"], gate["unjudged_current"]) == (False, 0, 3)
    by_threshold = {c["kind"]: c for c in gate["checks"]}
    assert by_threshold["min"]["current"] == 3 / 5
    drop = by_threshold["max_drop"]
    assert (drop["items"], drop["down"], drop["up"], drop["change"]) == (5, [], [], 0.0)
    assert res.returncode == 1  # errors and failures, no regression (6)

    # resume: the environment's attempts are checked again (the machine is fine now), the model's
    # verdicts stand
    log = tmp_path / "lean.log"
    log.unlink()
    again = _blame_run(
        run_suite, tmp_path, tmp_path / "cur", "--lsrb-resume", "--lsrb-retry-errors", faulty=False
    )
    rechecked = [json.loads(line).get("text", "") for line in log.read_text().splitlines()]
    answers = {t for t in INFRA_TACTICS if any(f"  {t}\n" in text for text in rechecked)}
    assert answers == set(INFRA_TACTICS), rechecked
    assert not any("simp" in text for text in rechecked)
    final = again.summary()
    assert (final["judged_attempts"], final["infrastructure_attempts"], final["verification_unjudged"]) == (
        8,
        0,
        0,
    )
    assert final["verification_pass_at_k_1"] == 6 / 8
