"""The outcome classifier and the REPL client against Lean's own recorded REPL transcripts.

Each `X.in` holds requests, each `X.expected.out` the replies the real Lean REPL gave. The client
talks to a fake REPL executable that replays X.expected.out for X.in and checks every request it
receives equals the recorded one, so the framing on the wire is tested both ways.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lean_fakes import FAKE_REPL, install

from pytest_lsrb.core.errors import VERIFICATION_OUTCOME_DOMAINS
from pytest_lsrb.tactic.lean.outcome import (
    Verdict,
    error_subkind,
    judge_command_reply,
    judge_tactic_reply,
    messages_from_reply,
)
from pytest_lsrb.tactic.lean.repl import ReplClient, read_transcript


def pairs(folder: Path) -> list[Path]:
    """Transcript bases X with both X.in and X.expected.out."""
    return sorted(
        p.with_suffix("") for p in folder.glob("*.in") if p.with_name(p.name[:-3] + ".expected.out").exists()
    )


def judge(request: dict[str, Any], reply: dict[str, Any]) -> Verdict:
    return judge_tactic_reply(reply) if "tactic" in request else judge_command_reply(reply)


def load(base: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return read_transcript(base.with_name(base.name + ".in")), read_transcript(
        base.with_name(base.name + ".expected.out")
    )


def test_every_transcript_reply_classifies_into_a_known_outcome(transcripts: Path) -> None:
    bases = pairs(transcripts)
    assert len(bases) >= 60
    seen: set[str] = set()
    for base in bases:
        requests, replies = load(base)
        assert len(requests) == len(replies), base.name
        for request, reply in zip(requests, replies, strict=True):
            verdict = judge(request, reply)
            assert verdict.outcome in VERIFICATION_OUTCOME_DOMAINS, (base.name, verdict)
            if verdict.outcome == "lean_error":
                assert verdict.subkind and verdict.subkind != "other", (base.name, reply)
            seen.add(verdict.outcome)
            for message in messages_from_reply(reply):
                if message.is_error:
                    assert error_subkind(message.data) != "other", (base.name, message.data)
    assert {"closed", "progress", "lean_error", "reconstruction_failed"} <= seen


@pytest.mark.parametrize(
    ("name", "index", "outcome", "subkind"),
    [
        ("invalid_tactic", 1, "lean_error", "unknown_identifier"),  # `exact my_fake_premise`
        ("unknown_tactic", 1, "lean_error", "parse"),  # `exat 42`: <input>:1:1: unknown tactic
        ("proof_step", 3, "closed", None),  # `exact t`: Completed
        ("readme", 1, "progress", None),  # `apply Int.natAbs`: ⊢ Int remains
        ("readme", 2, "closed", None),
        ("by_cases", 1, "progress", None),  # two goals remain
        ("incomplete", 0, "lean_error", "unsolved_goals"),
        ("no_goal_sorry_2", 0, "lean_error", "no_goals"),
        ("app_type_mismatch", 4, "lean_error", "metavariables"),
        ("app_type_mismatch2", 4, "lean_error", "kernel"),
        ("tactic_mode_sorry", 1, "lean_error", "new_sorry"),
        ("Mathlib__test__exact", 4, "lean_error", "tactic_failed"),  # exact? could not close
        ("Mathlib__test__placeholder_synthesis", 1, "lean_error", "synthesis_failed"),
        ("self_proof_rw", 0, "lean_error", "termination"),
        ("unknown_proof_state", 1, "reconstruction_failed", "repl_protocol"),
        ("unknown_environment", 0, "reconstruction_failed", "repl_protocol"),
        ("tactic_sorry", 0, "progress", None),  # a command that leaves a sorry
        ("def_eval", 0, "closed", None),
    ],
)
def test_known_cases(transcripts: Path, name: str, index: int, outcome: str, subkind: str | None) -> None:
    requests, replies = load(transcripts / name)
    verdict = judge(requests[index], replies[index])
    assert (verdict.outcome, verdict.subkind) == (outcome, subkind), verdict


def test_progress_keeps_the_remaining_goals(transcripts: Path) -> None:
    requests, replies = load(transcripts / "readme")
    assert judge(requests[1], replies[1]).goals == ("x : Unit\n⊢ Int",)


def test_parse_error_is_recognised_inside_a_command_reply(transcripts: Path) -> None:
    _, replies = load(transcripts / "line_breaks")
    kinds = [error_subkind(m.data) for m in messages_from_reply(replies[0]) if m.is_error]
    assert kinds == ["unsolved_goals", "parse"]


def test_raw_line_breaks_in_requests_are_dropped_like_lean_does(transcripts: Path) -> None:
    requests, replies = load(transcripts / "invalid_line_break")
    assert requests[0]["cmd"] == "theorem foo : 1 = 1 := bysorry"
    assert "bysorry" in replies[0]["messages"][0]["data"]


def replay_through_client(bases: list[Path], repl: Path) -> int:
    count = 0
    for base in bases:
        requests, replies = load(base)
        with ReplClient([str(repl), str(base)], memory_mb=1024) as client:
            for request, expected in zip(requests, replies, strict=True):
                assert client.send(request, timeout_s=20) == expected, base.name
                count += 1
    return count


SAMPLE = (
    "readme",
    "proof_step",
    "invalid_tactic",
    "unknown_tactic",
    "line_breaks",
    "invalid_line_break",
    "Mathlib__test__exact",
    "by_cases",
    "name_generator",
    "app_type_mismatch2",
)


def test_repl_client_replays_transcripts_through_a_fake_repl(transcripts: Path, tmp_path: Path) -> None:
    """A sample covering every reply shape; the slow test below replays all of them."""
    repl = install(tmp_path / "bin", "repl", FAKE_REPL)
    assert replay_through_client([transcripts / n for n in SAMPLE], repl) > 30


@pytest.mark.slow
def test_repl_client_replays_every_transcript_through_a_fake_repl(transcripts: Path, tmp_path: Path) -> None:
    """One REPL process per transcript; every reply must equal the recorded one."""
    repl = install(tmp_path / "bin", "repl", FAKE_REPL)
    assert replay_through_client(pairs(transcripts), repl) > 150
