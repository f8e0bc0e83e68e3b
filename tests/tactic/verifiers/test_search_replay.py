"""`--lsrb-answer search` in repo_replay (issue #41 item 2): the row's file at its commit (the fake
git and lake of tests/tactic/lean/lean_fakes.py) is loaded once into the stand-in REPL, the
sorry's proof state found by its position, the model shown the file around the sorry, and the
proof found re-checked in the patched file by the acceptance rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_lean_verifiers import _replay_with, row

from pytest_lsrb.engine.verifier import VerifierConfig
from pytest_lsrb.tactic.lean.proofstate import ProofStart
from pytest_lsrb.tactic.prompts import file_context
from pytest_lsrb.tactic.search import Asked, search

STAND_IN = Path(__file__).resolve().parents[2] / "fakes" / "stand_in_repl.py"
SOURCE = (
    "import Repo.Defs\n\ntheorem other : True := by\n  sorry\n\n"
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"
)


@pytest.mark.slow
def test_a_search_in_the_row_s_file(tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "requests.log"
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    profile = f'replay_method = "repl"\nrepl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    v = _replay_with(tmp_path, monkeypatch, SOURCE, profile)
    # as a run's plan builds it: the found proof is a block of tactics, guarded as a proof
    v.config = VerifierConfig(
        **{**vars(v.config), "options": {**v.config.options, "answer": "search", "screen": True}}
    )
    r = row(start_line=7, end_line=7)
    answers = iter(["[{s}] constructor", "[{s}] exact hp", "[{s}] exact hq"])
    shown: list[str] = []

    def ask(prompt: str, state: int, goal: str) -> Asked:
        shown.append(prompt)
        return Asked(next(answers).format(s=state), True)

    try:
        start = v.proof_start(r)
        assert isinstance(start, ProofStart), start
        assert start.goal == "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"  # the target's sorry, not `other`'s
        source = v.source_file(r)
        assert source is not None
        found = search(
            start,
            ask,
            file_context=file_context(source.text, source.start_line),
            max_iterations=10,
            max_failures=3,
            refuse=lambda t: None,
        )
        verdict = v.verify(r, found.proof or "", attempt_seed=0)
    finally:
        v.close()
    assert (found.stop, found.proof) == ("completed", "constructor\nexact hp\nexact hq")
    assert (verdict.outcome, verdict.success) == ("closed", True), verdict.detail
    # the file context, as SorryDB cuts it: the whole file up to the sorry's line
    assert f"```lean4\n{SOURCE.rstrip()}\n```" in shown[0]
    sent: list[dict[str, Any]] = [json.loads(x) for x in log.read_text().splitlines()]
    files = [e for e in sent if "theorem t" in e.get("cmd", "")]
    # the baseline once for the search, then the proof's patched file once (screened first)
    assert len(files) == 2 and "  sorry" in files[0]["cmd"] and "exact hq" in files[1]["cmd"]
