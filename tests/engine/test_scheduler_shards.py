"""`--lsrb-shard-index auto`: the shard a scheduler gives, and a Slurm array that merges into the
unsharded run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.records import strip_timing
from pytest_lsrb.engine.shards import resolve_shard, scheduler_shard, slurm_array_ids

SUITE = Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1"


@pytest.mark.parametrize(
    ("env", "index", "count"),
    [
        ({"LSRB_SHARD_INDEX": "2", "LSRB_SHARD_COUNT": "4"}, 2, 4),
        ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, 1, 3),
        # `sbatch --array=1-3`: ids 1..3, the first is shard 0
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, 2, 3),
        ({"JOB_COMPLETION_INDEX": "0", "LSRB_SHARD_COUNT": "5"}, 0, 5),
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2"}, 0, 2),  # GitLab counts from 1
        # the explicit variable wins over a scheduler's
        (
            {"LSRB_SHARD_INDEX": "0", "LSRB_SHARD_COUNT": "2", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2"},
            0,
            2,
        ),
    ],
)
def test_each_scheduler_gives_a_zero_based_index_and_count(
    env: dict[str, str], index: int, count: int
) -> None:
    assert resolve_shard("auto", "1", False, env) == (index, count)
    assert resolve_shard("auto", "auto", True, env) == (index, count)


def test_numbers_pass_through_and_an_explicit_count_must_agree() -> None:
    assert resolve_shard("1", "3", True, {}) == (1, 3)
    env = {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3"}
    assert resolve_shard("auto", "3", True, env) == (1, 3)
    with pytest.raises(LsrbUsageError, match="disagrees with the scheduler's count 3"):
        resolve_shard("auto", "4", True, env)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({}, "no scheduler shard in the environment"),
        ({"SLURM_ARRAY_TASK_ID": "one"}, "SLURM_ARRAY_TASK_ID is 'one', not a whole number"),
        ({"JOB_COMPLETION_INDEX": "3"}, "set LSRB_SHARD_COUNT to its completions"),
    ],
)
def test_missing_or_odd_variables_are_one_sentence(env: dict[str, str], says: str) -> None:
    with pytest.raises(LsrbUsageError, match="--lsrb-shard") as info:
        resolve_shard("auto", "1", False, env)
    assert says in str(info.value) and "\n" not in str(info.value)
    assert scheduler_shard({"CI_NODE_INDEX": "2"}).index == 1


def run(root: Path, out: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS" and not k.startswith("SLURM_")}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--lsrb-output-dir={root / out}",
        "--lsrb-max-items=20",
        "--lsrb-outcome=record",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env={**clean, **env}, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def records(path: Path) -> list[dict[str, Any]]:
    rows = [
        strip_timing(json.loads(line)) for line in (path / "attempts.jsonl").read_text("utf-8").splitlines()
    ]
    return sorted(rows, key=lambda r: (r["item_id"], r["sample_index"]))


def test_a_slurm_array_runs_its_shards_and_they_merge_to_the_unsharded_run(tmp_path: Path) -> None:
    for task in range(3):
        env = {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0"}
        run(tmp_path, f"s{task}", env, "--lsrb-shard-index=auto")
        header = json.loads((tmp_path / f"s{task}" / "run.json").read_text("utf-8"))
        assert (header["shard_index"], header["shard_count"]) == (task, 3)
    run(tmp_path, "full", {})
    assert (
        lsrb(["merge", *(str(tmp_path / f"s{t}") for t in range(3)), "--out", str(tmp_path / "merged")]) == 0
    )
    assert records(tmp_path / "merged") == records(tmp_path / "full")


# -- Slurm arrays with a step or a list (issue #27) ----------------------------------------------


def slurm_env(spec: str, task: int, listed: bool = False) -> dict[str, str]:
    """What slurmctld exports to a task of `sbatch --array=<spec>` (job_mgr.c `_create_job_array`):
    COUNT the number of ids, MIN/MAX the first and last, STEP the number after the first `:` or 1."""
    ids = slurm_array_ids(spec)
    step = spec.split("%")[0].split(":", 1)[1].split(",")[0] if ":" in spec else "1"
    env = {
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_COUNT": str(len(ids)),
        "SLURM_ARRAY_TASK_MIN": str(ids[0]),
        "SLURM_ARRAY_TASK_MAX": str(ids[-1]),
        "SLURM_ARRAY_TASK_STEP": str(int(step)),
    }
    return {**env, "LSRB_SLURM_ARRAY": spec} if listed else env


@pytest.mark.parametrize("spec", ["0-9:2", "1-10:3", "5-5", "3-7", "0-9:2%2", "1,2,3", "0-100:7"])
def test_an_evenly_spaced_slurm_array_maps_each_task_to_its_own_shard(spec: str) -> None:
    ids = slurm_array_ids(spec)
    shards = [resolve_shard("auto", "auto", True, slurm_env(spec, task)) for task in ids]
    assert sorted(index for index, _ in shards) == list(range(len(ids)))
    assert {count for _, count in shards} == {len(ids)}


@pytest.mark.parametrize("spec", ["1,5,7", "4,6,8", "0-3,10", "1-10:3,20", "0,2-3"])
def test_an_uneven_slurm_array_is_refused_unless_its_list_is_given(spec: str) -> None:
    ids = slurm_array_ids(spec)
    for task in ids:
        try:
            index, count = resolve_shard("auto", "auto", True, slurm_env(spec, task))
        except LsrbUsageError as exc:
            assert "LSRB_SLURM_ARRAY" in str(exc) and "not evenly spaced" in str(exc)
            continue
        assert 0 <= index < count == len(ids)  # an id whose own offset is exact
    refused = 0
    for task in ids:
        try:
            resolve_shard("auto", "auto", True, slurm_env(spec, task))
        except LsrbUsageError:
            refused += 1
    assert refused >= 1  # no mapping that would leave a shard unrun
    listed = [resolve_shard("auto", "auto", True, slurm_env(spec, task, listed=True)) for task in ids]
    assert [index for index, _ in listed] == list(range(len(ids)))
    assert {count for _, count in listed} == {len(ids)}


@given(
    parts=st.lists(
        st.tuples(st.integers(0, 60), st.integers(0, 20), st.integers(1, 5)), min_size=1, max_size=4
    )
)
@settings(max_examples=200)
def test_any_slurm_array_maps_exactly_or_is_refused(parts: list[tuple[int, int, int]]) -> None:
    """Every task one shard, none missing: either all tasks map to 0..COUNT-1 once each, or the
    ones that cannot be placed are refused (and with LSRB_SLURM_ARRAY all map exactly)."""
    spec = ",".join(f"{a}-{a + n}:{s}" if n else str(a) for a, n, s in parts)
    ids = slurm_array_ids(spec)
    got: list[int] = []
    for task in ids:
        try:
            index, count = resolve_shard("auto", "auto", True, slurm_env(spec, task))
        except LsrbUsageError:
            continue
        assert count == len(ids)
        got.append(index)
    assert len(set(got)) == len(got) and all(0 <= i < len(ids) for i in got)  # never two on one
    listed = [resolve_shard("auto", "auto", True, slurm_env(spec, task, listed=True))[0] for task in ids]
    assert listed == list(range(len(ids)))


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (
            {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "3", "LSRB_SLURM_ARRAY": "1,5"},
            "gives 2 as the array's count, but SLURM_ARRAY_TASK_COUNT is 3",
        ),
        ({"SLURM_ARRAY_TASK_ID": "4", "LSRB_SLURM_ARRAY": "1,5,7"}, "SLURM_ARRAY_TASK_ID 4 is not in"),
        ({"SLURM_ARRAY_TASK_ID": "4", "LSRB_SLURM_ARRAY": "7-1"}, "is not an sbatch --array value"),
        ({"SLURM_ARRAY_TASK_ID": "4", "LSRB_SLURM_ARRAY": "0-99999999"}, "is not an sbatch --array value"),
        ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_STEP": "0"}, "is 0, not a step"),
    ],
)
def test_a_slurm_list_that_disagrees_is_named(env: dict[str, str], says: str) -> None:
    with pytest.raises(LsrbUsageError, match=says):
        resolve_shard("auto", "auto", True, env)
