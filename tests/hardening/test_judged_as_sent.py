"""What is judged is what the server sent (issue #46, item 2): a key is masked where text leaves
the process (attempts.jsonl, JUnit XML, the terminal, the response cache), never in the answer the
verifier reads. A key that is also a word of the answer (`simp`) used to turn every right answer
into `***` and a failure; a key too short to mask without hiding text is said so in one sentence
at start. Through a real process and a real HTTP server speaking OpenAI's API."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama

ANSWER_WORD = "simp"  # a right tactic, and the key
ITEMS = 3


def _run(run_suite: Any, fake: FakeOllama, key: str, tmp_path: Path, *more: str) -> Any:
    return run_suite(
        "--lsrb-adapter=openai",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}/v1",
        "--lsrb-api-key-env=LSRB_WORD_KEY",
        f"--lsrb-max-items={ITEMS}",
        f"--lsrb-cache-dir={tmp_path / 'cache'}",
        f"--junitxml={tmp_path / 'junit.xml'}",
        "-rA",
        *more,
        env={"LSRB_WORD_KEY": key},
    )


@pytest.mark.smoke
def test_a_right_answer_that_is_the_key_passes_and_is_stored_masked(run_suite: Any, tmp_path: Path) -> None:
    with FakeOllama(require_key=ANSWER_WORD, reply=ANSWER_WORD) as fake:
        result = _run(run_suite, fake, ANSWER_WORD, tmp_path)
        assert len(fake.chat_requests()) == ITEMS  # every request carried the key (else 401)
    printed = result.stdout + result.stderr
    assert result.returncode == 0, printed[-3000:]  # judged on `simp`: three passes
    assert f"{ITEMS} passed" in result.stdout
    records = result.attempts()
    assert len(records) == ITEMS
    assert all(r["valid"] and r["raw_output"] == "***" and r["tactic"] == "***" for r in records), records
    # one sentence at start, naming the variable, never the key
    warnings = [line for line in printed.splitlines() if "the key in $LSRB_WORD_KEY is 4 characters" in line]
    assert len(warnings) == 1 and warnings[0].startswith("lsrb: WARNING: --lsrb-api-key-env:"), printed
    # the key, echoed as the answer, reached no artifact and no terminal line
    junit = (tmp_path / "junit.xml").read_text()
    assert ANSWER_WORD not in (result.out_dir / "attempts.jsonl").read_text()
    assert ANSWER_WORD not in junit and ANSWER_WORD not in printed
    # ...nor the cache: stored masked, a replay would judge `***`
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone() == (0,)


@pytest.mark.parametrize(
    ("key", "answer", "stored"),
    [("x", "intro x", "intro ***"), ("none", "exact none", "exact ***")],
    ids=["one-letter", "a-word-of-ours"],
)
def test_a_short_key_is_masked_in_records_that_stay_readable(
    run_suite: Any, tmp_path: Path, key: str, answer: str, stored: str
) -> None:
    """The issue's `intro x`; and `none` (a placeholder key some servers' docs give), which is also
    a word of the record's own (`verification_mode: none`): the engine's words are kept, so the
    summary and a resume read the records as written."""
    with FakeOllama(require_key=key, reply=answer) as fake:
        result = _run(run_suite, fake, key, tmp_path)
        asked = len(fake.chat_requests())
        resumed = _run(run_suite, fake, key, tmp_path, "--lsrb-resume")
        assert len(fake.chat_requests()) == asked == ITEMS  # every attempt read back as finished
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    records = result.attempts()
    assert [r["tactic"] for r in records] == [stored] * ITEMS
    assert all(r["valid"] and r["verification_mode"] == "none" for r in records)
    assert result.summary()["valid_rate"] == 1.0
    assert f"the key in $LSRB_WORD_KEY is {len(key)} character" in result.stdout
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-3000:]


def test_a_long_key_is_not_warned_about_and_a_wrong_answer_still_fails(
    run_suite: Any, tmp_path: Path
) -> None:
    key = "sk-long-enough-7f3a9c1e5b2d4f60"
    with FakeOllama(require_key=key, reply=f"I cannot help: {key}") as fake:
        result = _run(run_suite, fake, key, tmp_path)
    printed = result.stdout + result.stderr
    assert result.returncode == 1 and f"{ITEMS} failed" in result.stdout, printed[-3000:]
    assert "WARNING" not in printed and key[:8] not in printed
    assert all(r["raw_output"] == "I cannot help: ***" and not r["valid"] for r in result.attempts())
    assert key[:8] not in (tmp_path / "junit.xml").read_text()
