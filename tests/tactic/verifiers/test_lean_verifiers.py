"""The synthetic and repo_replay verifiers end to end against fake Lean executables.

The fakes answer with Lean's JSON messages chosen by rules (tests/tactic/lean/lean_fakes.py), so every
outcome path runs through the real verifier, backend, subprocess and classifier code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lean_fakes import path_without_lean

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.suite import load_suite
from pytest_lsrb.engine.verifier import VERIFIERS, VerifierConfig, create_verifier
from pytest_lsrb.tactic.lean.goal import Unrestatable, restate
from pytest_lsrb.tactic.lean.script import control_script, tactic_script
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
def synthetic(tmp_path: Path) -> Iterator[SyntheticVerifier]:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "default.toml").write_text('schema_version = 1\nsynthetic_header = "core"\n')
    (profiles / "skipped.toml").write_text(
        'schema_version = 1\nrepo_remote = "https://github.com/example/skipme"\nskip = true\n'
        'skip_reason = "too big"\n'
    )
    v = SyntheticVerifier(
        VerifierConfig(mode="synthetic", timeout_s=2.0, options={"profiles": str(profiles)})
    )
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
    assert res.error_domain == "environment"
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
    calls = [c for c in (fake_lean / "lean.log").read_text().splitlines() if ".lean" in c]
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


# Lean 4.2x's words when an answer uses up maxHeartbeats (Lean's throwMaxHeartbeat; older Leans
# say `at 'whnf'` and `(use 'set_option maxHeartbeats <num>' to set the limit)`).
HEARTBEATS = (
    "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) has been reached\n\n"
    "Note: Use `set_option maxHeartbeats <num>` to set the limit.\n\n"
    "Hint: Additional diagnostic information may be available using the "
    "`set_option diagnostics true` command."
)


@pytest.mark.parametrize(
    ("mode", "tactic", "outcome", "subkind", "domain"),
    [
        ("hang-if:decide", "decide", "timeout", None, "environment"),  # past check_timeout_s
        ("segv-if:decide", "decide", "oom_or_crash", None, "environment"),  # SIGSEGV
        ("die-if:decide", "decide", "oom_or_crash", None, "environment"),  # SIGKILL, not our cap
        ("abort-if:decide", "decide", "oom_or_crash", "process_failed", "environment"),  # exit 134
        ("rules", "simp_all", "lean_error", "heartbeats", "model"),  # the answer's own budget
        ("rules", "simp_nested", "lean_error", "heartbeats", "model"),
    ],
)
def test_who_is_blamed_for_a_check_that_ends_badly(
    synthetic: SyntheticVerifier,
    fake_lean: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    tactic: str,
    outcome: str,
    subkind: str | None,
    domain: str,
) -> None:
    """A wall-clock timeout or a crash says nothing about the answer (the machine's load and health
    decide it): the environment's. Running out of maxHeartbeats, the deterministic per-answer
    budget, is Lean's error on the answer: the model's."""
    monkeypatch.setenv("FAKE_LEAN_MODE", mode)
    rules(
        monkeypatch,
        error_at("simp_all", HEARTBEATS, "simp_all"),
        error_at("simp_nested", "Tactic `simp` failed with a nested error:\n" + HEARTBEATS, "simp_nested"),
    )
    res = synthetic.verify(row(), tactic, attempt_seed=1)
    assert (res.outcome, res.subkind, res.error_domain) == (outcome, subkind, domain), res.detail
    assert res.success is False


def test_guards_before_lean(synthetic: SyntheticVerifier, fake_lean: Path) -> None:
    unrestatable = synthetic.verify(row("x : ℕ\n⊢ f ⋯ = 0"), "simp", attempt_seed=1)
    assert (unrestatable.outcome, unrestatable.error_domain) == ("skipped_unrestatable", "environment")
    cmd = synthetic.verify(row(), "trivial #eval IO.println 1", attempt_seed=1)
    assert (cmd.outcome, cmd.subkind) == ("forbidden_token", "command")
    skipped = synthetic.verify(row(repo_remote="https://github.com/example/skipme"), "simp", attempt_seed=1)
    assert (skipped.attempted, skipped.outcome, skipped.profile_id) == (False, "skipped", "skipped")
    assert not (fake_lean / "lean.log").exists()


@pytest.mark.parametrize(
    ("answer", "subkind"),
    [
        # closes a false goal with a clean axiom report on a real Lean (issue #29): never reaches it
        ("set_option debug.skipKernelTC true in exact (by decide +kernel : False).elim", "option"),
        ("exact _root_.sorryAx _ false", "sorry"),
        ("exact @_root_.«sorryAx» _ false", "sorry"),
    ],
)
def test_soundness_holes_never_close_and_stay_the_models(
    synthetic: SyntheticVerifier, fake_lean: Path, answer: str, subkind: str
) -> None:
    res = synthetic.verify(row(), answer, attempt_seed=1)
    assert (res.outcome, res.subkind, res.error_domain, res.success) == (
        "forbidden_token",
        subkind,
        "model",
        False,
    )
    assert not (fake_lean / "lean.log").exists()


def test_an_answer_that_raises_its_own_limits_never_reaches_the_environments_column(
    synthetic: SyntheticVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`set_option maxHeartbeats 0 in` + a looping tactic would be a wall-clock `timeout` (the
    environment's): it is refused as the model's before Lean runs."""
    monkeypatch.setenv("FAKE_LEAN_MODE", "hang-if:repeat")
    res = synthetic.verify(row(), "set_option maxHeartbeats 0 in\n  repeat simp", attempt_seed=1)
    assert (res.outcome, res.subkind, res.error_domain) == ("forbidden_token", "option", "model")


