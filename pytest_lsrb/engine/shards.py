"""`--lsrb-shard-index auto`: the shard a scheduler gave this process, read from its environment.

Looked for in this order (the first scheduler whose index variable is set wins):

    explicit     LSRB_SHARD_INDEX (0-based)          LSRB_SHARD_COUNT
    Slurm array  (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP
                                                     SLURM_ARRAY_TASK_COUNT
                 (MIN defaults to 0, STEP to 1; `--array=0-9:2` gives shards 0..4 of 5.) Slurm
                 exports no task list, so an array whose ids are not evenly spaced (`--array=1,5,7`)
                 is refused unless LSRB_SLURM_ARRAY repeats the `--array` value: the shard is then
                 the task id's position in that list (checked against Slurm's MIN, MAX and COUNT).
    Kubernetes   JOB_COMPLETION_INDEX (Indexed Job, 0-based)
                                                     LSRB_SHARD_COUNT (set it to the Job's completions)
    GitLab       CI_NODE_INDEX - 1 (`parallel:`, 1-based)
                                                     CI_NODE_TOTAL

GitHub Actions has no such variable: pass the matrix value, `--lsrb-shard-index ${{ matrix.shard }}`.
`--lsrb-shard-count auto` (or leaving it at its default 1 with an auto index) takes the count
from the same scheduler; an explicit count must agree with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pytest_lsrb.core.errors import LsrbUsageError

AUTO: Final = "auto"


@dataclass(frozen=True)
class SchedulerShard:
    index: int
    count: int | None
    source: str  # which variables said so, for messages and the header


def _int(env: Mapping[str, str], name: str) -> int:
    raw = env[name].strip()
    try:
        return int(raw)
    except ValueError:
        raise LsrbUsageError(
            f"--lsrb-shard-index auto: the environment variable {name} is {raw[:40]!r}, not a whole number."
        ) from None


def _opt(env: Mapping[str, str], name: str) -> int | None:
    return _int(env, name) if env.get(name, "").strip() else None


def scheduler_shard(env: Mapping[str, str]) -> SchedulerShard:
    """The shard index (0-based) and count the environment gives; one sentence when none does."""
    if env.get("LSRB_SHARD_INDEX", "").strip():
        return SchedulerShard(
            _int(env, "LSRB_SHARD_INDEX"), _opt(env, "LSRB_SHARD_COUNT"), "LSRB_SHARD_INDEX/LSRB_SHARD_COUNT"
        )
    if env.get("SLURM_ARRAY_TASK_ID", "").strip():
        return _slurm_shard(env)
    if env.get("JOB_COMPLETION_INDEX", "").strip():
        return SchedulerShard(
            _int(env, "JOB_COMPLETION_INDEX"),
            _opt(env, "LSRB_SHARD_COUNT"),
            "JOB_COMPLETION_INDEX/LSRB_SHARD_COUNT",
        )
    if env.get("CI_NODE_INDEX", "").strip():
        return SchedulerShard(
            _int(env, "CI_NODE_INDEX") - 1, _opt(env, "CI_NODE_TOTAL"), "CI_NODE_INDEX/CI_NODE_TOTAL"
        )
    raise LsrbUsageError(
        "--lsrb-shard-index auto: no scheduler shard in the environment (looked for LSRB_SHARD_INDEX, "
        "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, CI_NODE_INDEX); pass the index itself instead."
    )


SLURM_SOURCE: Final = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT"
SLURM_LIST_ENV: Final = "LSRB_SLURM_ARRAY"
MAX_ARRAY_IDS: Final = 4_000_001  # Slurm's MaxArraySize is at most 4000001


def _slurm_shard(env: Mapping[str, str]) -> SchedulerShard:
    """A Slurm array task's shard. Slurm's controller sets MIN/MAX (the first and last id), COUNT
    (how many ids) and STEP (the number after `:` in `--array`, else 1; slurmctld/job_mgr.c
    `_create_job_array`), so an evenly spaced array maps exactly and any other needs its list."""
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    low, high = _opt(env, "SLURM_ARRAY_TASK_MIN"), _opt(env, "SLURM_ARRAY_TASK_MAX")
    given_step, count = _opt(env, "SLURM_ARRAY_TASK_STEP"), _opt(env, "SLURM_ARRAY_TASK_COUNT")
    step = 1 if given_step is None else given_step
    if env.get(SLURM_LIST_ENV, "").strip():
        ids = slurm_array_ids(env[SLURM_LIST_ENV])
        said = {"MIN": (low, ids[0]), "MAX": (high, ids[-1]), "COUNT": (count, len(ids))}
        for name, (slurm, listed) in said.items():
            if slurm is not None and slurm != listed:
                raise LsrbUsageError(
                    f"--lsrb-shard-index auto: {SLURM_LIST_ENV} gives {listed} as the array's "
                    f"{name.lower()}, but SLURM_ARRAY_TASK_{name} is {slurm}: it must repeat this "
                    "job's --array value."
                )
        position = {task_id: i for i, task_id in enumerate(ids)}.get(task)
        if position is None:
            raise LsrbUsageError(
                f"--lsrb-shard-index auto: SLURM_ARRAY_TASK_ID {task} is not in {SLURM_LIST_ENV}."
            )
        return SchedulerShard(position, len(ids), f"SLURM_ARRAY_TASK_ID/{SLURM_LIST_ENV}")
    low = 0 if low is None else low
    if step < 1:
        raise LsrbUsageError(f"--lsrb-shard-index auto: SLURM_ARRAY_TASK_STEP is {step}, not a step.")
    even = (task - low) % step == 0 and (count is None or high is None or high == low + step * (count - 1))
    if not even:
        raise LsrbUsageError(
            f"--lsrb-shard-index auto: this Slurm array's ids are not evenly spaced (MIN {low}, MAX "
            f"{high}, STEP {step}, COUNT {count}), and Slurm does not say which they are; export "
            f"{SLURM_LIST_ENV} set to the --array value (e.g. {SLURM_LIST_ENV}=1,5,7)."
        )
    return SchedulerShard((task - low) // step, count, SLURM_SOURCE)


def slurm_array_ids(spec: str) -> list[int]:
    """The sorted task ids of an `sbatch --array` value: `0-9:2`, `1,5,7`, `1-3,10%2`."""
    text = spec.strip().split("%", 1)[0]
    ids: set[int] = set()
    for item in text.split(","):
        try:
            span, _, step_text = item.strip().partition(":")
            first_text, _, last_text = span.partition("-")
            first = int(first_text)
            last = int(last_text) if last_text else first
            step = int(step_text) if step_text else 1
        except ValueError:
            first, last, step = -1, -1, 0
        if first < 0 or last < first or step < 1 or len(ids) + (last - first) // step >= MAX_ARRAY_IDS:
            raise LsrbUsageError(
                f"--lsrb-shard-index auto: {SLURM_LIST_ENV}={spec[:60]!r} is not an sbatch --array "
                "value (ids, ranges a-b and steps a-b:s, separated by commas)."
            )
        ids.update(range(first, last + 1, step))
    return sorted(ids)


def resolve_shard(index: str, count: str, count_given: bool, env: Mapping[str, str]) -> tuple[int, int]:
    """`--lsrb-shard-index`/`--lsrb-shard-count` as given (numbers or `auto`) -> (index, count)."""
    auto_index, auto_count = index.strip() == AUTO, count.strip() == AUTO
    found = scheduler_shard(env) if auto_index or auto_count else None
    if found is None:
        return _number(index, "shard-index"), _number(count, "shard-count")
    shard_index = found.index if auto_index else _number(index, "shard-index")
    if auto_count or not count_given:
        if found.count is None:
            raise LsrbUsageError(
                f"--lsrb-shard-count: {found.source} gives no shard count; pass --lsrb-shard-count N "
                "(for a Kubernetes Indexed Job, set LSRB_SHARD_COUNT to its completions)."
            )
        return shard_index, found.count
    shard_count = _number(count, "shard-count")
    if found.count is not None and found.count != shard_count:
        raise LsrbUsageError(
            f"--lsrb-shard-count {shard_count} disagrees with the scheduler's count {found.count} "
            f"({found.source})."
        )
    return shard_index, shard_count


def _number(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise LsrbUsageError(f"--lsrb-{name}: '{text}' is not a whole number or 'auto'.") from None
