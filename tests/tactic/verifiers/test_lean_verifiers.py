"""The synthetic and repo_replay verifiers end to end against fake Lean executables.

The fakes answer with Lean's JSON messages chosen by rules (tests/tactic/lean/lean_fakes.py), so every
outcome path runs through the real verifier, backend, subprocess and classifier code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from lean_fakes import path_without_lean

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.verifier import VERIFIERS, VerifierConfig, create_verifier
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.verifiers.repo_replay import RepoReplayVerifier
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

COMMIT = "a" * 40


def row(goal: str = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", **kw: Any) -> TacticRow:
    data: dict[str, Any] = {
        "item_id": "t1",
        "repo_remote": "https://github.com/example/repo",
        "repo_branch": "main",
        "repo_commit": COMMIT,
        "repo_lean_version": "v4.22.0",
        "path": "Repo/Basic.lean",
        "start_line": 4,
        "start_column": 2,
        "end_line": 4,
        "end_column": 7,
        "goal_text": goal,
    }
    data.update(kw)
    return TacticRow.model_validate(data)


def rules(monkeypatch: pytest.MonkeyPatch, *items: dict[str, Any]) -> None:
    monkeypatch.setenv("FAKE_LEAN_RULES", json.dumps(list(items)))


def error_at(contains: str, data: str, at: str, to_end: bool = False) -> dict[str, Any]:
    return {
        "contains": contains,
        "messages": [{"severity": "error", "data": data, "at": at, "to_end": to_end}],
    }


@pytest.fixture
def synthetic(tmp_path: Path) -> SyntheticVerifier:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "default.toml").write_text('schema_version = 1\nsynthetic_header = "core"\n')
    (profiles / "skipped.toml").write_text(
        'schema_version = 1\nrepo_remote = "https://github.com/example/skipme"\nskip = true\n'
        'skip_reason = "too big"\n'
    )
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", profiles_path=str(profiles), timeout_s=2.0))
    yield v
    v.close()


def test_registered() -> None:
    assert {"synthetic", "repo_replay"} <= set(VERIFIERS)


def test_without_lean_every_attempt_is_toolchain_missing(
    synthetic: SyntheticVerifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_without_lean())
    res = synthetic.verify(row(), "exact ⟨hp, hq⟩", attempt_seed=1)
    assert (res.attempted, res.success, res.outcome) == (True, False, "toolchain_missing")
    assert res.error_domain == "environment" and res.is_infrastructure
    assert "not on PATH" in (res.detail or "") and res.profile_id == "default"


def test_closed_progress_and_lean_error(
    synthetic: SyntheticVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules(
        monkeypatch,
        error_at("constructor", "unsolved goals\ncase right\n⊢ q", "by", to_end=True),
        error_at("exact foo", "Unknown identifier `foo`", "foo"),
        error_at("exact (hp", "unexpected token ')'; expected term", "(hp"),
    )
    assert synthetic.verify(row(), "exact ⟨hp, hq⟩", attempt_seed=1).outcome == "closed"
    progress = synthetic.verify(row(), "constructor", attempt_seed=2)
    assert (progress.outcome, progress.success, progress.error_kind) == ("progress", False, None)
    err = synthetic.verify(row(), "exact foo", attempt_seed=3)
    assert (err.outcome, err.subkind, err.error_domain) == ("lean_error", "unknown_identifier", "model")
    assert synthetic.verify(row(), "exact (hp", attempt_seed=4).subkind == "parse"
    # the control script ran once for the goal, then one run per tactic
    calls = (fake_lean / "lean.log").read_text().splitlines()
    assert len(calls) == 1 + 4


def test_control_failure_is_reconstruction_failed(
    synthetic: SyntheticVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules(monkeypatch, error_at("Knight", "unknown identifier 'Knight'", "Knight"))
    goal = "h : Knight = 1\n⊢ True"
    res = synthetic.verify(row(goal), "trivial", attempt_seed=1)
    assert (res.outcome, res.error_domain) == ("reconstruction_failed", "harness")
    assert "does not compile" in (res.detail or "")
    synthetic.verify(row(goal), "simp", attempt_seed=2)
    assert len((fake_lean / "lean.log").read_text().splitlines()) == 1  # control result cached


def test_tactic_hang_is_timeout(
    synthetic: SyntheticVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAN_MODE", "hang-if:decide")
    res = synthetic.verify(row(), "decide", attempt_seed=1)
    assert (res.outcome, res.error_domain) == ("timeout", "model")


def test_guards_before_lean(synthetic: SyntheticVerifier, fake_lean: Path) -> None:
    unrestatable = synthetic.verify(row("x : ℕ\n⊢ f ⋯ = 0"), "simp", attempt_seed=1)
    assert (unrestatable.outcome, unrestatable.error_domain) == ("skipped_unrestatable", "environment")
    cmd = synthetic.verify(row(), "trivial #eval IO.println 1", attempt_seed=1)
    assert (cmd.outcome, cmd.subkind) == ("forbidden_token", "command")
    skipped = synthetic.verify(row(repo_remote="https://github.com/example/skipme"), "simp", attempt_seed=1)
    assert (skipped.attempted, skipped.outcome, skipped.profile_id) == (False, "not_attempted", "skipped")
    assert not (fake_lean / "lean.log").exists()


def test_mathlib_header_without_a_project_says_so(tmp_path: Path, fake_lean: Path) -> None:
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", profiles_path=None))
    res = v.verify(row("n : ℕ\n⊢ n = n"), "rfl", attempt_seed=1)
    assert (res.outcome, res.subkind) == ("toolchain_missing", "no_mathlib_project")


def test_synthetic_over_the_repl(tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """replay_method = repl: control as a command, the tactic as a proof step (fake REPL replays
    a session recorded from the real Lean REPL for exactly these requests)."""
    session = tmp_path / "session"
    control = "set_option autoImplicit false\n\nexample\n    (x : Unit) :\n    Nat := by\n  sorry\n"
    session.with_suffix(".in").write_text(
        json.dumps({"cmd": control}) + "\n\n" + json.dumps({"tactic": "apply Int.natAbs", "proofState": 0})
    )
    session.with_suffix(".expected.out").write_text(
        json.dumps(
            {
                "sorries": [
                    {
                        "proofState": 0,
                        "pos": {"line": 6, "column": 2},
                        "goal": "x : Unit\n⊢ Nat",
                        "endPos": {"line": 6, "column": 7},
                    }
                ],
                "messages": [
                    {
                        "severity": "warning",
                        "pos": {"line": 3, "column": 0},
                        "endPos": {"line": 3, "column": 7},
                        "data": "declaration uses 'sorry'",
                    }
                ],
                "env": 0,
            }
        )
        + "\n\n"
        + json.dumps(
            {"proofStatus": "Incomplete: open goals remain", "proofState": 1, "goals": ["x : Unit\n⊢ Int"]}
        )
        + "\n\n"
    )
    profile = tmp_path / "repl.toml"
    profile.write_text(
        f'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{tmp_path / "bin" / "repl"}", "{session}"]\n'
    )
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", profiles_path=str(profile)))
    res = v.verify(row("x : Unit\n⊢ Nat"), "apply Int.natAbs", attempt_seed=1)
    v.close()
    assert (res.outcome, res.detail) == ("progress", "1 goal(s) remain")


def test_invalid_profile_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\nmemory_mb = 'lots'\n")
    with pytest.raises(LsrbUsageError, match=r"bad\.toml: field 'memory_mb'"):
        create_verifier(VerifierConfig(mode="repo_replay", profiles_path=str(bad)))


# -- repo_replay ---------------------------------------------------------------------------------

SOURCE = "import Repo.Defs\n\ntheorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"


@pytest.fixture
def replay(tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch) -> RepoReplayVerifier:
    tree = tmp_path / "tree"
    (tree / "Repo").mkdir(parents=True)
    (tree / "Repo" / "Basic.lean").write_text(SOURCE)
    (tree / "lake-manifest.json").write_text('{"packages": [{"name": "mathlib"}]}')
    monkeypatch.setenv("FAKE_GIT_TREE", str(tree))
    monkeypatch.setenv("FAKE_GIT_COMMIT", COMMIT)
    profile = tmp_path / "p.toml"
    profile.write_text("schema_version = 1\ncheck_timeout_s = 5\nbuild_timeout_s = 30\n")
    v = RepoReplayVerifier(
        VerifierConfig(mode="repo_replay", profiles_path=str(profile), cache_dir=str(tmp_path / "cache"))
    )
    yield v
    v.close()


def checkout_digest(root: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(root.rglob("*.lean")))).hexdigest()


def test_replay_clones_and_builds_once_and_never_touches_the_checkout(
    replay: RepoReplayVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules(
        monkeypatch,
        error_at("exact hp", "type mismatch\n  hp\nhas type\n  p", "hp"),
        error_at("constructor", "unsolved goals\ncase right\n⊢ q", "by", to_end=True),
    )
    closed = replay.verify(row(), "exact ⟨hp, hq⟩", attempt_seed=1)
    checkout = replay.cache_root / "github.com__example__repo" / COMMIT
    before = checkout_digest(checkout)
    wrong = replay.verify(row(), "exact hp", attempt_seed=2)
    progress = replay.verify(row(), "constructor", attempt_seed=3)
    assert (closed.outcome, closed.success, closed.profile_id) == ("closed", True, "p")
    assert (wrong.outcome, wrong.subkind) == ("lean_error", "type_mismatch")
    assert progress.outcome == "progress"
    assert checkout_digest(checkout) == before and (checkout / "Repo" / "Basic.lean").read_text() == SOURCE
    git_calls = (fake_lean / "git.log").read_text().splitlines()
    assert sum(c.startswith("fetch") for c in git_calls) == 1
    lake_calls = [c.split("\t")[0] for c in (fake_lean / "lake.log").read_text().splitlines()]
    assert lake_calls == ["exe cache get", "build"]
    lean_calls = [json.loads(c) for c in (fake_lean / "lean.log").read_text().splitlines()]
    assert len(lean_calls) == 1 + 3  # the baseline once, then one run per tactic
    assert all(Path(c["cwd"]) == checkout and not c["argv"][-1].startswith(str(checkout)) for c in lean_calls)


def test_replay_span_without_sorry_is_baseline_failed(replay: RepoReplayVerifier, fake_lean: Path) -> None:
    res = replay.verify(
        row(start_line=3, start_column=8, end_line=3, end_column=13), "exact ⟨hp, hq⟩", attempt_seed=1
    )
    assert (res.outcome, res.subkind) == ("baseline_failed", "no_sorry_at_span")


def test_replay_baseline_and_environment_failures(
    replay: RepoReplayVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules(monkeypatch, error_at("Repo.Defs", "unknown module prefix 'Repo'", "Repo.Defs"))
    res = replay.verify(row(), "simp", attempt_seed=1)
    assert (res.outcome, res.error_domain) == ("baseline_failed", "environment")


def test_replay_checkout_and_build_failures(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GIT_FAIL", "1")
    v = RepoReplayVerifier(VerifierConfig(mode="repo_replay", cache_dir=str(tmp_path / "c1")))
    assert v.verify(row(), "simp", attempt_seed=1).outcome == "checkout_failed"
    monkeypatch.delenv("FAKE_GIT_FAIL")
    tree = tmp_path / "tree2"
    tree.mkdir()
    monkeypatch.setenv("FAKE_GIT_TREE", str(tree))
    monkeypatch.setenv("FAKE_LAKE_BUILD_RC", "1")
    v2 = RepoReplayVerifier(VerifierConfig(mode="repo_replay", cache_dir=str(tmp_path / "c2")))
    assert v2.verify(row(), "simp", attempt_seed=1).outcome == "build_failed"
    assert v2.verify(row(), "simp", attempt_seed=2).outcome == "build_failed"
    builds = [c for c in (fake_lean / "lake.log").read_text().splitlines() if c.startswith("build")]
    assert len(builds) == 1  # a failed build is remembered, not retried per sample


def test_replay_without_toolchain_clones_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_without_lean())
    v = RepoReplayVerifier(VerifierConfig(mode="repo_replay", cache_dir=str(tmp_path / "c")))
    res = v.verify(row(), "simp", attempt_seed=1)
    assert res.outcome == "toolchain_missing" and not (tmp_path / "c").exists()