def test_a_tactic_with_its_nested_block_is_checked_as_one_tactic(
    synthetic: SyntheticVerifier, fake_lean: Path
) -> None:
    res = synthetic.verify(row(), "have h : p ∧ q := by\n  exact ⟨hp, hq⟩", attempt_seed=1)
    assert res.outcome == "closed", res.detail
    checked = [
        e["text"] for e in map(json.loads, (fake_lean / "lean.log").read_text().splitlines()) if "text" in e
    ][-1]
    assert "  have h : p ∧ q := by\n    exact ⟨hp, hq⟩\n" in checked  # the block keeps its shape
    two = synthetic.verify(row(), "constructor\nexact hp", attempt_seed=1)
    assert (two.outcome, two.subkind) == ("forbidden_token", "multiline")


def test_proof_mode_checks_the_whole_body(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "default.toml").write_text('schema_version = 1\nsynthetic_header = "core"\n')
    v = SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profiles), "answer": "proof"})
    )
    rules(monkeypatch, error_at("exact hq", "unknown identifier 'hq'", "hq"))
    assert v.verify(row(), "constructor\n· exact hp\n· exact hp", attempt_seed=1).outcome == "closed"
    wrong = v.verify(row(), "constructor\n· exact hp\n· exact hq", attempt_seed=1)
    assert (wrong.outcome, wrong.error_domain) == ("lean_error", "model")
    text = [
        e["text"] for e in map(json.loads, (fake_lean / "lean.log").read_text().splitlines()) if "text" in e
    ][-1]
    assert "  constructor\n  · exact hp\n  · exact hq\n" in text
    v.close()


def test_mathlib_header_without_a_project_says_so(tmp_path: Path, fake_lean: Path) -> None:
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": None}))
    res = v.verify(row("n : ℕ\n⊢ n = n"), "rfl", attempt_seed=1)
    assert (res.outcome, res.subkind) == ("toolchain_missing", "no_mathlib_project")


