"""Whatever a model writes is data: it is recorded exactly, printed safely, and carried between
xdist processes without breaking the run.

A JSON reply can hold a lone surrogate (`"\\ud800"`), NUL, terminal escapes or right-to-left
marks. execnet cannot send a str holding a lone surrogate, so a record that carried one as a
dict used to end a `-n 2` run in INTERNALERROR; records now travel as the bytes of their line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama
from hostile_kit import any_character
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.engine.task import Judgement
from pytest_lsrb.output.files import iter_attempts, record_line

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"

any_text = st.text(alphabet=any_character)


@given(text=any_text, number=st.floats(allow_nan=True, allow_infinity=True))
def test_a_record_line_is_utf8_json_that_reads_back_exactly(text: str, number: float) -> None:
    line, seen = record_line({"raw_output": text, "item_id": text, "latency_ms": number})
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line, whatever the text holds
    back = json.loads(line.decode("utf-8"))  # strict UTF-8: no lone surrogate bytes
    assert back == seen
    assert back["raw_output"] == text and back["item_id"] == text
    assert back["latency_ms"] == (number if number == number and abs(number) != float("inf") else None)


@given(text=any_text)
def test_a_judgement_message_is_safe_to_print_and_send(text: str) -> None:
    message = Judgement("fail", text).message
    message.encode("utf-8")  # no lone surrogate
    controls = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n", "\t"}
    assert not controls & set(message)  # no terminal escape, NUL or carriage return left
    if text.isprintable():
        assert message == text  # ordinary text is left alone


HOSTILE = "\ud800simp\x00 \u202e\x1b[31mred\x1b[0m\r\nexact ℕ"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(reply=HOSTILE) as server:
        yield server


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_hostile_model_output_is_recorded_exactly(
    tmp_path: Path, fake: FakeOllama, workers: tuple[str, ...]
) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}",
        "--lsrb-max-items=6",
        f"--lsrb-output-dir={out}",
        *workers,
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, errors="strict", cwd=tmp_path, env=env, timeout=300
    )
    # The answers are wrong (the first line is not a tactic): tests fail, nothing errors.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert "6 failed" in proc.stdout
    assert "\x1b[31m" not in proc.stdout  # the model's terminal escape is shown, not obeyed
    raw = (out / "attempts.jsonl").read_bytes()
    raw.decode("utf-8")
    records = list(iter_attempts(out / "attempts.jsonl"))
    assert len(records) == 6
    assert all(r["raw_output"] == HOSTILE for r in records)
    assert all(not r["valid"] for r in records)
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["attempts"] == 6 and summary["valid_rate"] == 0.0
