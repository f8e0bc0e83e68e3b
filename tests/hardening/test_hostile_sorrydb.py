"""Hostile SorryDB files: broken dumps end in one sentence naming the file, the record's line and
index and the field; every dump that imports writes an index that loads back as the same rows."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hostile_kit import assert_one_sentence, byte_mutations, hostile_text, json_values, outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_lsrb.cli import main as lsrb_main
from pytest_lsrb.core.rows import load_jsonl
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.sorrydb import import_sorrydb, write_index

FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


def record(i: int) -> dict[str, Any]:
    return {
        "repo": {
            "remote": "https://github.com/acme/Goals",
            "branch": "main",
            "commit": f"{i:040x}",
            "lean_version": "v4.22.0",
        },
        "location": {
            "path": "Goals/Basic.lean",
            "start_line": 3 + i,
            "start_column": 2,
            "end_line": 3 + i,
            "end_column": 7,
        },
        "debug_info": {"goal": "n : ℕ\n⊢ n + 0 = n", "url": None},
        "metadata": {
            "blame_email_hash": "abc",
            "blame_date": "2025-01-02T03:04:05+00:00",
            "inclusion_date": "2026-01-08T22:59:30+00:00",
        },
        "id": f"{i:064x}",
    }


def paths_of(obj: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in obj.items():
        out.append(prefix + key)
        if isinstance(value, dict):
            out += paths_of(value, prefix + key + ".")
    return out


@st.composite
def mutated_record(draw: st.DrawFn, rec: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """`rec` with one field at any depth deleted, retyped, or given hostile text."""
    path = draw(st.sampled_from(paths_of(rec)))
    *parents, leaf = path.split(".")
    out = copy.deepcopy(rec)
    target = out
    for p in parents:
        target = target[p]
    action = draw(st.sampled_from(["delete", "json", "text", "int"]))
    if action == "delete":
        del target[leaf]
    elif action == "json":
        target[leaf] = draw(json_values)
    elif action == "text":
        target[leaf] = draw(hostile_text)
    else:
        target[leaf] = draw(st.integers(-5, 10**30))
    return out, path


def dump(records: list[Any], indent: int | None) -> bytes:
    text = json.dumps({"documentation": "x", "sorries": records}, indent=indent, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


def check_accepted(tmp_path: Path, rows: list[TacticRow]) -> None:
    out = tmp_path / "index.jsonl"
    write_index(rows, out)
    assert load_jsonl(out, TacticRow) == rows


@FUZZ
@given(data=st.data(), n=st.integers(1, 4), indent=st.sampled_from([None, 2]))
def test_a_mutated_record_is_named_or_imports(
    tmp_path: Path, data: st.DataObject, n: int, indent: int | None
) -> None:
    records = [record(i) for i in range(n)]
    bad = data.draw(st.integers(0, n - 1))
    records[bad], field = data.draw(mutated_record(records[bad]))
    path = tmp_path / "sorrydb.json"
    path.write_bytes(dump(records, indent))
    rows, message = outcome(lambda: import_sorrydb(path))
    if message is None:
        check_accepted(tmp_path, rows)
        return
    assert_one_sentence(message, path)
    assert f"record sorries[{bad}]:" in message, message
    if indent is not None:  # pretty-printed: each record starts on its own line
        assert f"{path}:" in message and f"{path}: record" not in message, message
    named = field.split(".")[0]
    assert f"field '{named}" in message or "field 'location'" in message, message


@FUZZ
@given(data=st.data(), indent=st.sampled_from([None, 2]))
def test_byte_level_damage_ends_in_one_sentence(
    tmp_path: Path, data: st.DataObject, indent: int | None
) -> None:
    path = tmp_path / "sorrydb.json"
    path.write_bytes(data.draw(byte_mutations(dump([record(0), record(1)], indent))))
    rows, message = outcome(lambda: import_sorrydb(path))
    if message is None:
        check_accepted(tmp_path, rows)
    else:
        assert_one_sentence(message, path)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(top=json_values)
def test_any_top_level_shape_is_refused_in_one_sentence(tmp_path: Path, top: Any) -> None:
    path = tmp_path / "sorrydb.json"
    path.write_text(json.dumps(top), encoding="utf-8")
    _rows, message = outcome(lambda: import_sorrydb(path))
    assert message is not None
    assert_one_sentence(message, path)


def test_the_cli_refuses_a_broken_dump_and_keeps_the_old_index(tmp_path: Path, capsys: Any) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(dump([record(0)], 2))
    index = tmp_path / "index.jsonl"
    assert lsrb_main(["import", "sorrydb", str(good), "-o", str(index)]) == 0
    before = index.read_bytes()
    capsys.readouterr()
    broken = tmp_path / "broken.json"
    for raw in (
        b'{"sorries": [' + b"[" * 50_000,
        b'{"sorries": [\xff]}',
        dump([record(0), {**record(1), "location": "here"}], 2),
    ):
        broken.write_bytes(raw)
        assert lsrb_main(["import", "sorrydb", str(broken), "-o", str(index)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"lsrb: error: {broken}") and err.count("\n") == 1, err
        assert index.read_bytes() == before
