"""Each way text leaves the process masks every key (issue #46, items 1-2): for any keys and any
text a server could send, no key and no start of one of 8+ characters survives into an
attempts.jsonl line, a JSON file of the run, a test report (JUnit XML and `-rA` read those) or a
terminal line; and what leaves stays readable (field names, the engine's own words)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _pytest._io import TerminalWriter
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_lsrb.core.redaction import MIN_PREFIX, RUN_KEYS, KeyRing
from pytest_lsrb.engine.records import OWN_WORD_FIELDS
from pytest_lsrb.output.files import read_json, record_line, write_json_atomic
from pytest_lsrb.session.egress import guard_terminal, redact_report

KEY_ALPHABET = "".join(chr(c) for c in range(33, 127))
KEYS = st.text(alphabet=KEY_ALPHABET + " ", min_size=1, max_size=80).map(str.strip).filter(bool)
WORDS = st.sampled_from(["simp", "intro x", " ", "\n", "\x00", "***", "none", "é", "\\n"])


@contextmanager
def holding(keys: list[str]) -> Iterator[None]:
    """The process's key ring holding `keys` only, for the example's length."""
    saved = RUN_KEYS.__dict__.copy()
    fresh = KeyRing()
    fresh.add(*keys)
    RUN_KEYS.__dict__.update(fresh.__dict__)
    try:
        yield
    finally:
        RUN_KEYS.__dict__.update(saved)


@st.composite
def echoes(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Keys, and texts a server could send holding them whole, cut or split."""
    keys = draw(st.lists(KEYS, min_size=1, max_size=2))
    texts = []
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(keys))
        cut = draw(st.integers(min(len(key), MIN_PREFIX), len(key)))
        texts.append(draw(WORDS) + key[:cut] + draw(WORDS) + key + draw(WORDS))
    return keys, texts


def survivors(text: str, keys: list[str]) -> list[str]:
    return [k for k in keys if k[:MIN_PREFIX] in text]


def strings(value: Any) -> Iterator[str]:
    """Every string value inside `value` (dict keys are names: see the JSON file's law)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)


def record(texts: list[str]) -> dict[str, Any]:
    return {
        "item_id": "nat_add_zero",
        "sample_index": 0,
        "verification_mode": "none",
        "raw_output": texts[0],
        "prompt": [{"role": "user", "content": t} for t in texts],
        "generation_error_message": texts[-1],
        "search_tree": {"steps": [{"tactic": t, "result": t} for t in texts]},
    }


@given(echoes())
@example((["simp"], ["simp", "intro simp"]))
@example((["x"], ["intro x"]))
@example((["none"], ["none"]))
@settings(max_examples=60, deadline=None)
def test_an_attempts_line_holds_no_key(case: tuple[list[str], list[str]]) -> None:
    keys, texts = case
    with holding(keys):
        line, _ = record_line(record(texts))
    written = json.loads(line)
    assert set(written) == set(record(texts))  # field names as they were
    own = {k: written[k] for k in OWN_WORD_FIELDS & set(written)}
    assert own == {"item_id": "nat_add_zero", "verification_mode": "none"}
    free = {k: v for k, v in written.items() if k not in OWN_WORD_FIELDS}
    assert [s for s in strings(free) if survivors(s, keys)] == []


@given(echoes())
@settings(max_examples=30, deadline=None)
def test_a_json_file_of_the_run_holds_no_key(
    tmp_path_factory: Any, case: tuple[list[str], list[str]]
) -> None:
    keys, texts = case
    path: Path = tmp_path_factory.mktemp("json") / "summary.json"
    summary = {"served_models": {t: 1 for t in texts}, "errors": texts, "shard_index": 0, "max_tokens": 5}
    with holding(keys):
        write_json_atomic(path, summary)
    written = read_json(path)
    assert {"served_models", "errors", "shard_index", "max_tokens"} == set(written)
    long_keys = [k for k in keys if len(k) >= 16]
    assert [s for s in written["errors"] if survivors(s, keys)] == []
    assert [s for s in written["served_models"] if survivors(s, long_keys)] == []  # a name: long keys


@given(echoes())
@settings(max_examples=30, deadline=None)
def test_a_test_report_holds_no_key(case: tuple[list[str], list[str]]) -> None:
    keys, texts = case
    report = pytest.TestReport(
        "t.py::test[a#s0]",
        ("t.py", 1, "test"),
        {},
        "failed",
        f"the tactic {texts[0]!r} did not verify",
        "call",
        sections=[("Captured stdout call", t) for t in texts],
        user_properties=[("lsrb_answer", texts[-1]), ("lsrb_latency_ms", 3.0)],
    )
    with holding(keys):
        redact_report(report, RUN_KEYS.secrets())
    shown = [str(report.longrepr), *(c for _, c in report.sections), str(report.user_properties[0][1])]
    assert [s for s in shown if survivors(s, keys)] == []
    assert report.user_properties[1] == ("lsrb_latency_ms", 3.0)


class _Config:
    """What `guard_terminal` asks of pytest's config: its terminal reporter and writer."""

    def __init__(self, writer: TerminalWriter) -> None:
        self.writer = writer
        self.pluginmanager = self

    def get_plugin(self, name: str) -> object:
        return object() if name == "terminalreporter" else None

    def get_terminal_writer(self) -> TerminalWriter:
        return self.writer


@given(echoes())
@settings(max_examples=30, deadline=None)
def test_a_terminal_line_holds_no_key(case: tuple[list[str], list[str]]) -> None:
    keys, texts = case
    out = io.StringIO()
    writer = TerminalWriter(out)
    guard_terminal(_Config(writer))
    guard_terminal(_Config(writer))  # (once only)
    with holding(keys):
        for text in texts:
            writer.line(f"lsrb: {text}")
            writer.write(text, bold=True)
    assert survivors(out.getvalue(), keys) == []
    assert out.getvalue().count("lsrb: ") == len(texts)
