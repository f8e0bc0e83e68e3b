"""attempts.jsonl survives a process killed mid-write: readers report a torn tail and recover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.output.files import (
    AttemptsReadReport,
    AttemptsWriter,
    dumps_record,
    iter_attempts,
    truncate_torn_tail,
    write_json_atomic,
)
from pytest_lsrb.output.reader import latest_records


def rec(item: str, k: int = 0, **extra: object) -> dict:
    return {"item_id": item, "sample_index": k, **extra}


def test_torn_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "attempts.jsonl"
    path.write_text(dumps_record(rec("a")) + "\n" + dumps_record(rec("b"))[:9], encoding="utf-8")
    report = AttemptsReadReport()
    assert [r["item_id"] for r in iter_attempts(path, report)] == ["a"]
    assert report.torn_tail_line == 2
    assert "attempts.jsonl:2: last line is incomplete" in report.warnings[0]


def test_writer_cuts_a_torn_tail_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "attempts.jsonl"
    path.write_text(dumps_record(rec("a")) + "\n" + '{"item_id": "b", "sam', encoding="utf-8")
    writer = AttemptsWriter(path)
    writer.write(rec("c"))
    writer.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["item_id"] for line in lines] == ["a", "c"]


def test_complete_record_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "attempts.jsonl"
    path.write_text(dumps_record(rec("a")), encoding="utf-8")
    assert truncate_torn_tail(path) == 0
    assert path.read_text(encoding="utf-8").endswith("\n")
    assert [r["item_id"] for r in iter_attempts(path)] == ["a"]


def test_a_bad_line_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "attempts.jsonl"
    path.write_text(dumps_record(rec("a")) + "\nnot json\n" + dumps_record(rec("b")) + "\n")
    with pytest.raises(LsrbUsageError, match=r"attempts\.jsonl:2: not a valid attempt record"):
        list(iter_attempts(path))


def test_latest_record_per_attempt_wins(tmp_path: Path) -> None:
    path = tmp_path / "attempts.jsonl"
    writer = AttemptsWriter(path)
    writer.write(rec("a", 0, v=1))
    writer.write(rec("b", 0, v=1))
    writer.write(rec("a", 0, v=2))
    writer.close()
    assert sorted((r["item_id"], r["v"]) for r in latest_records(path)) == [("a", 2), ("b", 1)]


def test_non_finite_numbers_become_null(tmp_path: Path) -> None:
    line = dumps_record(rec("a", nmse=float("inf"), nested={"x": [float("nan"), 1.0]}))
    assert json.loads(line) == {"item_id": "a", "sample_index": 0, "nmse": None, "nested": {"x": [None, 1.0]}}
    write_json_atomic(tmp_path / "s.json", {"v": float("nan")})
    assert json.loads((tmp_path / "s.json").read_text()) == {"v": None}
