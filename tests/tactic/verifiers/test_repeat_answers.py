"""Samples that repeat an answer (temperature 0 gives k identical samples) cost one Lean check:
the verdict is reused for the same goal, profile and answer when Lean decided it (closed,
progress, lean_error); a wall-clock timeout is checked again. Counted on the fake `lean`'s log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lean_verifiers import row, rules

from pytest_lsrb.engine.verifier import VerifierConfig
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier


def _lean_runs(fake_lean: Path) -> list[str]:
    log = fake_lean / "lean.log"
    calls = [json.loads(c) for c in log.read_text().splitlines()] if log.exists() else []
    return [c["text"] for c in calls if c["argv"] != ["--version"]]


def _verifier(tmp_path: Path, timeout_s: float) -> SyntheticVerifier:
    profile = tmp_path / "p.toml"
    profile.write_text(f'schema_version = 1\nsynthetic_header = "core"\ncheck_timeout_s = {timeout_s}\n')
    return SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(profile)}))


def test_identical_samples_are_checked_once(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules(
        monkeypatch,
        {
            "contains": "exact hp",
            "messages": [{"severity": "error", "data": "type mismatch\n  hp\nhas type\n  p", "at": "hp"}],
        },
    )
    v = _verifier(tmp_path, 120)
    try:
        answers = ["exact ⟨hp, hq⟩"] * 4 + ["exact hp"] * 3 + [" exact ⟨hp, hq⟩ "]
        results = [v.verify(row(), a, attempt_seed=i) for i, a in enumerate(answers)]
    finally:
        v.close()
    assert [r.outcome for r in results] == ["closed"] * 4 + ["lean_error"] * 3 + ["closed"]
    runs = _lean_runs(fake_lean)
    assert len(runs) == 1 + 2  # the control, then each distinct answer once
    assert sum("exact ⟨hp, hq⟩" in t for t in runs) == 1 and sum("exact hp\n" in t for t in runs) == 1
    other = row(goal="p : Prop\nhp : p\n⊢ p", item_id="t2")
    v2 = _verifier(tmp_path, 120)
    try:
        assert v2.verify(other, "exact hp", attempt_seed=9).outcome == "lean_error"
    finally:
        v2.close()
    assert len(_lean_runs(fake_lean)) == 3 + 2  # another goal is its own check (control + answer)


def test_a_wall_clock_timeout_is_checked_again(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAN_MODE", "hang-if:decide_slowly")
    v = _verifier(tmp_path, 1)
    try:
        results = [v.verify(row(), "decide_slowly", attempt_seed=i) for i in range(2)]
    finally:
        v.close()
    assert [r.outcome for r in results] == ["timeout", "timeout"]
    assert sum("decide_slowly" in t for t in _lean_runs(fake_lean)) == 2
