"""Import-time data-quality flags, and the counts the issue asks for over the SorryDB sample."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pytest_lsrb.tactic.quality import quality_counts, quality_tags
from pytest_lsrb.tactic.slices import goal_slice_predicate
from pytest_lsrb.tactic.sorrydb import import_sorrydb


@pytest.mark.parametrize(
    ("goal", "lines", "remote", "path", "tags"),
    [
        ("x : ℕ\n⊢ x = x", 1, "https://github.com/a/b", "B.lean", []),
        ("h : f ⋯ = 0\n⊢ True", 1, "https://github.com/a/b", "B.lean", ["elided"]),
        (
            "⊢ failed to pretty print expression "
            "(use 'set_option pp.rawOnError true' for raw representation)",
            1,
            "https://github.com/a/b",
            "B.lean",
            ["pp_failed"],
        ),
        ("h : sorry = 1\n⊢ False", 1, "https://github.com/a/b", "B.lean", ["sorry_in_goal"]),
        ("h : sorry_lemma = 1\n⊢ False", 1, "https://github.com/a/b", "B.lean", []),
        ("⊢ True", 4, "https://github.com/a/b", "B.lean", ["stop_span"]),
        (
            "⊢ True",
            1,
            "https://github.com/yangky11/miniF2F-lean4",
            "MiniF2F/Valid/x.lean",
            ["benchmark_source"],
        ),
    ],
)
def test_quality_tags(goal: str, lines: int, remote: str, path: str, tags: list[str]) -> None:
    assert quality_tags(goal, lines, remote, path) == tags


def test_sorrydb_sample_counts_and_slices(sorrydb_path: Path, tmp_path: Path) -> None:
    """`lsrb import sorrydb FILE -o OUT` prints these counts; each flag is a goal slice."""
    rows = import_sorrydb(sorrydb_path)
    counts = quality_counts(rows)
    assert counts["rows"] == 291 and counts["restatable"] == 226
    assert counts["spliceable_by_span"] == 291  # 281 one-`sorry` spans and 10 `stop` blocks
    assert counts["flags"] == {
        "pp_failed": 9,
        "elided": 36,
        "sorry_in_goal": 16,
        "stop_span": 10,
        "benchmark_source": 34,
    }
    flagged_repos = Counter(r.repo_remote.rsplit("/", 1)[1] for r in rows if "benchmark_source" in r.tags)
    assert flagged_repos == {  # the sample's published benchmarks and competition collections
        "IMOLean": 9,
        "formal-conjectures": 7,
        "formal-imo": 6,
        "miniF2F-lean4": 5,
        "compfiles": 4,
        "verina": 3,
    }
    assert counts["flagged"] == 94
    assert sum(goal_slice_predicate("tag:stop_span")(r) for r in rows) == 10
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_lsrb",
            "import",
            "sorrydb",
            str(sorrydb_path),
            "-o",
            str(tmp_path / "i.jsonl"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "restatable 226, spliceable by span 291, flagged 94 (pp_failed 9, elided 36" in out
    assert counts["unrestatable_reasons"] == {
        "the goal elides a term as ⋯": 36,
        "the goal contains sorry": 15,  # the 16th sorry_in_goal also elides, which is named first
        "Lean failed to pretty-print the goal": 9,
        "the goal holds a metavariable": 4,
        "the goal names an inaccessible constant": 1,
    }
    assert "not restatable: the goal elides a term as ⋯ 36; the goal contains sorry 15;" in out