def _repl_session(path: Path, exchanges: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """A recorded REPL session: requests in X.in, replies in X.expected.out (the fake replays it)."""
    path.with_suffix(".in").write_text(
        "\n\n".join(json.dumps(q, ensure_ascii=False) for q, _ in exchanges) + "\n\n"
    )
    path.with_suffix(".expected.out").write_text(
        "\n\n".join(json.dumps(r, ensure_ascii=False) for _, r in exchanges) + "\n\n"
    )


def _at(line: int, col: int, end_col: int) -> dict[str, Any]:
    return {"pos": {"line": line, "column": col}, "endPos": {"line": line, "column": end_col}}


def test_synthetic_over_the_repl_elaborates_the_header_once(tmp_path: Path, fake_lean: Path) -> None:
    """replay_method = repl: `import Mathlib` runs once, then the control and every sample run as
    commands in that environment. The fake REPL answers only this exact sequence of requests,
    so k samples of one goal cost one header elaboration."""
    goal = "x : ℕ\n⊢ x + 0 = x"
    restated = restate(goal)
    assert not isinstance(restated, Unrestatable)
    control = control_script(restated, "mathlib")
    body = control.body
    probe = control.probe
    assert probe is not None
    probe_line = probe.line - control.header_lines
    answers = ["simp", "stop simp", "native_decide"]
    replies: list[dict[str, Any]] = [
        {
            "sorries": [{"proofState": 0, **_at(6, 2, 7), "goal": goal}],
            "messages": [
                {"severity": "warning", **_at(3, 18, 27), "data": "declaration uses `sorry`"},
                {
                    "severity": "info",
                    **_at(probe_line, 0, 13),
                    "data": "'lsrb_goal' depends on axioms: [sorryAx]",
                },
            ],
            "env": 1,
        },
        {
            "messages": [
                {
                    "severity": "info",
                    **_at(probe_line, 0, 13),
                    "data": "'lsrb_goal' does not depend on any axioms",
                }
            ],
            "env": 2,
        },
        {
            "sorries": [{"proofState": 1, **_at(6, 2, 11), "goal": goal}],
            "messages": [
                {"severity": "warning", **_at(3, 18, 27), "data": "declaration uses `sorry`"},
                {
                    "severity": "info",
                    **_at(probe_line, 0, 13),
                    "data": "'lsrb_goal' depends on axioms: [sorryAx]",
                },
            ],
            "env": 3,
        },
        {
            "messages": [
                {
                    "severity": "info",
                    **_at(probe_line, 0, 13),
                    "data": "'lsrb_goal' depends on axioms: [Lean.ofReduceBool, Lean.trustCompiler]",
                }
            ],
            "env": 4,
        },
    ]
    requests = [{"cmd": body, "env": 0}] + [
        {"cmd": tactic_script(restated, "mathlib", t).body, "env": 0} for t in answers
    ]
    session = tmp_path / "session"
    _repl_session(session, [({"cmd": "import Mathlib"}, {"env": 0}), *zip(requests, replies, strict=True)])
    project = tmp_path / "project"
    project.mkdir()
    profile = tmp_path / "repl.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "mathlib"\n'
        f'lean_project = "{project}"\n'
        f'repl_command = ["{tmp_path / "bin" / "repl"}", "{session}"]\n'
    )
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(profile)}))
    try:
        results = [v.check(row(goal), t, v.profile_for(row(goal))) for t in answers]
    finally:
        v.close()
    assert [(r.outcome, r.subkind) for r in results] == [
        ("closed", None),
        ("lean_error", "new_sorry"),
        ("lean_error", "native_decide"),
    ]


