"""Hostile earlier output directories: a run resumed from, a baseline compared against, shards
merged. Damage to run.json or attempts.jsonl ends in one sentence naming the file (and line or
field) and leaves every file as it was; whatever is accepted is read to the end without a crash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_kit import assert_one_sentence, byte_mutations, field_mutations, json_values, outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_lsrb.engine.option_table import dest
from pytest_lsrb.engine.options import resolve
from pytest_lsrb.engine.suite import load_suite
from pytest_lsrb.output import rundir as outputs
from pytest_lsrb.session.prepare import prepare_suite_run
from pytest_lsrb.tools import gate
from pytest_lsrb.tools.merge import merge_shards

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
RUN_ARGS = {"max-items": "5", "samples": "2", "seed": "3"}
FUZZ = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_mock(out: Path, *extra: str) -> None:
    args = [f"--lsrb-{k}={v}" for k, v in RUN_ARGS.items()]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(SUITE),
            "-q",
            "-p",
            "no:cacheprovider",
            f"--lsrb-output-dir={out}",
            *args,
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=out.parent,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    made = {"full": root / "full", "shard0": root / "shard0", "shard1": root / "shard1"}
    run_mock(made["full"])
    for i in (0, 1):
        run_mock(made[f"shard{i}"], "--lsrb-shard-count=2", f"--lsrb-shard-index={i}")
    return made


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@st.composite
def damaged(draw: st.DrawFn, folder: Path) -> tuple[str, bytes]:
    """(file name, new bytes) for one damaged file of an output directory."""
    name = draw(st.sampled_from(["attempts.jsonl", "run.json"]))
    raw = (folder / name).read_bytes()
    how = draw(st.sampled_from(["bytes", "field", "config"] if name == "run.json" else ["bytes", "field"]))
    if how == "bytes":
        return name, draw(byte_mutations(raw))
    if name == "run.json":
        header = json.loads(raw)
        if how == "config":
            header["config"], _ = draw(field_mutations(header["config"]))
        else:
            header, _ = draw(field_mutations(header))
        return name, json.dumps(header, allow_nan=True).encode()
    lines = raw.decode().splitlines()
    i = draw(st.integers(0, len(lines) - 1))
    record, _ = draw(field_mutations(json.loads(lines[i])))
    lines[i] = json.dumps(record, allow_nan=True)
    return name, ("\n".join(lines) + "\n").encode()


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def copy_damaged(src: Path, dst: Path, damage: tuple[str, bytes]) -> Path:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    (dst / damage[0]).write_bytes(damage[1])
    return dst


def getoption(out: Path, **flags: Any) -> Any:
    values = {dest(k): v for k, v in RUN_ARGS.items()}
    values[dest("output-dir")] = str(out)
    values.update({dest(k): v for k, v in flags.items()})
    return lambda name: values.get(name)


@FUZZ
@given(data=st.data())
def test_resuming_a_damaged_run(runs: dict[str, Path], scratch: Path, data: st.DataObject) -> None:
    out = copy_damaged(runs["full"], scratch / "out", data.draw(damaged(runs["full"])))
    before = snapshot(out)
    run = prepare_suite_run(SUITE, getoption(out, resume=True), REPO)
    opened, message = outcome(lambda: outputs.RunOutput.open(run))
    if message is not None:
        assert_one_sentence(message, out)
        assert snapshot(out) == before  # a run that fails validation overwrites nothing
        return
    # Accepted: the runner's resume bookkeeping and the final summary read every record.
    outputs.finished_judgements(run)
    opened.finish(wall_time_s=0.0)


@FUZZ
@given(data=st.data())
def test_a_damaged_baseline(runs: dict[str, Path], scratch: Path, data: st.DataObject) -> None:
    base = copy_damaged(runs["full"], scratch / "base", data.draw(damaged(runs["full"])))
    before = snapshot(base)
    flags = {"baseline": str(base), "max-drop": "pass_at_1=0.1,pass_at_2=0.1"}
    run = resolve(getoption(scratch / "out", **flags), load_suite(SUITE), REPO)  # samples: 2
    config, message = outcome(lambda: gate.preflight(run, "goal_to_tactic_proposal_v1"))
    if message is not None:
        assert_one_sentence(message, base)
    else:
        assert config is not None
        gate.compare_dirs(config, runs["full"])
    assert snapshot(base) == before


@FUZZ
@given(data=st.data(), which=st.sampled_from(["shard0", "shard1"]))
def test_merging_a_damaged_shard(
    runs: dict[str, Path], scratch: Path, data: st.DataObject, which: str
) -> None:
    shards = {name: scratch / name for name in ("shard0", "shard1")}
    for name, path in shards.items():
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(runs[name], path)
    copy_damaged(runs[which], shards[which], data.draw(damaged(runs[which])))
    before = {name: snapshot(path) for name, path in shards.items()}
    merged = scratch / "merged"
    shutil.rmtree(merged, ignore_errors=True)
    _, message = outcome(lambda: merge_shards(list(shards.values()), merged))
    if message is not None:
        assert_one_sentence(message, scratch)
        assert not merged.exists() or not any(merged.iterdir())
    assert {name: snapshot(path) for name, path in shards.items()} == before


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values)
def test_a_split_manifest_of_any_shape(tmp_path: Path, value: Any) -> None:
    from pytest_lsrb.tools.splits import split_policy_predicate

    manifest = tmp_path / "split_manifest.json"
    manifest.write_text(json.dumps(value), encoding="utf-8")
    _, message = outcome(lambda: split_policy_predicate(f"manifest:{manifest}#test", SUITE / "index.jsonl"))
    assert message is not None
    assert_one_sentence(message, manifest)


@FUZZ
@given(data=st.data())
def test_a_damaged_split_manifest(scratch: Path, data: st.DataObject) -> None:
    from pytest_lsrb.core.rows import load_jsonl
    from pytest_lsrb.tactic.rows import TacticRow
    from pytest_lsrb.tools.splits import SplitConfig, make_split, split_policy_predicate

    index = SUITE / "index.jsonl"
    rows = load_jsonl(index, TacticRow)
    folder = scratch / "split"
    folder.mkdir(exist_ok=True)
    result = make_split(
        rows,
        SplitConfig(fractions=(("dev", 0.5), ("test", 0.5))),
        source=index,
        suite="goal_to_tactic_proposal_v1",
        out_dir=folder,
    )
    raw = result.manifest_path.read_bytes()
    if data.draw(st.booleans()):
        raw = data.draw(byte_mutations(raw))
    else:
        manifest = json.loads(raw)
        split = data.draw(st.sampled_from(["dev", "test"]))
        if data.draw(st.booleans()):
            manifest["splits"][split], _ = data.draw(field_mutations(manifest["splits"][split]))
        else:
            manifest, _ = data.draw(field_mutations(manifest))
        raw = json.dumps(manifest, allow_nan=True).encode()
    result.manifest_path.write_bytes(raw)
    keep, message = outcome(lambda: split_policy_predicate(f"manifest:{result.manifest_path}#test", index))
    if message is not None:
        assert_one_sentence(message, result.manifest_path)
    else:
        assert sum(map(keep, rows)) <= len(rows)


@pytest.mark.parametrize(
    ("name", "edit", "expected"),
    [
        ("attempts.jsonl", lambda r: {**r, "sample_index": "x"}, ":1: field 'sample_index'"),
        ("attempts.jsonl", lambda r: {**r, "sample_index": None}, ":1: field 'sample_index'"),
        ("attempts.jsonl", lambda r: {**r, "item_id": {}}, ":1: field 'item_id'"),
        ("attempts.jsonl", lambda r: {**r, "raw_output": 5}, ":1: field 'raw_output'"),
        ("attempts.jsonl", lambda r: {**r, "latency_ms": "slow"}, ":1: field 'latency_ms'"),
        (
            "attempts.jsonl",
            lambda r: {**r, "generation_error_kind": ["timeout"]},
            ":1: field 'generation_error_kind'",
        ),
        ("run.json", lambda h: {**h, "config": [1]}, "run.json: field 'config'"),
        ("run.json", lambda h: {**h, "shard_count": 0}, "run.json: field 'shard_count'"),
    ],
)
def test_damage_found_by_fuzzing_is_named_on_resume(
    runs: dict[str, Path], tmp_path: Path, name: str, edit: Any, expected: str
) -> None:
    """Each of these once escaped as a ValueError/TypeError traceback (or crashed the summary)."""
    out = tmp_path / "out"
    shutil.copytree(runs["full"], out)
    path = out / name
    if name == "run.json":
        path.write_text(json.dumps(edit(json.loads(path.read_text("utf-8")))), "utf-8")
    else:
        first, *rest = path.read_text("utf-8").splitlines()
        path.write_text("\n".join([json.dumps(edit(json.loads(first))), *rest]) + "\n", "utf-8")
    before = snapshot(out)
    run = prepare_suite_run(SUITE, getoption(out, resume=True), REPO)
    _, message = outcome(lambda: outputs.RunOutput.open(run))
    assert message is not None and expected in message, message
    assert_one_sentence(message, path)
    assert snapshot(out) == before
