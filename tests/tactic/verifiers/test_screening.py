"""Screening (issue #41 item 5): over a REPL, each answer runs first on the sorry's proof state
and only answers that close there compile the patched file. The verdicts must be the ones the
file alone gives, on the same answers: the stand-in REPL (tests/fakes/stand_in_repl.py) answers
`cmd` and `tactic` requests with the real REPL's shapes, and each verifier runs once screened
and once not. Answers that "close" on the proof state but fail the acceptance rule (`stop`,
`apply?`, `native_decide`) are among them."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lean_verifiers import _replay_with, row

from pytest_lsrb.engine.verifier import VerificationResult, VerifierConfig
from pytest_lsrb.tactic.verifiers.base import LeanVerifierBase
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

STAND_IN = Path(__file__).resolve().parents[2] / "fakes" / "stand_in_repl.py"
GOAL = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"
SOURCE = "import Repo.Defs\n\ntheorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"

# answer -> the verdict the whole file gives it (outcome, subkind)
ANSWERS: dict[str, tuple[str, str | None]] = {
    "exact ⟨hp, hq⟩": ("closed", None),
    "constructor\nexact hp\nexact hq": ("closed", None),
    "constructor": ("progress", None),
    "simp": ("progress", None),
    "exact hq": ("lean_error", "type_mismatch"),
    "exact no_such_lemma": ("lean_error", "unknown_identifier"),
    "exat 42": ("lean_error", "parse"),
    "constructor\nexact hq": ("lean_error", "type_mismatch"),
    # close on the proof state, fail the acceptance rule on the file
    "stop": ("lean_error", "new_sorry"),
    "apply?": ("lean_error", "new_sorry"),
    "native_decide": ("lean_error", "native_decide"),
}


def verdict(r: VerificationResult) -> tuple[Any, ...]:
    """What screening must not change (the detail says where Lean said it, which may differ)."""
    return (r.attempted, r.success, r.outcome, r.subkind)


def _cmds(log: Path, needle: str) -> int:
    """File elaborations: `cmd` requests that hold the declaration."""
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text().splitlines() if needle in json.loads(line).get("cmd", ""))


def synthetic(tmp_path: Path, screen: bool) -> SyntheticVerifier:
    profile = tmp_path / f"repl-{screen}.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    )
    return SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profile), "screen": screen})
    )


@pytest.fixture
def stand_in_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "stand_in.log"
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    return log


@pytest.fixture
def synthetic_pair(tmp_path: Path) -> Iterator[tuple[SyntheticVerifier, SyntheticVerifier]]:
    pair = (synthetic(tmp_path, True), synthetic(tmp_path, False))
    yield pair
    for v in pair:
        v.close()


def check(v: LeanVerifierBase, answer: str, **kw: Any) -> VerificationResult:
    r = row(GOAL, **kw)
    return v.check(r, answer, v.profile_for(r))


@pytest.mark.slow
def test_synthetic_screened_verdicts_are_the_file_s(
    synthetic_pair: tuple[SyntheticVerifier, SyntheticVerifier], stand_in_log: Path
) -> None:
    screened, plain = synthetic_pair
    got = {a: (check(screened, a), check(plain, a)) for a in ANSWERS}
    assert {a: verdict(s) for a, (s, _) in got.items()} == {a: verdict(p) for a, (_, p) in got.items()}
    assert {a: (p.outcome, p.subkind) for a, (_, p) in got.items()} == ANSWERS
    # the screened decided the failures on the proof state: their detail says so
    assert "proof state" in (got["exact hq"][0].detail or "")
    assert "proof state" not in (got["exact hq"][1].detail or "")


@pytest.mark.slow
def test_only_answers_that_close_on_the_state_compile_the_file(tmp_path: Path, stand_in_log: Path) -> None:
    for screen in (True, False):
        v = synthetic(tmp_path, screen)
        try:
            for a in ANSWERS:
                check(v, a)
        finally:
            v.close()
        files = _cmds(stand_in_log, "lsrb_goal")
        stand_in_log.unlink()
        closing_on_state = [
            "exact ⟨hp, hq⟩",
            "constructor\nexact hp\nexact hq",
            "stop",
            "apply?",
            "native_decide",
        ]
        # the control once, then each answer's file (screened: only those that close on the state)
        assert files == 1 + (len(closing_on_state) if screen else len(ANSWERS)), screen


@pytest.mark.slow
def test_repo_replay_screened_verdicts_are_the_file_s(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch, stand_in_log: Path
) -> None:
    profile = f'replay_method = "repl"\nrepl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    screened = _replay_with(tmp_path / "a", monkeypatch, SOURCE, profile)
    plain = _replay_with(tmp_path / "b", monkeypatch, SOURCE, profile)
    screened.config = VerifierConfig(
        **{**vars(screened.config), "options": {**screened.config.options, "screen": True}}
    )
    try:
        got = {a: (check(screened, a), check(plain, a)) for a in ANSWERS}
    finally:
        screened.close()
        plain.close()
    assert {a: verdict(s) for a, (s, _) in got.items()} == {a: verdict(p) for a, (_, p) in got.items()}
    # over the REPL the sorries are diffed as lists; `stop` adds none, its sorryAx fails it
    expected = {**ANSWERS, "stop": ("lean_error", "sorry_axiom"), "apply?": ("lean_error", "sorry_axiom")}
    assert {a: (p.outcome, p.subkind) for a, (_, p) in got.items()} == expected
    assert "proof state" in (got["exact no_such_lemma"][0].detail or "")


_LINES = st.sampled_from(
    [
        "constructor",
        "exact hp",
        "exact hq",
        "simp",
        "exact no_such_x",
        "trivial",
        "stop",
        "native_decide",
        "exat 1",
        "-- a comment",
    ]
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_LINES, min_size=1, max_size=4).map("\n".join))
def test_any_block_of_tactics_gets_the_same_verdict_screened(
    synthetic_pair: tuple[SyntheticVerifier, SyntheticVerifier], answer: str
) -> None:
    """A law over answers not chosen by hand: screened == unscreened."""
    screened, plain = synthetic_pair
    assert verdict(check(screened, answer)) == verdict(check(plain, answer)), answer


@pytest.mark.slow
def test_a_sorry_that_shares_its_block_is_not_screened(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch, stand_in_log: Path
) -> None:
    """After `constructor` the sorry's state is one of two goals: the goals an answer leaves there
    are the next tactic's, so only the file can judge it (no `tactic` request is sent)."""
    source = (
        "import Repo.Defs\n\ntheorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
        "  constructor\n  sorry\n  exact hq\n"
    )
    profile = f'replay_method = "repl"\nrepl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    v = _replay_with(tmp_path, monkeypatch, source, profile)
    v.config = replace(v.config, options={**v.config.options, "screen": True})
    try:
        r = row(GOAL, start_line=5, end_line=5)
        v.check(r, "simp", v.profile_for(r))
    finally:
        v.close()
    sent = [json.loads(line) for line in stand_in_log.read_text().splitlines()]
    assert any("theorem t" in e.get("cmd", "") for e in sent)  # the file was checked ...
    assert not any("tactic" in e for e in sent)  # ... and the state never asked