# Lean's own messages for the sorry-equivalent answers (lean4 tests/lean/run: `apply?` logs
# `Try this: refine ...` and admits; `stop` is `repeat sorry`; `native_decide` depends on
# Lean.ofReduceBool): none of them may be `closed`, with the guard out of the way (check()).
_SORRY_WARNING = {"severity": "warning", "data": "declaration uses 'sorry'", "at": "lsrb_goal"}
_CASES = [
    ("stop simp", [_SORRY_WARNING], ["sorryAx"], "new_sorry"),
    (
        "apply?",
        [
            {"severity": "information", "data": "Try this: refine And.intro ?_ ?_", "at": "lsrb_goal"},
            _SORRY_WARNING,
        ],
        ["sorryAx"],
        "new_sorry",
    ),
    # a sorry no token guard sees: the goal closed by a lemma that was itself proved by sorry
    ("exact lemma_admitted_upstream hp hq", [], ["sorryAx"], "sorry_axiom"),
    ("native_decide", [], ["Lean.ofReduceBool", "Lean.trustCompiler"], "native_decide"),
    ("exact ⟨hp, hq⟩ #exit", [], None, "axioms_unreported"),
]


@pytest.fixture
def patient(tmp_path: Path) -> Iterator[SyntheticVerifier]:
    """A synthetic verifier whose checks never time out under a loaded machine (a fake Lean is a
    Python process: its start-up alone can take seconds there)."""
    profiles = tmp_path / "patient"
    profiles.mkdir()
    (profiles / "default.toml").write_text('schema_version = 1\nsynthetic_header = "core"\n')
    v = SyntheticVerifier(
        VerifierConfig(mode="synthetic", timeout_s=120.0, options={"profiles": str(profiles)})
    )
    yield v
    v.close()


@pytest.mark.parametrize(("tactic", "messages", "axioms", "subkind"), _CASES)
def test_sorry_equivalents_are_never_closed(
    patient: SyntheticVerifier,
    fake_lean: Path,
    monkeypatch: pytest.MonkeyPatch,
    tactic: str,
    messages: list[dict[str, Any]],
    axioms: list[str] | None,
    subkind: str,
) -> None:
    rule: dict[str, Any] = {"contains": tactic, "messages": messages}
    if axioms is not None:
        rule["axioms"] = axioms
    rules(monkeypatch, rule)
    res = patient.check(row(), tactic, patient.profile_for(row()))
    assert (res.outcome, res.subkind, res.success) == ("lean_error", subkind, False)


def test_native_decide_closes_when_the_profile_allows_it(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "native.toml"
    profile.write_text(
        'schema_version = 1\nsynthetic_header = "core"\nallow_native_decide = true\ncheck_timeout_s = 120\n'
    )
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(profile)}))
    rules(monkeypatch, {"contains": "native_decide", "messages": [], "axioms": ["Lean.ofReduceBool"]})
    assert v.verify(row(), "native_decide", attempt_seed=1).outcome == "closed"
    v.close()


