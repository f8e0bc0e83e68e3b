"""Lone surrogates in input files: JSON may spell one (`"\\ud800"`), no UTF-8 text can hold one.

One rule everywhere: an input file whose string holds one is refused before anything is hashed,
recorded or sent, in one sentence naming file, line and field. (Model answers holding one are
escaped instead: tests/hardening/test_hostile_model_output.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_kit import any_character, assert_one_sentence
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lsrb_testing import REPO, SUITES, TACTIC_SUITE, RunSuite, lsrb

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import lone_surrogate
from pytest_lsrb.engine.option_table import dest
from pytest_lsrb.session.prepare import prepare_suite_run

BUILTIN = [json.loads(x) for x in (TACTIC_SUITE / "index.jsonl").read_text("utf-8").splitlines() if x]
SRBENCH = SUITES / "llm_srbench"
SENTENCE = "holds a lone surrogate (\\ud800), which no UTF-8 text can hold; remove it."
# Every string field of an index row (tags is a list of strings).
TACTIC_FIELDS = (
    "item_id", "repo_remote", "repo_branch", "repo_commit", "repo_lean_version", "path",
    "goal_text", "url", "sorry_kind", "blame_date", "inclusion_date",
)  # fmt: skip


def write_index(path: Path, rows: list[dict[str, Any]]) -> Path:
    # json.dumps writes the surrogate as the escape `\ud800`: valid JSON, valid UTF-8 bytes.
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def prepared_message(suite: Path, index: Path) -> str:
    values = {dest("index"): str(index)}
    with pytest.raises(LsrbUsageError) as err:
        prepare_suite_run(suite, values.get, REPO)
    return str(err.value)


def test_lone_surrogate_finds_the_field_and_leaves_pairs_alone() -> None:
    assert lone_surrogate({"a": ["ok", {"b": "x\ud800"}]}) == ("a.1.b", "\\ud800")
    assert lone_surrogate({"k\udfff": 1}) == ("k\udfff", "\\udfff")
    assert lone_surrogate(json.loads('{"a": "\\ud83d\\ude00"}')) is None  # a pair: one emoji
    deep: Any = "\ud800"
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = [deep]
    assert lone_surrogate(deep) is not None


@pytest.mark.parametrize("field", [*TACTIC_FIELDS, "tags"])
def test_an_index_row_field_holding_a_lone_surrogate_is_named(tmp_path: Path, field: str) -> None:
    rows = [dict(r) for r in BUILTIN[:3]]
    rows[1][field] = ["nat", "\ud800"] if field == "tags" else "a\ud800b"
    index = write_index(tmp_path / "index.jsonl", rows)
    message = prepared_message(TACTIC_SUITE, index)
    where = f"{index}:2: field '{field}.1'" if field == "tags" else f"{index}:2: field '{field}'"
    assert message == f"{where} {SENTENCE}"
    assert_one_sentence(message, index)


def test_through_pytest_a_lone_surrogate_is_one_sentence_and_exit_4(
    tmp_path: Path, run_suite: RunSuite
) -> None:
    rows = [dict(r) for r in BUILTIN[:3]]
    rows[2]["path"] = "Mathlib/\ud800.lean"
    index = write_index(tmp_path / "index.jsonl", rows)
    result = run_suite(f"--lsrb-index={index}", "-n", "2")
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"ERROR: {index}:3: field 'path' {SENTENCE}" in result.stderr
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert not result.out_dir.exists()  # nothing written before every row was validated


def test_a_problem_desc_holding_a_lone_surrogate_is_named(tmp_path: Path) -> None:
    lines = (SRBENCH / "index.jsonl").read_text("utf-8").splitlines()
    rows = [json.loads(x) for x in lines[:2]]
    for r in rows:  # data paths stay inside the index's folder: bring the data along
        (tmp_path / r["data"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SRBENCH / r["data"], tmp_path / r["data"])
    rows[1]["desc"] = "Physics \ud800"
    index = write_index(tmp_path / "index.jsonl", rows)
    assert prepared_message(SRBENCH, index) == f"{index}:2: field 'desc' {SENTENCE}"


def test_a_csv_problem_folder_metadata_holding_a_lone_surrogate_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "osc"
    folder.mkdir()
    for name in ("train.csv", "test_id.csv"):
        (folder / name).write_text("x,y\n1,2\n2,4\n3,6\n", encoding="utf-8")
    (folder / "metadata.json").write_text(json.dumps({"desc": "spring \udc00"}), encoding="utf-8")
    message = prepared_message(SRBENCH, folder / "train.csv")
    assert "field 'desc' holds a lone surrogate (\\udc00)" in message
    assert_one_sentence(message, folder)


def test_lsrb_split_and_import_refuse_a_lone_surrogate(tmp_path: Path, shared_data: Path) -> None:
    rows = [dict(r) for r in BUILTIN[:4]]
    rows[3]["goal_text"] = "⊢ \ud800"
    index = write_index(tmp_path / "index.jsonl", rows)
    proc = lsrb("split", str(index), "--out", str(tmp_path / "split"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"lsrb: error: {index}:4: field 'goal_text' {SENTENCE}\n"

    dump = json.loads((shared_data / "sorrydb" / "SorryDB_2601_sample.json").read_text("utf-8"))
    dump["sorries"] = dump["sorries"][:3]
    dump["sorries"][1]["location"]["path"] = "A/\ud800.lean"
    source = tmp_path / "sorrydb.json"
    source.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    proc = lsrb("import", "sorrydb", str(source), "-o", str(tmp_path / "out.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"record sorries[1]: field 'location.path' {SENTENCE}" in proc.stderr
    assert proc.stderr.startswith(f"lsrb: error: {source}:")
    assert not (tmp_path / "out.jsonl").exists()


def test_lsrb_merge_and_report_refuse_a_run_header_holding_a_lone_surrogate(
    tmp_path: Path, run_suite: RunSuite
) -> None:
    result = run_suite("--lsrb-max-items=3", out=tmp_path / "run")
    assert result.returncode == 0, result.stdout[-2000:]
    run_file = result.out_dir / "run.json"
    header = json.loads(run_file.read_text("utf-8"))
    header["config"]["goal_slice"] = "tag:\ud800"
    run_file.write_text(json.dumps(header, indent=2), encoding="utf-8")
    line = 1 + json.dumps(header, indent=2).split("\\ud800")[0].count("\n")
    expected = f"{run_file}:{line}: field 'config.goal_slice' {SENTENCE}"
    proc = lsrb("merge", str(result.out_dir), "--out", str(tmp_path / "merged"), cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (2, f"lsrb: error: {expected}\n")
    proc = lsrb("report", str(result.out_dir), cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (2, f"lsrb: error: {expected}\n")


@pytest.fixture(scope="module")
def one_shard_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("merge") / "run"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider"]
    cmd += ["--lsrb-max-items=2", f"--lsrb-output-dir={out}"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    return out


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(item_id=st.text(alphabet=any_character, max_size=12))
@example(item_id="\ud800")  # issue #27: merge tracebacked in the shard hash
@example(item_id="\udfff\ud800")
@example(item_id="\x85")  # found by hypothesis: a line break to splitlines(), not to JSON Lines
def test_lsrb_merge_handles_any_item_id_the_reader_accepts(
    one_shard_run: Path, tmp_path_factory: pytest.TempPathFactory, item_id: str
) -> None:
    """An attempts.jsonl rewritten with any item_id: merged, or one sentence naming the line."""
    from pytest_lsrb.tools.merge import merge_shards

    work = tmp_path_factory.mktemp("shard")
    shard = work / "run"
    shutil.copytree(one_shard_run, shard)
    attempts = shard / "attempts.jsonl"
    lines = attempts.read_text("utf-8").rstrip("\n").split("\n")  # (not splitlines: U+0085)
    record = json.loads(lines[0])
    record["item_id"] = item_id
    lines[0] = json.dumps(record)  # a lone surrogate becomes the escape \ud800: valid UTF-8 bytes
    attempts.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        summary = merge_shards([shard], work / "merged")
    except LsrbUsageError as exc:
        assert_one_sentence(str(exc), attempts if "lsrb merge" not in str(exc) else "lsrb merge")
        if lone_surrogate(item_id) is not None:
            assert f"{attempts}:1: field 'item_id' holds a lone surrogate" in str(exc)
        return
    assert lone_surrogate(item_id) is None
    assert summary["attempts"] >= 1
    text = (work / "merged" / "attempts.jsonl").read_text("utf-8")
    merged = [json.loads(x) for x in text.rstrip("\n").split("\n")]
    assert item_id in {r["item_id"] for r in merged}
