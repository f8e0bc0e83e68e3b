"""Time caps and the fit procedure for a discovery run, from the run options
(`--lsrb-sr-time-limit`, `--lsrb-sr-fit-time-limit`, `--lsrb-sr-fit`). Both caps live in the
run (a deadline checked between model calls and inside every fit's objective), so no candidate
needs a process of its own. The symbolic check after the run is the exception: sympy cannot be
interrupted, so it gets a child process and a budget (`judge_budget`, `--lsrb-sr-judge-time-limit`)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.core.bounded import Budget
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.fit import FIT_POLICIES, FitLimits

# The sympy checker's budget per attempt (it runs in a child process, core.bounded): at most
# `--lsrb-sr-judge-time-limit` seconds, and no more than what `--lsrb-sr-time-limit` leaves of the
# attempt (but at least MIN_JUDGE_S, so a run that used all its time still gets a quick verdict);
# and this much memory on top of the worker's own.
SYMBOLIC_TIME_S: Final = 60.0
SYMBOLIC_MEMORY_MB: Final = 2048
MIN_JUDGE_S: Final = 1.0
SYMBOLIC_BUDGET: Final = Budget(time_s=SYMBOLIC_TIME_S, memory_mb=SYMBOLIC_MEMORY_MB)


def judge_budget(options: Mapping[str, Any], started: float) -> Budget:
    """The symbolic check's budget for an attempt that started at `started` (perf_counter)."""
    limit = float(options.get("sr_judge_time_limit") or SYMBOLIC_TIME_S)
    run_limit = options.get("sr_time_limit")
    if run_limit is not None:
        left = float(run_limit) - (time.perf_counter() - started)
        limit = min(limit, max(MIN_JUDGE_S, left))
    return Budget(time_s=limit, memory_mb=SYMBOLIC_MEMORY_MB)


@dataclass(frozen=True)
class RunLimits:
    time_limit_s: float | None = None  # the whole discovery run; None: no cap
    fit: FitLimits = field(default_factory=FitLimits)  # each candidate's fit

    def deadline(self, start: float | None = None) -> float | None:
        """The run's absolute `time.perf_counter()` deadline, if it has a cap."""
        if self.time_limit_s is None:
            return None
        return (time.perf_counter() if start is None else start) + self.time_limit_s


def run_limits(options: Mapping[str, Any]) -> RunLimits:
    limit = options.get("sr_time_limit")
    fit_limit = options.get("sr_fit_time_limit")
    policy = str(options.get("sr_fit") or "reference")
    if policy not in FIT_POLICIES:
        raise LsrbUsageError(f"--lsrb-sr-fit: expected one of {', '.join(FIT_POLICIES)} (got {policy!r}).")
    fit = FitLimits(policy=policy)
    if fit_limit is not None:
        fit = dataclasses.replace(fit, time_limit_s=float(fit_limit))
    return RunLimits(time_limit_s=None if limit is None else float(limit), fit=fit)


def check_limits(values: Mapping[str, Any]) -> None:
    """Refuse a non-positive cap before any model is called."""
    for key in ("sr_time_limit", "sr_fit_time_limit", "sr_judge_time_limit"):
        value = values.get(key)
        if value is not None and not float(value) > 0:
            flag = "--lsrb-" + key.replace("_", "-")
            raise LsrbUsageError(f"{flag} must be a positive number of seconds (got {value}).")