def test_run_options_allow_native_decide_and_set_heartbeats(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--lsrb-allow-native-decide and --lsrb-max-heartbeats reach the verifier (VerifierConfig)."""
    profile = tmp_path / "plain.toml"
    profile.write_text(
        'schema_version = 1\nsynthetic_header = "core"\ncheck_timeout_s = 120\nmax_heartbeats = 5\n'
    )
    config = VerifierConfig(
        mode="synthetic",
        options={"profiles": str(profile), "allow_native_decide": True, "max_heartbeats": 400000},
    )
    v = SyntheticVerifier(config)
    rules(
        monkeypatch,
        {"contains": "native_decide", "messages": [], "axioms": ["Lean.ofReduceBool"]},
        # the profile's 5 heartbeats must not be what Lean runs with: the run's 400000 wins
        error_at("set_option maxHeartbeats 5\n", "(deterministic) timeout at `whnf`", "native_decide"),
    )
    res = v.verify(row(), "native_decide", attempt_seed=1)
    v.close()
    assert res.outcome == "closed", res.detail


# What Lean prints for the search tactics (lean4 src/Lean/Elab/Tactic/LibrarySearch.lean):
# `exact?` that finds a proof adds a `Try this: exact ...` suggestion (info) and closes the goal;
# `apply?` without a closing lemma lists `Try this: refine ...` suggestions and admits the goal
# (`admitGoal`: the declaration uses 'sorry', sorryAx in its axioms).
_EXACT_FOUND = {
    "contains": "exact?",
    "messages": [{"severity": "info", "data": "Try this: exact ⟨hp, hq⟩", "at": "exact?"}],
    "axioms": [],
}
_APPLY_PARTIAL = {
    "contains": "apply?",
    "messages": [
        {"severity": "info", "data": "Try this: refine ⟨hp, ?_⟩\n-- Remaining subgoals: ⊢ q", "at": "apply"},
        {"severity": "warning", "data": "declaration uses 'sorry'", "at": "lsrb_goal"},
    ],
    "axioms": ["sorryAx"],
}


def test_search_tactics_follow_sorrydb_by_default(
    synthetic: SyntheticVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SorryDB's verifier accepts a search tactic whose proof is complete (its ProveAllStrategy
    sends `exact?`); `apply?`'s admitted goal is caught by the axiom check; `stop` never runs."""
    rules(monkeypatch, _EXACT_FOUND, _APPLY_PARTIAL)
    assert synthetic.verify(row(), "exact?", attempt_seed=1).outcome == "closed"
    partial = synthetic.verify(row(), "apply?", attempt_seed=1)
    assert partial.outcome != "closed" and partial.error_domain == "model", partial
    res = synthetic.verify(row(), "stop simp", attempt_seed=1)
    assert (res.outcome, res.subkind) == ("forbidden_token", "sorry")


def test_forbid_search_tactics_refuses_them_before_lean(tmp_path: Path, fake_lean: Path) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "default.toml").write_text('schema_version = 1\nsynthetic_header = "core"\n')
    config = VerifierConfig(
        mode="synthetic", options={"profiles": str(profiles), "forbid_search_tactics": True}
    )
    v = SyntheticVerifier(config)
    for tactic in ("apply?", "exact?", "rw?", "first | exact? | simp"):
        res = v.verify(row(), tactic, attempt_seed=1)
        assert (res.outcome, res.subkind) == ("forbidden_token", "search"), tactic
    v.close()
    assert not (fake_lean / "lean.log").exists()


def test_invalid_profile_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\nmemory_mb = 'lots'\n")
    with pytest.raises(LsrbUsageError, match=r"bad\.toml: field 'memory_mb'"):
        create_verifier(VerifierConfig(mode="repo_replay", options={"profiles": str(bad)}))


# -- repo_replay ---------------------------------------------------------------------------------

SOURCE = "import Repo.Defs\n\ntheorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"


