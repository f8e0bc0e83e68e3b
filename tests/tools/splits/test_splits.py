"""Frozen splits: assignment laws, normalised goals, the contamination report, `lsrb split`."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tools.contamination import (
    contamination_report,
    normalise_goal,
    normalise_repo,
    report_headline,
)
from pytest_lsrb.tools.splits import SplitConfig, assign_splits, parse_fractions

ids_st = st.lists(
    st.text(alphabet="abcdefxyz0123456789_.-", min_size=1, max_size=10),
    min_size=1,
    max_size=80,
    unique=True,
)
weights_st = st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=4)


def config_of(weights: list[int], seed: int, group_by: str | None = None) -> SplitConfig:
    total = sum(weights)
    return SplitConfig(tuple((f"s{i}", w / total) for i, w in enumerate(weights)), seed, group_by)


@settings(max_examples=150, deadline=None)
@given(ids=ids_st, weights=weights_st, seed=st.integers(0, 2**32), data=st.data())
def test_assignment_partitions_keeps_groups_and_ignores_order(
    ids: list[str], weights: list[int], seed: int, data: st.DataObject
) -> None:
    groups = data.draw(st.lists(st.integers(0, 6), min_size=len(ids), max_size=len(ids)))
    units = [(i, f"g{g}") for i, g in zip(ids, groups, strict=True)]
    config = config_of(weights, seed, "repo")
    result = assign_splits(units, config)

    assert list(result) == [name for name, _ in config.fractions]
    placed = [i for members in result.values() for i in members]
    assert sorted(placed) == sorted(ids)  # every item exactly once: disjoint and complete
    split_of = {i: name for name, members in result.items() for i in members}
    splits_of_group: dict[str, set[str]] = defaultdict(set)
    for item_id, group in units:
        splits_of_group[group].add(split_of[item_id])
    assert all(len(s) == 1 for s in splits_of_group.values())
    shuffled = data.draw(st.permutations(units))
    assert assign_splits(shuffled, config) == result  # deterministic, order-free


@settings(max_examples=150, deadline=None)
@given(ids=ids_st, weights=weights_st, seed=st.integers(0, 2**32))
def test_ungrouped_split_sizes_are_within_one_of_their_targets(
    ids: list[str], weights: list[int], seed: int
) -> None:
    config = config_of(weights, seed)
    result = assign_splits([(i, "item\x1f" + i) for i in ids], config)
    for name, frac in config.fractions:
        assert abs(len(result[name]) - frac * len(ids)) <= 1.0 + 1e-9


def test_the_seed_changes_the_assignment_and_only_the_seed_does() -> None:
    units = [(f"item{i:03d}", f"item{i:03d}") for i in range(200)]
    a = assign_splits(units, config_of([1, 4], seed=0))
    assert a == assign_splits(list(reversed(units)), config_of([1, 4], seed=0))
    assert a != assign_splits(units, config_of([1, 4], seed=1))


def test_parse_fractions_reads_names_and_refuses_what_does_not_add_up() -> None:
    assert parse_fractions("train=0.7, dev=0.1,test=0.2") == (("train", 0.7), ("dev", 0.1), ("test", 0.2))
    for bad, words in [
        ("dev=0.2,test=0.7", "sum to 1"),
        ("dev=0.5,dev=0.5", "named twice"),
        ("dev", "NAME=FRACTION"),
        ("dev=x,test=1", "not a number"),
        ("dev=0,test=1", "(0, 1]"),
    ]:
        with pytest.raises(LsrbUsageError, match=words.replace("(", r"\(").replace("]", r"\]")):
            parse_fractions(bad)


# -- normalised goals --------------------------------------------------------------------------


def test_normalise_goal_ignores_hypothesis_names_whitespace_and_case_tags() -> None:
    a = "x y : Nat\nh : x < y\n⊢ x + 1 ≤ y"
    b = "case succ\na  b : Nat\nhab : a < b\n⊢ a + 1 ≤   b"
    assert normalise_goal(a) == normalise_goal(b) == "_h1 _h2 : Nat _h3 : _h1 < _h2 ⊢ _h1 + 1 ≤ _h2"
    assert normalise_goal("inst✝¹ : Foo α\n⊢ p") == normalise_goal("inst✝ : Foo α\n⊢ p")
    # projections use the hypothesis; a qualified name that happens to end in it does not
    assert normalise_goal("h : p ∧ q\n⊢ h.1 = Nat.h") == "_h1 : p ∧ q ⊢ _h1.1 = Nat.h"


def test_normalise_goal_keeps_what_makes_goals_different() -> None:
    assert normalise_goal("x : Nat\n⊢ x + 1 = 1 + x") != normalise_goal("x : Nat\n⊢ x + 2 = 2 + x")
    assert normalise_goal("x : Nat\n⊢ x = x") != normalise_goal("x : Int\n⊢ x = x")
    # the bound variable of a binder is part of the statement's text, not a hypothesis
    assert normalise_goal("⊢ ∀ n, n = n") != normalise_goal("⊢ ∀ m, m = m")


def test_normalise_repo_names_one_repository_however_it_is_spelled() -> None:
    spellings = [
        "https://github.com/Acme/Goals",
        "https://github.com/acme/goals.git/",
        "git@github.com:acme/goals.git",
        "github.com/acme/goals",
    ]
    assert {normalise_repo(s) for s in spellings} == {"github.com/acme/goals"}


# -- contamination report ----------------------------------------------------------------------


def test_contamination_report_names_duplicates_shared_repos_and_items_before_the_cutoff(
    make_row: Any,
) -> None:
    one, two = "https://github.com/acme/one", "https://github.com/acme/two"
    rows = [
        TacticRow.model_validate(r)
        for r in [
            make_row("a", "n : Nat\n⊢ n + 0 = n", repo=one, blame_date="2023-01-01T10:00:00+02:00"),
            make_row("b", "m : Nat\n⊢ m + 0 = m", repo=two, blame_date="2025-03-01T00:00:00Z"),
            make_row("c", "n : Nat\n⊢ n + 0 = n", repo=one + ".git", inclusion_date="2022-05-05"),
            make_row("d", "p q : Prop\n⊢ p ∧ q", repo=two),
            make_row("e", "x : Nat\n⊢ x * 1 = x", repo="https://github.com/acme/three"),
            make_row("f", "n : Nat\n⊢ n + 0 = n", repo=one, blame_date="2021-06-01"),  # same split as c
        ]
    ]
    assignment = {"dev": ["a", "d"], "test": ["b", "c", "e", "f"]}
    report = contamination_report(rows, assignment, datetime(2024, 1, 1, tzinfo=timezone.utc))

    exact = report["duplicate_goals_exact"]
    assert (exact["groups"], exact["items"], exact["item_ids"]) == (1, 3, ["a", "c", "f"])
    assert exact["entries"][0]["splits"] == {"dev": ["a"], "test": ["c", "f"]}
    norm = report["duplicate_goals_normalised"]
    assert (norm["groups"], norm["item_ids"]) == (1, ["a", "b", "c", "f"])
    shared = report["shared_repositories"]
    assert shared["repositories"] == 2 and shared["item_ids"] == ["a", "b", "c", "d", "f"]
    assert {e["repo"] for e in shared["entries"]} == {"github.com/acme/one", "github.com/acme/two"}
    cut = report["before_cutoff"]
    assert cut["items"] == 3
    assert cut["by_split"] == {
        "dev": {"count": 1, "item_ids": ["a"]},
        "test": {"count": 2, "item_ids": ["c", "f"]},
    }
    assert cut["by_date_field"] == {"blame_date": 2, "inclusion_date": 1}
    assert cut["undated"] == {"count": 2, "item_ids": ["d", "e"]}
    assert contamination_report(rows, assignment, None)["before_cutoff"] is None


# -- lsrb split --------------------------------------------------------------------------------


def _split(index: Path, out: Path, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    assert lsrb(["split", str(index), "--out", str(out), *args]) == 0
    manifest = json.loads((out / "split_manifest.json").read_text("utf-8"))
    report = json.loads((out / "contamination_report.json").read_text("utf-8"))
    return manifest, report


def test_lsrb_split_on_real_sorrydb_rows_is_deterministic_and_group_by_repo_holds(
    sorrydb_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--splits", "dev=0.3,test=0.7", "--seed", "7", "--cutoff", "2025-01-01")
    m1, r1 = _split(sorrydb_index, tmp_path / "a", *args)
    _split(sorrydb_index, tmp_path / "b", *args)
    for name in ("split_manifest.json", "contamination_report.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()

    rows = {json.loads(line)["item_id"]: json.loads(line) for line in sorrydb_index.open()}
    assert m1["source_rows"] == len(rows) == 291
    assert m1["config"]["fractions"] == {"dev": 0.3, "test": 0.7} and m1["config"]["seed"] == 7
    listed = {i: h for s in m1["splits"].values() for i, h in s["items"].items()}
    assert sorted(listed) == sorted(rows)
    some_id = next(iter(listed))
    assert listed[some_id] == TacticRow.model_validate(rows[some_id]).content_hash()
    # Without grouping, real repositories straddle splits and the report says which.
    assert r1["shared_repositories"]["repositories"] > 0
    assert r1["before_cutoff"]["items"] > 0
    for entry in r1["duplicate_goals_exact"]["entries"]:
        goals = {rows[i]["goal_text"] for ids in entry["splits"].values() for i in ids}
        assert len(goals) == 1
    assert set(r1["duplicate_goals_exact"]["item_ids"]) <= set(r1["duplicate_goals_normalised"]["item_ids"])

    m2, r2 = _split(sorrydb_index, tmp_path / "grouped", *args, "--group-by", "repo")
    assert r2["shared_repositories"]["repositories"] == 0
    split_of_repo: dict[str, set[str]] = defaultdict(set)
    for name, split in m2["splits"].items():
        for item_id in split["items"]:
            split_of_repo[normalise_repo(rows[item_id]["repo_remote"])].add(name)
    assert all(len(s) == 1 for s in split_of_repo.values())
    assert 0.15 < m2["splits"]["dev"]["count"] / 291 < 0.45
    assert "repositories shared across splits: 0" in capsys.readouterr().out

    m3, _ = _split(sorrydb_index, tmp_path / "by_file", *args, "--group-by", "file")
    split_of_file: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name, split in m3["splits"].items():
        for item_id in split["items"]:
            row = rows[item_id]
            split_of_file[(normalise_repo(row["repo_remote"]), row["path"])].add(name)
    assert all(len(s) == 1 for s in split_of_file.values())  # a declaration's sorries share a file
    assert len(split_of_file) < 291  # some files hold several sorries: the grouping matters


def test_lsrb_split_refuses_bad_input_in_one_sentence(
    write_rows: Any, make_row: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = write_rows([make_row("a", "⊢ True")])
    assert lsrb(["split", str(index), "--out", str(tmp_path / "o"), "--cutoff", "last year"]) == 2
    assert "--cutoff: 'last year' is not an ISO date" in capsys.readouterr().err
    assert lsrb(["split", str(index), "--out", str(tmp_path / "o"), "--group-by", "team"]) == 2
    assert "row 'a' has no field 'team'" in capsys.readouterr().err
    assert lsrb(["split", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_contamination_report_names_benchmark_items_and_files_shared_across_splits() -> None:
    def row(item_id: str, remote: str, path: str, tags: tuple[str, ...] = ()) -> SimpleNamespace:
        return SimpleNamespace(
            item_id=item_id, repo_remote=remote, path=path, goal_text=f"⊢ {item_id}", tags=tags
        )

    rows = [
        row("a", "https://github.com/yangky11/miniF2F-lean4", "MiniF2F/Test.lean"),
        row("b", "https://github.com/acme/goals", "Goals/A.lean"),
        row("c", "https://github.com/ACME/goals.git", "Goals/A.lean"),
        row("d", "https://github.com/acme/goals", "Goals/B.lean", ("benchmark_source",)),
        row("e", "https://github.com/acme/goals", "Compfiles/Imo2019P1.lean"),
    ]
    report = contamination_report(rows, {"dev": ["a", "b"], "test": ["c", "d", "e"]}, None)
    sources = report["benchmark_sources"]
    assert sources["items"] == 3
    assert sources["by_split"] == {
        "dev": {"count": 1, "item_ids": ["a"]},
        "test": {"count": 2, "item_ids": ["d", "e"]},
    }
    files = report["shared_files"]
    assert (files["groups"], files["item_ids"]) == (1, ["b", "c"])
    assert files["entries"][0]["file"] == "github.com/acme/goals/Goals/A.lean"
    assert "items from published benchmarks: 3 (dev 1, test 2)" in report_headline(report)
    kept = contamination_report(rows, {"dev": ["a", "b", "c"], "test": ["d", "e"]}, None)
    assert kept["shared_files"]["groups"] == 0
