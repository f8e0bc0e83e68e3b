"""Bad index rows stop the run with one sentence naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import load_jsonl
from pytest_lsrb.tactic.rows import TacticRow

GOOD = {
    "item_id": "a",
    "repo_remote": "https://github.com/o/r",
    "repo_branch": "main",
    "repo_commit": "0" * 40,
    "repo_lean_version": "v4.22.0",
    "path": "A.lean",
    "start_line": 3,
    "start_column": 2,
    "end_line": 3,
    "end_column": 7,
    "goal_text": "n : Nat\n⊢ n = n",
}


def write_rows(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(**changes: object) -> str:
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...}, ensure_ascii=False)


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (row(start_line=...), ":2: field 'start_line' is missing (required)."),
        (row(start_line="3"), ":2: field 'start_line': input should be a valid integer (got \"3\")."),
        (row(goal_text=7), ":2: field 'goal_text': input should be a valid string (got 7)."),
        (row(start_line=0), ":2: field 'start_line': input should be greater than or equal to 1"),
        (row(sorry_kind="proof"), ":2: field 'sorry_kind': input should be 'tactic' or 'term'"),
        (row(tags="nat"), ":2: field 'tags': input should be a valid list"),
        ('{"item_id": "b", ', ":2: not valid JSON"),
        ("[1, 2]", ":2: expected a JSON object per line, got list."),
        (row(), ":2: field 'item_id': 'a' already appears on line 1"),
    ],
)
def test_bad_row_names_file_line_and_field(tmp_path: Path, bad_line: str, expected: str) -> None:
    path = write_rows(tmp_path / "index.jsonl", row(), bad_line.replace('"a"', '"a"'))
    with pytest.raises(LsrbUsageError) as info:
        load_jsonl(path, TacticRow)
    message = str(info.value)
    assert message.startswith(str(path) + ":2:")
    assert expected in message
    assert "\n" not in message  # one sentence, no traceback-ish dump


def test_blank_lines_are_skipped_and_line_numbers_stay_true(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "i.jsonl", row(), "", row(item_id="b", end_column=...))
    with pytest.raises(LsrbUsageError, match=r"i\.jsonl:3: field 'end_column' is missing"):
        load_jsonl(path, TacticRow)


def test_empty_index_is_refused(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "i.jsonl", "")
    with pytest.raises(LsrbUsageError, match="holds no rows"):
        load_jsonl(path, TacticRow)


def test_a_run_over_a_bad_index_stops_before_any_model_call(run_suite, tmp_path: Path) -> None:
    index = write_rows(tmp_path / "bad.jsonl", row(), row(item_id="b", goal_text=None))
    result = run_suite(f"--lsrb-index={index}")
    assert result.returncode == 4  # pytest's usage error
    assert f"ERROR: {index}:2: field 'goal_text': input should be a valid string" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not (result.out_dir / "attempts.jsonl").exists()  # nothing ran, nothing written
