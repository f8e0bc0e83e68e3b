"""`--lsrb-shard-index auto`: the shard a scheduler gave this process, read from its environment.

Looked for in this order (the first scheduler whose index variable is set wins):

    explicit     LSRB_SHARD_INDEX (0-based)          LSRB_SHARD_COUNT
    Slurm array  SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN (MIN defaults to 0)
                                                     SLURM_ARRAY_TASK_COUNT
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
        low = _opt(env, "SLURM_ARRAY_TASK_MIN") or 0
        return SchedulerShard(
            _int(env, "SLURM_ARRAY_TASK_ID") - low,
            _opt(env, "SLURM_ARRAY_TASK_COUNT"),
            "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT",
        )
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
