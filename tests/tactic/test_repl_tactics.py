"""The reader and `valid` on the tactics of Lean's own REPL test transcripts (real Lean 4 tactics,
`../shared/data/lean-repl-transcripts/*.in`): each reads back as itself and is a Lean tactic,
except the transcripts' deliberate typo `exat 42` and the answers holding `sorry`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_lsrb.tactic.answer import read_answer

TRANSCRIPTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "lean-repl-transcripts"


def _tactics() -> list[str]:
    found: list[str] = []
    for path in sorted(TRANSCRIPTS.glob("*.in")):
        for chunk in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            try:
                request = json.loads(chunk)
            except ValueError:
                continue
            if isinstance(request, dict) and isinstance(request.get("tactic"), str):
                found.append(request["tactic"])
    return found


def _dedented(tactic: str) -> str:
    lines = tactic.strip("\n").split("\n")
    base = len(lines[0]) - len(lines[0].lstrip())
    return "\n".join(line[base:] if line[:base].strip() == "" else line for line in lines).rstrip()


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/data/lean-repl-transcripts is absent")
def test_every_repl_transcript_tactic_reads_back_and_is_valid() -> None:
    tactics = _tactics()
    assert len(tactics) >= 50
    misread = []
    for tactic in tactics:
        answer = read_answer(tactic)
        expected_valid = not answer.contains_sorry and not tactic.startswith("exat ")
        if answer.tactic != _dedented(tactic) or answer.valid is not expected_valid:
            misread.append((tactic, answer.tactic, answer.valid))
    assert misread == []