@pytest.fixture
def replay(tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RepoReplayVerifier]:
    tree = tmp_path / "tree"
    (tree / "Repo").mkdir(parents=True)
    (tree / "Repo" / "Basic.lean").write_text(SOURCE)
    (tree / "lake-manifest.json").write_text('{"packages": [{"name": "mathlib"}]}')
    monkeypatch.setenv("FAKE_GIT_TREE", str(tree))
    monkeypatch.setenv("FAKE_GIT_COMMIT", COMMIT)
    profile = tmp_path / "p.toml"
    profile.write_text("schema_version = 1\ncheck_timeout_s = 5\nbuild_timeout_s = 30\n")
    v = RepoReplayVerifier(
        VerifierConfig(
            mode="repo_replay", cache_dir=str(tmp_path / "cache"), options={"profiles": str(profile)}
        )
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
    lean_calls = [c for c in lean_calls if c["argv"] != ["--version"]]
    assert len(lean_calls) == 1 + 3  # the baseline once, then one run per tactic
    assert all(Path(c["cwd"]) == checkout and not c["argv"][-1].startswith(str(checkout)) for c in lean_calls)


def test_replay_splices_a_block_answer_at_the_sorry(
    replay: RepoReplayVerifier, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tactic with its nested block (and, in proof mode, a whole body) stands at the sorry's
    column; Lean's positions below it, the `#print axioms` report included, move down with it."""
    rules(monkeypatch, error_at("exact hq.elim", "type mismatch\n  hq.elim\nhas type", "hq.elim"))
    closed = replay.verify(row(), "have h : p ∧ q := by\n  exact ⟨hp, hq⟩", attempt_seed=1)
    assert closed.outcome == "closed", closed.detail
    wrong = replay.verify(row(), "have h : p ∧ q := by\n  exact hq.elim", attempt_seed=2)
    assert (wrong.outcome, wrong.subkind) == ("lean_error", "type_mismatch")
    texts = [
        e["text"] for e in map(json.loads, (fake_lean / "lean.log").read_text().splitlines()) if "text" in e
    ]
    assert "by\n  have h : p ∧ q := by\n    exact ⟨hp, hq⟩\n" in texts[1]


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


# -- repo_replay: the acceptance rule ---------------------------------------------------------


def _replay_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, profile_text: str
) -> RepoReplayVerifier:
    tree = tmp_path / "tree"
    (tree / "Repo").mkdir(parents=True, exist_ok=True)
    (tree / "Repo" / "Basic.lean").write_text(source)
    (tree / "lean-toolchain").write_text("leanprover/lean4:v4.22.0\n")
    (tree / "lake-manifest.json").write_text('{"packages": [{"name": "mathlib", "rev": "4bbdccd9c5f8"}]}')
    monkeypatch.setenv("FAKE_GIT_TREE", str(tree))
    monkeypatch.setenv("FAKE_GIT_COMMIT", COMMIT)
    profile = tmp_path / "p.toml"
    profile.write_text(
        "schema_version = 1\ncheck_timeout_s = 120\nbuild_timeout_s = 30\nmathlib_cache = false\n"
        + profile_text
    )
    return RepoReplayVerifier(
        VerifierConfig(
            mode="repo_replay", cache_dir=str(tmp_path / "cache"), options={"profiles": str(profile)}
        )
    )


TWO_DECLS = (
    "import Repo.Defs\n\ntheorem other : True := by\n  sorry\n\n"
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"
)


@pytest.mark.parametrize(
    ("tactic", "rule", "outcome"),
    [
        ("exact ⟨hp, hq⟩", {"axioms": []}, ("closed", None)),
        # the other declaration's sorry is untouched; the target's warning is gone
        ("exact lemma_admitted_upstream hp hq", {"axioms": ["sorryAx"]}, ("lean_error", "sorry_axiom")),
        (
            "stop simp",
            {
                "messages": [{"severity": "warning", "data": "declaration uses 'sorry'", "at": "t (p q"}],
                "axioms": ["sorryAx"],
            },
            ("lean_error", "new_sorry"),
        ),
        ("native_decide", {"axioms": ["Lean.ofReduceBool"]}, ("lean_error", "native_decide")),
    ],
)
def test_replay_file_mode_accepts_only_clean_proofs(
    tmp_path: Path,
    fake_lean: Path,
    monkeypatch: pytest.MonkeyPatch,
    tactic: str,
    rule: dict[str, Any],
    outcome: tuple[str, str | None],
) -> None:
    """`lake lean FILE -- --json` on the patched copy; the other declaration keeps its sorry
    (Lean's warning at `other` stays where it was) and the target's axioms decide."""
    other_warning = {"severity": "warning", "data": "declaration uses 'sorry'", "at": "other"}
    rules(
        monkeypatch,
        {"contains": "theorem other", "messages": [other_warning]},
        {
            "contains": tactic,
            "messages": rule.get("messages", []),
            "axioms": rule["axioms"],
        },
    )
    v = _replay_with(tmp_path, monkeypatch, TWO_DECLS, "")
    try:
        r = row(start_line=7, end_line=7)
        res = v.check(r, tactic, v.profile_for(r))
    finally:
        v.close()
    assert (res.outcome, res.subkind) == outcome, res.detail
    calls = [json.loads(c)["argv"] for c in (fake_lean / "lean.log").read_text().splitlines()]
    assert all(c[0] == "--json" for c in calls if c != ["--version"])  # via `lake lean FILE -- --json`
    assert res.toolchain == "lean-toolchain: leanprover/lean4:v4.22.0; mathlib: 4bbdccd9c5f8"


MODULE_SOURCE = (
    "module\n\npublic import Repo.Defs\n\ntheorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"
)
# The same lines without the module system (a module file takes the file route: its axioms can
# only be asked from a file that imports it, tests/tactic/verifiers/test_replay_verdicts.py).
PLAIN_SOURCE = MODULE_SOURCE.replace(
    "module\n\npublic import Repo.Defs", "import Repo.Defs\n\nimport Repo.More"
)
GOAL = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"


@pytest.mark.parametrize("heartbeats", [None, 1000])
def test_replay_over_the_repl_sends_the_header_and_elaborates_it_once(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch, heartbeats: int | None
) -> None:
    """The REPL's first command is the whole header (the imports), the baseline and each sample
    then run in its environment (a `module` file takes the file route: test_module_files.py).
    The fake REPL answers only this exact sequence, so 3 samples cost one prefix elaboration,
    and the `sorries` lists are diffed by position as SorryDB does. With the profile's
    `max_heartbeats`, every command after the header opens with `set_option maxHeartbeats N`
    (as `-DmaxHeartbeats=N` does in file mode); Lean's positions are one line further down."""
    head = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by"
    by_col = head.index("by")

    option = f"set_option maxHeartbeats {heartbeats}\n" if heartbeats else ""
    d = 1 if heartbeats else 0  # the option line

    def body(proof: str) -> str:
        return f"{option}{head}\n  {proof}\n\n#print axioms t\n\n"

    def axioms(listed: str) -> dict[str, Any]:
        data = f"'t' depends on axioms: [{listed}]" if listed else "'t' does not depend on any axioms"
        return {"severity": "info", **_at(4 + d, 0, 13), "data": data}

    warning = {"severity": "warning", **_at(1 + d, 8, 9), "data": "declaration uses `sorry`"}
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"cmd": "import Repo.Defs\n\nimport Repo.More\n"}, {"env": 0}),
        (
            {"cmd": body("sorry"), "env": 0},
            {
                "sorries": [{"proofState": 0, **_at(2 + d, 2, 7), "goal": GOAL}],
                "messages": [warning, axioms("sorryAx")],
                "env": 1,
            },
        ),
        ({"cmd": body("exact ⟨hp, hq⟩"), "env": 0}, {"messages": [axioms("")], "env": 2}),
        (
            {"cmd": body("stop simp"), "env": 0},
            {
                "sorries": [{"proofState": 1, **_at(2 + d, 2, 11), "goal": GOAL}],
                "messages": [warning, axioms("sorryAx")],
                "env": 3,
            },
        ),
        (
            {"cmd": body("constructor"), "env": 0},
            {
                "messages": [
                    {
                        "severity": "error",
                        "pos": {"line": 1 + d, "column": by_col},
                        "endPos": {"line": 2 + d, "column": 13},
                        "data": "unsolved goals\ncase left\n⊢ p",
                    }
                ],
                "env": 4,
            },
        ),
    ]
    session = tmp_path / "session"
    _repl_session(session, exchanges)
    v = _replay_with(
        tmp_path,
        monkeypatch,
        PLAIN_SOURCE,
        f'replay_method = "repl"\nrepl_command = ["{tmp_path / "bin" / "repl"}", "{session}"]\n'
        + (f"max_heartbeats = {heartbeats}\n" if heartbeats else ""),
    )
    try:
        r = row(start_line=6, end_line=6)
        results = [v.check(r, t, v.profile_for(r)) for t in ("exact ⟨hp, hq⟩", "stop simp", "constructor")]
    finally:
        v.close()
    assert [(x.outcome, x.subkind) for x in results] == [
        ("closed", None),
        ("lean_error", "new_sorry"),
        ("progress", None),
    ], [x.detail for x in results]


