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

from pytest_lsrb.tactic.lean.outcome import (
    REPL_PROTOCOL_ERRORS,
    error_subkind,
    first_error,
    messages_from_reply,
)
from pytest_lsrb.tactic.lean.repl import ReplClient, read_transcript


def pairs(folder: Path) -> list[Path]:
    """Transcript bases X with both X.in and X.expected.out."""
    return sorted(
        p.with_suffix("") for p in folder.glob("*.in") if p.with_name(p.name[:-3] + ".expected.out").exists()
    )


def load(base: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return read_transcript(base.with_name(base.name + ".in")), read_transcript(
        base.with_name(base.name + ".expected.out")
    )


def test_every_transcript_error_has_a_known_subkind(transcripts: Path) -> None:
    bases = pairs(transcripts)
    assert len(bases) >= 60
    seen: set[str] = set()
    for base in bases:
        requests, replies = load(base)
        assert len(requests) == len(replies), base.name
        for reply in replies:
            for message in messages_from_reply(reply):
                if message.is_error:
                    kind = error_subkind(message.data)
                    assert kind != "other", (base.name, message.data)
                    seen.add(kind)
    assert {"unsolved_goals", "parse", "unknown_identifier", "termination"} <= seen


@pytest.mark.parametrize(
    ("name", "index", "subkind"),
    [
        ("invalid_tactic", 0, None),
        ("incomplete", 0, "unsolved_goals"),
        ("no_goal_sorry_2", 0, "no_goals"),
        ("self_proof_rw", 0, "termination"),
        ("tactic_sorry", 0, None),  # a command that leaves a sorry: a warning, no error
        ("def_eval", 0, None),
    ],
)
def test_known_cases(transcripts: Path, name: str, index: int, subkind: str | None) -> None:
    _, replies = load(transcripts / name)
    err = first_error(messages_from_reply(replies[index]))
    assert (error_subkind(err.data) if err else None) == subkind, replies[index]


def test_protocol_errors_are_the_repls_own_words(transcripts: Path) -> None:
    """`Unknown environment`/`Unknown proof state` replies: the harness's fault, not Lean's."""
    for name, index in (("unknown_environment", 0), ("unknown_proof_state", 1)):
        _, replies = load(transcripts / name)
        assert str(replies[index]["message"]).startswith(REPL_PROTOCOL_ERRORS), replies[index]


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
