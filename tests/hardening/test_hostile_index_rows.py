"""Hostile index files: every broken index ends in one sentence naming file and line; every
index that loads runs through selection, the prompt, the mock baseline and the record writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hostile_kit import (
    assert_one_sentence,
    byte_mutations,
    dumps_line,
    field_mutations,
    hostile_text,
    json_values,
    outcome,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_lsrb.adapters import AdapterConfig, create_adapter
from pytest_lsrb.core.rows import load_jsonl
from pytest_lsrb.engine.option_table import dest
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.runner import Runner
from pytest_lsrb.engine.task import mock_answers
from pytest_lsrb.engine.verifier import VerifierConfig, create_verifier
from pytest_lsrb.output.files import dumps_record
from pytest_lsrb.session.prepare import prepare_suite_run
from pytest_lsrb.tactic.rows import TacticRow

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
BUILTIN = [json.loads(line) for line in (SUITE / "index.jsonl").read_text("utf-8").splitlines() if line]
FUZZ = settings(
    max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def index_bytes(rows: list[dict[str, Any]], ascii_only: bool = True) -> bytes:
    return b"".join(dumps_line(r, ascii_only) + b"\n" for r in rows)


def prepared(index: Path, **options: Any) -> SuiteRun:
    values = {dest("index"): str(index), **{dest(k): v for k, v in options.items()}}
    return prepare_suite_run(SUITE, lambda name: values.get(name), REPO)


def run_every_case(run: SuiteRun) -> list[AttemptRecord]:
    """What a run does with each case, minus pytest: the mock answer, the record, its JSON line."""
    adapter = create_adapter(AdapterConfig(name="mock", model="", answers=mock_answers(run.task.mock_answer)))
    verifier = create_verifier(VerifierConfig(mode="none", suite_root=str(SUITE)))
    runner = Runner(
        task=run.task,
        adapter=adapter,
        verifier=verifier,
        config=run.config,
        config_hash=run.config_hash,
        concurrency=1,
        task_options=dict(run.config.values),
    )
    records = []
    try:
        for case in run.cases:
            assert case.test_id
            record = runner.build_record(case)
            assert record.get("generation_error_kind") != "harness", record
            dumps_record(record).encode("utf-8")
            records.append(record)
    finally:
        runner.close()
        adapter.close()
        verifier.close()
    return records


@FUZZ
@given(data=st.data(), n=st.integers(1, 4), ascii_only=st.booleans())
def test_a_mutated_row_is_named_by_line_or_runs(
    tmp_path: Path, data: st.DataObject, n: int, ascii_only: bool
) -> None:
    rows = [dict(r, item_id=f"{r['item_id']}_{i}") for i, r in enumerate(BUILTIN[:n])]
    bad = data.draw(st.integers(0, n - 1))
    rows[bad], _field = data.draw(field_mutations(rows[bad]))
    path = tmp_path / "index.jsonl"
    path.write_bytes(index_bytes(rows, ascii_only))
    _loaded, message = outcome(lambda: load_jsonl(path, TacticRow))
    if message is not None:
        assert_one_sentence(message, path)
        # The broken row's line, or (a duplicate id) the line of the row it repeats.
        assert f"{path}:{bad + 1}:" in message or f"on line {bad + 1}" in message, message
        return
    run, message = outcome(lambda: prepared(path))
    assert message is None, message
    assert len(run_every_case(run)) == n


@FUZZ
@given(data=st.data())
def test_byte_level_damage_ends_in_one_sentence(tmp_path: Path, data: st.DataObject) -> None:
    rows = [dict(r, item_id=f"{r['item_id']}_{i}") for i, r in enumerate(BUILTIN[:3])]
    raw = data.draw(byte_mutations(index_bytes(rows, ascii_only=False)))
    path = tmp_path / "index.jsonl"
    path.write_bytes(raw)
    run, message = outcome(lambda: prepared(path))
    if message is not None:
        assert_one_sentence(message, path)
    else:
        run_every_case(run)


@FUZZ
@given(
    item_id=hostile_text.filter(bool),
    goal=hostile_text.filter(bool),
    path_text=hostile_text,
    tags=st.lists(hostile_text, max_size=3),
    extra=st.dictionaries(hostile_text, json_values, max_size=3),
    ascii_only=st.booleans(),
)
# Found by hypothesis (issue #13): a lone surrogate in `path` crashed content_hash.
@example(item_id="a", goal="⊢ True", path_text="\ud800", tags=[], extra={}, ascii_only=True)
def test_hostile_strings_in_valid_rows_run_or_are_named(
    tmp_path: Path,
    item_id: str,
    goal: str,
    path_text: str,
    tags: list[str],
    extra: dict[str, Any],
    ascii_only: bool,
) -> None:
    """Control characters, NUL, lone surrogates, RTL marks, odd keys: rejected with the line, or
    carried through the prompt, the mock baseline, pytest ids and the record."""
    row = {**extra, **BUILTIN[0], "item_id": item_id, "goal_text": goal, "path": path_text, "tags": tags}
    path = tmp_path / "index.jsonl"
    path.write_bytes(index_bytes([row], ascii_only))
    run, message = outcome(lambda: prepared(path, samples="2", max_items="5"))
    if message is not None:
        assert_one_sentence(message, path)
        assert f"{path}:1:" in message, message
    else:
        assert len(run_every_case(run)) == 2


def test_every_failure_mode_of_the_json_reader_is_one_sentence(tmp_path: Path) -> None:
    good = dumps_line(BUILTIN[0], True)
    cases = {
        b"\xff\xfe broken": ":2: not valid JSON (not valid UTF-8 text (byte 0xff) at column 1).",
        b"[" * 100_000 + b"]" * 100_000: ":2: not valid JSON (arrays or objects nested too deeply",
        json.dumps({**BUILTIN[0], "item_id": "b", "start_line": 12345})
        .replace("12345", "9" * 5000)
        .encode(): (":2: not valid JSON (a number with too many digits"),
        json.dumps({**BUILTIN[0], "item_id": "b", "goal_text": "\ud800"}).encode(): ":2: field 'goal_text'",
        json.dumps({**BUILTIN[0], "item_id": "b", "end_line": 1}).encode(): (
            ":2: field 'end_column': the sorry's span ends at 1:"
        ),
    }
    for line, expected in cases.items():
        path = tmp_path / "index.jsonl"
        path.write_bytes(good + b"\n" + line + b"\n")
        _, message = outcome(lambda path=path: load_jsonl(path, TacticRow))
        assert message is not None
        assert_one_sentence(message, path)
        assert f"{path}{expected}" in message, message


def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path: Path) -> None:
    rows = [dict(r, item_id=f"{r['item_id']}_{i}") for i, r in enumerate(BUILTIN[:3])]
    path = tmp_path / "index.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + index_bytes(rows).replace(b"\n", b"\r\n"))
    assert [r.item_id for r in load_jsonl(path, TacticRow)] == [r["item_id"] for r in rows]


def test_a_lone_carriage_return_does_not_shift_line_numbers(tmp_path: Path) -> None:
    # Lines end at \n only (as `wc -l` counts): a stray \r inside line 1 must not make the bad
    # row on the next line be reported as line 3.
    rows = [dict(BUILTIN[0], item_id="a"), dict(BUILTIN[0], item_id="b", start_line="x")]
    path = tmp_path / "index.jsonl"
    path.write_bytes(
        dumps_line(rows[0], True).replace(b", ", b",\r ", 1) + b"\n" + dumps_line(rows[1], True) + b"\n"
    )
    _, message = outcome(lambda: load_jsonl(path, TacticRow))
    assert message is not None and f"{path}:2: field 'start_line'" in message, message


@FUZZ
@given(
    row=st.fixed_dictionaries({}, optional={k: json_values | hostile_text for k in BUILTIN[0]}),
    extra=st.dictionaries(st.text(max_size=4), json_values, max_size=3),
    ascii_only=st.booleans(),
    duplicate=st.booleans(),
)
def test_the_fast_json_path_reads_rows_exactly_like_json_loads(
    row: dict[str, Any], extra: dict[str, Any], ascii_only: bool, duplicate: bool
) -> None:
    """stream_jsonl lets pydantic parse the JSON; whatever it accepts must be the very row that
    json.loads + model_validate gives (same fields, same content hash, same selection)."""
    from pydantic import ValidationError

    line = dumps_line({**BUILTIN[0], **row, **extra}, ascii_only)
    if duplicate:  # a key twice: both readers keep the last
        line = line[:-1] + b', "item_id": "dup"}'
    try:
        fast = TacticRow.model_validate_json(line)
    except ValidationError:
        return  # the slow path decides; the other tests cover it
    slow = TacticRow.model_validate(json.loads(line))
    assert fast == slow
    assert fast.model_extra == slow.model_extra
    assert fast.content_hash() == slow.content_hash()
