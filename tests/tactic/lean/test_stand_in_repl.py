"""The stand-in REPL (tests/fakes/stand_in_repl.py) against the real REPL's recorded sessions:
for the transcripts its rules cover, it answers every request exactly as the real REPL did
(`cmd` with sorries and proof states, `tactic` on a state, an unknown state, a tactic that does
not parse, Lean's error recovery, pickling an environment and a proof state)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.tactic.lean.repl import read_transcript

STAND_IN = Path(__file__).resolve().parents[2] / "fakes" / "stand_in_repl.py"
EXACT = [
    "tactic_sorry",
    "unknown_proof_state",
    "unknown_tactic",
    "invalid_tactic",
    "pickle_environment",
    "pickle_proof_state_1",
]


def replay(requests: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """The stand-in's replies to `requests` (pickle files written under `folder`)."""
    moved = []
    for r in requests:
        r = dict(r)
        for key in ("pickleTo", "unpickleEnvFrom", "unpickleProofStateFrom"):
            if key in r:
                r[key] = str(folder / Path(r[key]).name)
        moved.append(r)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n\n" for r in moved)
    done = subprocess.run(
        [sys.executable, str(STAND_IN)], input=text, capture_output=True, text=True, timeout=60, check=True
    )
    return [json.loads(b) for b in done.stdout.split("\n\n") if b.strip()]


@pytest.mark.slow
@pytest.mark.parametrize("name", EXACT)
def test_the_stand_in_answers_as_the_real_repl(name: str, transcripts: Path, tmp_path: Path) -> None:
    requests = read_transcript(transcripts / f"{name}.in")
    expected = read_transcript(transcripts / f"{name}.expected.out")
    assert replay(requests, tmp_path) == expected


@pytest.mark.slow
def test_proof_state_numbers_follow_the_real_repl(transcripts: Path, tmp_path: Path) -> None:
    """`proof_step` applies a tactic the stand-in has no rule for (`apply Int.natAbs`): the goals
    differ, the protocol (keys, state numbers) does not. (`proof_branching` needs `apply` and case
    tags the stand-in does not model.)"""
    expected = read_transcript(transcripts / "proof_step.expected.out")
    got = replay(read_transcript(transcripts / "proof_step.in"), tmp_path)
    assert [sorted(r) for r in got] == [sorted(r) for r in expected]
    assert [r.get("proofState") for r in got] == [r.get("proofState") for r in expected]
    assert got[-1] == expected[-1]  # `exact t` after `have t : Nat := 42` completes
