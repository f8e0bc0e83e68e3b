"""`--lsrb-split-policy manifest:PATH#SPLIT`: a run evaluates exactly a frozen split, and refuses a
manifest made from another index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tools.splits import split_policy_predicate


@pytest.fixture
def frozen(write_rows: Any, make_row: Any, tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    rows = [make_row(f"g{i:02d}", f"n : Nat\n⊢ n + {i} = {i} + n") for i in range(12)]
    index = write_rows(rows)
    assert (
        lsrb(["split", str(index), "--out", str(tmp_path / "splits"), "--splits", "dev=0.25,test=0.75"]) == 0
    )
    manifest_path = tmp_path / "splits" / "split_manifest.json"
    return index, manifest_path, json.loads(manifest_path.read_text("utf-8"))


def test_the_predicate_keeps_exactly_the_named_split(frozen: tuple[Path, Path, dict[str, Any]]) -> None:
    index, manifest_path, manifest = frozen
    rows = [TacticRow.model_validate_json(line) for line in index.read_text("utf-8").splitlines()]
    for name in ("dev", "test"):
        keep = split_policy_predicate(f"manifest:{manifest_path}#{name}", index)
        assert sorted(r.item_id for r in rows if keep(r)) == sorted(manifest["splits"][name]["items"])
    assert manifest["splits"]["dev"]["count"] == 3


def test_refusals_are_one_sentence_naming_the_problem(
    frozen: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    index, manifest_path, _ = frozen
    other = tmp_path / "other.jsonl"
    other.write_text(index.read_text("utf-8").replace("n + 3 = 3 + n", "n + 3 = n + 3"), "utf-8")
    with pytest.raises(LsrbUsageError) as err:
        split_policy_predicate(f"manifest:{manifest_path}#dev", other)
    message = str(err.value)
    assert f"the split manifest {manifest_path} was made from an index with SHA-256" in message
    assert str(other) in message and message.count(". ") == 0 and message.endswith(".")
    with pytest.raises(LsrbUsageError, match=r"has no split 'train' \(it has: dev, test\)"):
        split_policy_predicate(f"manifest:{manifest_path}#train", index)
    with pytest.raises(LsrbUsageError, match="should read manifest:PATH#SPLIT"):
        split_policy_predicate(f"manifest:{manifest_path}", index)
    with pytest.raises(LsrbUsageError, match="does not exist"):
        split_policy_predicate(f"manifest:{tmp_path / 'nope.json'}#dev", index)
    with pytest.raises(LsrbUsageError, match="not a split manifest"):
        split_policy_predicate(f"manifest:{manifest_path.parent / 'contamination_report.json'}#dev", index)
    with pytest.raises(LsrbUsageError, match=r"expected all, dev, test or manifest:PATH#SPLIT"):
        split_policy_predicate("holdout", index)


def test_a_run_on_a_frozen_split_evaluates_its_items_and_a_changed_index_stops_before_any_call(
    frozen: tuple[Path, Path, dict[str, Any]], run_suite: Any, tmp_path: Path
) -> None:
    index, manifest_path, manifest = frozen
    policy = f"--lsrb-split-policy=manifest:{manifest_path}#test"
    result = run_suite(f"--lsrb-index={index}", policy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(r["item_id"] for r in result.attempts()) == sorted(manifest["splits"]["test"]["items"])
    assert result.summary()["config"]["split_policy"] == f"manifest:{manifest_path}#test"

    with index.open("a", encoding="utf-8") as fh:  # the index grows after the split was frozen
        row = json.loads(index.read_text("utf-8").splitlines()[0])
        fh.write(json.dumps({**row, "item_id": "late_arrival"}) + "\n")
    refused = run_suite(f"--lsrb-index={index}", policy, out=tmp_path / "refused")
    assert refused.returncode == 4  # pytest's usage error: nothing ran
    assert "was made from an index with SHA-256" in refused.stderr
    assert not (tmp_path / "refused" / "attempts.jsonl").exists()
