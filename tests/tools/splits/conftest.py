"""Index rows for the split and slice tests: a small hand-made index and the real SorryDB sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def tactic_row(
    item_id: str,
    goal: str,
    *,
    repo: str = "https://github.com/acme/goals",
    lean: str = "v4.22.0",
    path: str = "Goals/Basic.lean",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "item_id": item_id,
        "repo_remote": repo,
        "repo_branch": "main",
        "repo_commit": "0" * 40,
        "repo_lean_version": lean,
        "path": path,
        "start_line": 3,
        "start_column": 2,
        "end_line": 3,
        "end_column": 7,
        "goal_text": goal,
        **extra,
    }


def write_index(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def sorrydb_rows(shared_data: Path) -> list[dict[str, Any]]:
    """The 291 real SorryDB records as index rows (field mapping as in the SorryDB card)."""
    data = json.loads((shared_data / "sorrydb" / "SorryDB_2601_sample.json").read_text("utf-8"))
    rows = []
    for rec in data["sorries"]:
        repo, loc, meta = rec["repo"], rec["location"], rec.get("metadata", {})
        rows.append(
            {
                "item_id": rec["id"][:16],
                "repo_remote": repo["remote"],
                "repo_branch": repo["branch"],
                "repo_commit": repo["commit"],
                "repo_lean_version": repo["lean_version"],
                "path": loc["path"],
                "start_line": loc["start_line"],
                "start_column": loc["start_column"],
                "end_line": loc["end_line"],
                "end_column": loc["end_column"],
                "goal_text": rec["debug_info"]["goal"],
                "url": rec["debug_info"].get("url"),
                "blame_date": meta.get("blame_date"),
                "inclusion_date": meta.get("inclusion_date"),
            }
        )
    return rows


@pytest.fixture
def make_row() -> Any:
    return tactic_row


@pytest.fixture
def write_rows(tmp_path: Path) -> Any:
    """`write_rows(rows, name="index.jsonl") -> Path` in tmp_path."""
    return lambda rows, name="index.jsonl": write_index(tmp_path / name, rows)


@pytest.fixture
def sorrydb_index(shared_data: Path, tmp_path: Path) -> Path:
    return write_index(tmp_path / "sorrydb_index.jsonl", sorrydb_rows(shared_data))
