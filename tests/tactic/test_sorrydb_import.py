"""SorryDB import: the 291 real records, malformed records, and the write/load round trip."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import load_jsonl
from pytest_lsrb.tactic.quality import QUALITY_TAGS
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.sorrydb import import_sorrydb, record_lines, write_index


@pytest.fixture(scope="module")
def sample_path() -> Path:
    data = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    path = data / "sorrydb" / "SorryDB_2601_sample.json"
    if not path.is_file():
        pytest.skip(f"the SorryDB sample is not present at {path}")
    return path


def record(i: int = 0, **changes: Any) -> dict[str, Any]:
    """A well-formed SorryDB record; `changes` maps dotted paths to new values (or DELETE)."""
    rec: dict[str, Any] = {
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
        "debug_info": {"goal": "n : ℕ\n⊢ n + 0 = n", "url": f"https://github.com/acme/Goals/blob/x#L{3 + i}"},
        "metadata": {
            "blame_email_hash": "abc123",
            "blame_date": "2025-01-02T03:04:05+00:00",
            "inclusion_date": "2026-01-08T22:59:30.688541+00:00",
        },
        "id": f"{i:064x}",
    }
    for dotted, value in changes.items():
        *parents, leaf = dotted.split(".")
        target = rec
        for p in parents:
            target = target[p]
        if value is DELETE:
            del target[leaf]
        else:
            target[leaf] = value
    return rec


DELETE = object()


def write_db(path: Path, records: list[Any], **top: Any) -> Path:
    path.write_text(
        json.dumps({"documentation": "test", "sorries": records, **top}, indent=2, ensure_ascii=False),
        encoding="utf-8",
    )
    return path


# --- the real sample ---------------------------------------------------------------------------


def test_all_291_real_records_import_and_validate(sample_path: Path) -> None:
    raw = json.loads(sample_path.read_text(encoding="utf-8"))["sorries"]
    rows = import_sorrydb(sample_path)
    assert len(rows) == len(raw) == 291
    for row, rec in zip(rows, raw, strict=True):
        assert isinstance(row, TacticRow)
        assert TacticRow.model_validate(row.model_dump()) == row
        assert row.item_id == rec["id"]
        assert (row.repo_remote, row.repo_branch, row.repo_commit, row.repo_lean_version) == (
            rec["repo"]["remote"],
            rec["repo"]["branch"],
            rec["repo"]["commit"],
            rec["repo"]["lean_version"],
        )
        loc = rec["location"]
        assert (row.path, row.start_line, row.start_column, row.end_line, row.end_column) == (
            loc["path"],
            loc["start_line"],
            loc["start_column"],
            loc["end_line"],
            loc["end_column"],
        )
        assert row.goal_text == rec["debug_info"]["goal"]
        assert row.url == rec["debug_info"]["url"]
        assert row.blame_date == rec["metadata"]["blame_date"]
        assert row.inclusion_date == rec["metadata"]["inclusion_date"]
        assert row.sorry_kind is None  # SorryDB does not say, and its spans are not always `sorry`
        assert row.tags[0] == "sorrydb" and set(row.tags[1:]) <= set(QUALITY_TAGS)
        assert "blame_email_hash" not in row.model_dump()


def test_real_item_ids_are_unique(sample_path: Path) -> None:
    ids = [r.item_id for r in import_sorrydb(sample_path)]
    assert len(set(ids)) == len(ids)


def test_real_import_round_trips_through_load_jsonl(sample_path: Path, tmp_path: Path) -> None:
    rows = import_sorrydb(sample_path)
    out = tmp_path / "sub" / "index.jsonl"
    write_index(rows, out)
    assert load_jsonl(out, TacticRow) == rows
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 291
    first = json.loads(lines[0])
    assert list(first)[:11] == [
        "item_id",
        "repo_remote",
        "repo_branch",
        "repo_commit",
        "repo_lean_version",
        "path",
        "start_line",
        "start_column",
        "end_line",
        "end_column",
        "goal_text",
    ]
    assert "⊢" in lines[0]  # ensure_ascii=False: goals stay readable


def test_record_lines_point_at_each_record(sample_path: Path) -> None:
    text = sample_path.read_text(encoding="utf-8")
    lines = record_lines(text)
    assert sorted(lines) == list(range(291))
    src = text.split("\n")
    for index, line in lines.items():
        assert src[line - 1].strip() == "{", (index, line)
    # Consecutive records start on increasing lines.
    assert all(lines[i] < lines[i + 1] for i in range(290))


def test_cli_import_writes_an_index(sample_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "index.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", "import", "sorrydb", str(sample_path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert load_jsonl(out, TacticRow) == import_sorrydb(sample_path)


# --- malformed input ----------------------------------------------------------------------------

BAD_FIELDS = [
    # (change, field named in the error, what the message says)
    ({"repo.remote": 5}, "repo.remote", "valid string"),
    ({"repo.commit": None}, "repo.commit", "valid string"),
    ({"repo.lean_version": ""}, "repo.lean_version", "at least 1 character"),
    ({"repo": "https://github.com/acme/Goals"}, "repo", "valid dictionary"),
    ({"location.start_line": "21"}, "location.start_line", "valid integer"),
    ({"location.end_column": 7.0}, "location.end_column", "valid integer"),
    ({"location.start_column": True}, "location.start_column", "valid integer"),
    ({"location.start_line": 0}, "location.start_line", "greater than or equal to 1"),
    ({"location.start_column": -1}, "location.start_column", "greater than or equal to 0"),
    ({"location.path": DELETE}, "location.path", "missing"),
    ({"debug_info.goal": DELETE}, "debug_info.goal", "missing"),
    ({"debug_info.goal": ["n : ℕ", "⊢ n = n"]}, "debug_info.goal", "valid string"),
    ({"debug_info.url": 3}, "debug_info.url", "valid string"),
    ({"metadata.blame_date": 20250102}, "metadata.blame_date", "valid string"),
    ({"metadata": []}, "metadata", "valid dictionary"),
    ({"id": DELETE}, "id", "missing"),
    ({"id": 12}, "id", "valid string"),
    ({"location.end_line": 2}, "location", "comes before the start"),
]


@pytest.mark.parametrize(("change", "field", "says"), BAD_FIELDS, ids=[f[1] + "-" + f[2] for f in BAD_FIELDS])
def test_a_malformed_record_names_file_line_record_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, says: str
) -> None:
    path = write_db(tmp_path / "db.json", [record(0), record(1), record(2, **change)])
    # json.dumps(indent=2) puts each record's opening brace alone on a line, four spaces in.
    expected_line = [n + 1 for n, ln in enumerate(path.read_text("utf-8").split("\n")) if ln == "    {"][2]
    with pytest.raises(LsrbUsageError) as info:
        import_sorrydb(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:{expected_line}: record sorries[2]: field '{field}'")
    assert says in msg
    assert "\n" not in msg and msg.endswith(".")


def test_a_duplicate_id_names_both_records(tmp_path: Path) -> None:
    path = write_db(tmp_path / "db.json", [record(0), record(1), record(2, id=record(0)["id"])])
    says = r"record sorries\[2\]: field 'id': '0+' is already the id of sorries\[0\]"
    with pytest.raises(LsrbUsageError, match=says):
        import_sorrydb(path)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"sorries": [\n  {"id": "a",\n  }\n]}', r"db\.json:3: not valid JSON"),
        ("[]", r"db\.json: expected a SorryDB object with a 'sorries' list"),
        ('{"documentation": "x"}', r"db\.json: expected a SorryDB object with a 'sorries' list"),
        ('{"sorries": {"a": 1}}', r"db\.json: field 'sorries' must be a list of records, got dict\."),
        ('{"sorries": []}', r"db\.json: field 'sorries' holds no records\."),
        (
            '{"sorries": [\n  "not a record"\n]}',
            r"db\.json:2: record sorries\[0\]: expected a JSON object, got str\.",
        ),
    ],
    ids=["bad-json", "top-list", "no-sorries", "sorries-dict", "empty", "record-str"],
)
def test_a_malformed_file_is_one_sentence(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "db.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LsrbUsageError, match=says) as info:
        import_sorrydb(path)
    assert "\n" not in str(info.value)


def test_unreadable_files_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(LsrbUsageError, match="cannot be read"):
        import_sorrydb(tmp_path / "missing.json")
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"sorries": ["é"]}'.encode("latin-1"))
    with pytest.raises(LsrbUsageError, match="not valid UTF-8"):
        import_sorrydb(latin)


def test_a_compact_file_still_names_the_record(tmp_path: Path) -> None:
    path = tmp_path / "db.json"
    path.write_text(json.dumps({"sorries": [record(0), record(1, **{"location.start_line": "x"})]}), "utf-8")
    says = r"db\.json:1: record sorries\[1\]: field 'location\.start_line'"
    with pytest.raises(LsrbUsageError, match=says):
        import_sorrydb(path)


def test_optional_parts_may_be_absent_and_unknown_keys_are_ignored(tmp_path: Path) -> None:
    rec = record(0, metadata=DELETE, **{"debug_info.url": DELETE})
    rec["repo"]["stars"] = 12  # a newer SorryDB may add fields
    rows = import_sorrydb(write_db(tmp_path / "db.json", [rec]))
    assert rows[0].url is None and rows[0].blame_date is None and rows[0].inclusion_date is None
    assert "stars" not in rows[0].model_dump()


# --- the round-trip property ----------------------------------------------------------------------

_text = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30)
_pos = st.integers(min_value=1, max_value=10**6)
_col = st.integers(min_value=0, max_value=10**4)
# The values that reach git and the file system keep their rules (tactic.lean.gitrefs, core.paths);
# hostile ones are tests/hardening/test_hostile_git_values.py's.
_name = st.text(st.characters(categories=["L", "N"]) | st.sampled_from("_-+"), min_size=1, max_size=12)
_remote = st.builds("https://github.com/{}/{}".format, _name, _name)
_commit = st.text("0123456789abcdefABCDEF", min_size=7, max_size=40)
_path = st.lists(_name, min_size=1, max_size=4).map("/".join)


@st.composite
def sorry_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(min_value=1, max_value=6))
    ids = draw(st.lists(_text, min_size=n, max_size=n, unique=True))
    out = []
    for item_id in ids:
        start_line, start_col = draw(_pos), draw(_col)
        end_line = start_line + draw(st.integers(min_value=0, max_value=20))
        end_col = draw(_col) if end_line > start_line else start_col + draw(st.integers(0, 100))
        rec: dict[str, Any] = {
            "repo": {
                "remote": draw(_remote),
                "branch": draw(st.text(max_size=10)),
                "commit": draw(_commit),
                "lean_version": draw(_text),
            },
            "location": {
                "path": draw(_path),
                "start_line": start_line,
                "start_column": start_col,
                "end_line": end_line,
                "end_column": end_col,
            },
            "debug_info": {"goal": draw(_text)},
            "id": item_id,
        }
        if draw(st.booleans()):
            rec["debug_info"]["url"] = draw(_text)
        if draw(st.booleans()):
            keys = [k for k in ("blame_date", "inclusion_date") if draw(st.booleans())]
            rec["metadata"] = {k: draw(_text) for k in keys}
        out.append(rec)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=sorry_records(), indent=st.sampled_from([None, 1, 2]))
def test_import_then_load_jsonl_gives_the_same_rows(
    records: list[dict[str, Any]], indent: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "db.json"
        text = json.dumps({"sorries": copy.deepcopy(records)}, indent=indent, ensure_ascii=False)
        src.write_text(text, "utf-8")
        rows = import_sorrydb(src)
        out = Path(tmp) / "index.jsonl"
        write_index(rows, out)
        assert load_jsonl(out, TacticRow) == rows
        assert [r.item_id for r in rows] == [r["id"] for r in records]
        assert [r.goal_text for r in rows] == [r["debug_info"]["goal"] for r in records]