CONTEXT_SOURCE = (
    "import Mathlib\n\nopen Finset BigOperators\n\nnamespace Foo\n\nvariable {α : Type*} [DecidableEq α]\n\n"
    "lemma helper : True := trivial\n\n"
    "/-- The doc. -/\ntheorem t (s : Finset α) (h : 0 < #s) :\n    s.Nonempty := by\n  sorry\n\nend Foo\n"
)


def test_context_is_the_file_up_to_the_sorry_as_sorrydb_cuts_it(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--lsrb-context file: the raw lines of the file up to and including the sorry's line (the
    last --lsrb-context-lines of them; unset: the whole file), as SorryDB's strategies cut it
    (`file_text.splitlines()[: loc.end_line]`); the target marked."""
    from lsrb_testing import mock_config

    from pytest_lsrb.adapters.base import SamplingConfig
    from pytest_lsrb.adapters.mock import MockAdapter
    from pytest_lsrb.core.selection import Case
    from pytest_lsrb.engine.no_verifier import NoVerifier
    from pytest_lsrb.engine.task import AttemptContext
    from pytest_lsrb.tactic.prompts import file_context
    from pytest_lsrb.tactic.task import TacticTask, build_messages

    suite_dir = Path(__file__).resolve().parents[3] / "suites" / "goal_to_tactic_proposal_v1"
    v = _replay_with(tmp_path, monkeypatch, CONTEXT_SOURCE, "")
    try:
        r = row(start_line=14, end_line=14)
        source = v.source_file(r)
        ctx = AttemptContext(
            case=Case(row=r, sample_index=0, attempt_seed=0),
            adapter=MockAdapter(mock_config(TacticTask().mock_answer)),
            verifier=v,
            sampling=SamplingConfig(),
            suite=load_suite(suite_dir),
            options={"context": "file", "context_lines": None},
        )
        prompted = TacticTask()._prompt(ctx, r)[0]
        short = TacticTask()._prompt(
            dataclasses.replace(ctx, options={"context": "file", "context_lines": 2}), r
        )[0]
        goal_only = TacticTask()._prompt(dataclasses.replace(ctx, options={"context": "goal"}), r)[0]
        unprompted = TacticTask()._prompt(dataclasses.replace(ctx, verifier=NoVerifier()), r)[0]
    finally:
        v.close()
    assert source is not None and source.text == CONTEXT_SOURCE
    whole = "\n".join(CONTEXT_SOURCE.split("\n")[:14])
    assert file_context(source.text, 14) == whole and whole.endswith("s.Nonempty := by\n  sorry")
    suite = load_suite(suite_dir)
    plain = build_messages(suite, r)
    assert prompted == build_messages(suite, r, whole) and goal_only == plain and unprompted == plain
    assert prompted[-1].content.endswith(plain[-1].content)
    assert "```lean\nimport Mathlib\n\nopen Finset" in prompted[-1].content  # the file from its start
    assert "```lean\n    s.Nonempty := by\n  sorry\n```" in short[-1].content  # the last 2 lines
    assert "the `sorry` on the last line, column " in prompted[-1].content


def test_replay_over_the_repl_without_a_command_needs_a_lean_release(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No repl_command: the REPL is built for the checkout's Lean version (lean/replbuild.py),
    which a nightly toolchain does not name; the item is the environment's, before any Lean run."""
    v = _replay_with(tmp_path, monkeypatch, PLAIN_SOURCE, 'replay_method = "repl"\nrepl_backend = "repl"\n')
    (tmp_path / "tree" / "lean-toolchain").write_text("leanprover/lean4:nightly-2025-01-01\n")
    try:
        r = row(start_line=6, end_line=6)
        res = v.check(r, "exact ⟨hp, hq⟩", v.profile_for(r))
    finally:
        v.close()
    assert res.outcome == "checkout_failed" and "no Lean release named" in str(res.detail), res.detail
    assert not (fake_lean / "lean.log").exists() or "--json" not in (fake_lean / "lean.log").read_text()
