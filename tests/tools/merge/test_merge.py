"""`lsrb merge`: three shards run with `-n 2` merge into exactly the unsharded run; bad shard sets
are refused with a sentence naming what is wrong."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.engine.options import identity_hash
from pytest_lsrb.engine.records import strip_timing
from pytest_lsrb.engine.summary import SUMMARY_TIMING_KEYS

SUITE = Path(__file__).resolve().parents[3] / "suites" / "goal_to_tactic_proposal_v1"
COMMON = ("--lsrb-samples=2", "--lsrb-outcome=record", "--lsrb-max-items=30")

# Plugins installed beside ours that these runs do not use; loading them costs ~2 s of CPU per
# process (each xdist worker too).
UNUSED_PLUGINS = ("-p", "no:benchmark", "-p", "no:hypothesispytest", "-p", "no:syrupy", "-p", "no:anyio")


def run_pytest(cwd: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        *UNUSED_PLUGINS,
        f"--lsrb-output-dir={out}",
        *COMMON,
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    if proc.returncode != 0:
        shown = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "Benchmark" not in ln]
        pytest.fail(f"pytest exited {proc.returncode}:\n" + "\n".join(shown[-80:]))
    return proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """s0, s1, s2: the shards of one run, each with two xdist workers; full: the unsharded run."""
    root = tmp_path_factory.mktemp("runs")
    for i in range(3):
        run_pytest(root, root / f"s{i}", "-n", "2", "--lsrb-shard-count=3", f"--lsrb-shard-index={i}")
    run_pytest(root, root / "full")
    return root


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_merging_the_shards_gives_the_unsharded_run(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shards = [str(runs / f"s{i}") for i in range(3)]
    assert lsrb(["merge", *reversed(shards), "--out", str(runs / "merged")]) == 0
    assert "merged 3 shards" in capsys.readouterr().out

    full = json.loads((runs / "full" / "summary.json").read_text("utf-8"))
    merged = json.loads((runs / "merged" / "summary.json").read_text("utf-8"))
    untimed = lambda s: {k: v for k, v in s.items() if k not in SUMMARY_TIMING_KEYS}  # noqa: E731
    assert untimed(merged) == untimed(full)
    assert merged["shard_count"] == 1 and merged["complete"] and merged["attempts"] == 2 * full["items"]
    shard_sizes = [json.loads((Path(s) / "run.json").read_text("utf-8"))["attempts_expected"] for s in shards]
    assert all(n > 0 for n in shard_sizes) and sum(shard_sizes) == full["attempts"]

    # The records themselves are the unsharded run's, config_hash included.
    key = lambda r: (r["item_id"], r["sample_index"])  # noqa: E731
    want = sorted((strip_timing(r) for r in read_jsonl(runs / "full" / "attempts.jsonl")), key=key)
    got = [strip_timing(r) for r in read_jsonl(runs / "merged" / "attempts.jsonl")]
    assert got == want
    header = json.loads((runs / "merged" / "run.json").read_text("utf-8"))
    assert header["config_hash"] == full["config_hash"]
    assert [m["shard_index"] for m in header["merged_from"]] == [0, 1, 2]
    # ...so the gate sees no difference between them.
    assert lsrb(["compare", str(runs / "full"), str(runs / "merged")]) == 0


def copy_shard(runs: Path, name: str, tmp_path: Path, tag: str = "copy") -> Path:
    dst = tmp_path / f"{name}-{tag}"
    shutil.copytree(runs / name, dst)
    return dst


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert lsrb(["merge", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err  # one sentence
    return err


def test_merge_refuses_missing_duplicate_and_overlapping_shards(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s0, s1, s2 = (str(runs / f"s{i}") for i in range(3))
    out = str(tmp_path / "out")
    assert "shard(s) 2 of 3 are missing" in refused([s0, s1, "--out", out], capsys)
    twin = copy_shard(runs, "s0", tmp_path)
    assert f"{s0} and {twin} are both shard 0 of 3 (overlapping shards)" in refused(
        [s0, str(twin), s1, s2, "--out", out], capsys
    )
    # A shard holding an attempt that belongs to another shard.
    stray = copy_shard(runs, "s1", tmp_path, "stray")
    foreign = read_jsonl(runs / "s0" / "attempts.jsonl")[0]
    own_hash = json.loads((stray / "run.json").read_text("utf-8"))["config_hash"]
    with (stray / "attempts.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({**foreign, "config_hash": own_hash}) + "\n")
    msg = refused([s0, str(stray), s2, "--out", out], capsys)
    assert f"holds an attempt of item '{foreign['item_id']}', which belongs to shard 0" in msg
    assert "must" not in msg and not (tmp_path / "out" / "attempts.jsonl").exists()


def test_merge_refuses_an_unfinished_shard_and_shards_of_another_run(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s0, s2 = str(runs / "s0"), str(runs / "s2")
    out = str(tmp_path / "out")
    short = copy_shard(runs, "s1", tmp_path, "short")
    lines = (short / "attempts.jsonl").read_text("utf-8").splitlines(keepends=True)
    (short / "attempts.jsonl").write_text("".join(lines[:-1]), "utf-8")
    msg = refused([s0, str(short), s2, "--out", out], capsys)
    assert f"holds {len(lines) - 1} of its {len(lines)} attempts; finish it with --lsrb-resume" in msg

    # Shard 1 of another run: the same but for the seed (its header as that run writes it).
    other = copy_shard(runs, "s1", tmp_path, "other-seed")
    header = json.loads((other / "run.json").read_text("utf-8"))
    config = {**header["config"], "seed": 1}
    (other / "run.json").write_text(
        json.dumps({**header, "config": config, "config_hash": identity_hash(config)}), "utf-8"
    )
    msg = refused([s0, str(other), s2, "--out", out], capsys)
    assert "the shards disagree on config_hash" in msg and "(config keys that differ: seed)" in msg

    edited = copy_shard(runs, "s1", tmp_path, "edited")
    header = json.loads((edited / "run.json").read_text("utf-8"))
    (edited / "run.json").write_text(json.dumps({**header, "selected_rows_hash": "f" * 64}), "utf-8")
    assert "the shards disagree on selected_rows_hash" in refused([s0, str(edited), s2, "--out", out], capsys)

    assert f"{tmp_path} is not a run output directory" in refused([str(tmp_path), "--out", out], capsys)


def test_merge_does_not_overwrite_a_run_unless_told(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = [str(runs / f"s{i}") for i in range(3)]
    out = tmp_path / "merged"
    assert lsrb(["merge", *shards, "--out", str(out)]) == 0
    assert "already holds a run" in refused([*shards, "--out", str(out)], capsys)
    assert lsrb(["merge", *shards, "--out", str(out), "--overwrite"]) == 0
    assert "is one of the shards" in refused([*shards, "--out", shards[0]], capsys)
