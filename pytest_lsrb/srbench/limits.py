"""Time and token caps and the fit procedure for a discovery run, from the run options
(`--lsrb-sr-time-limit`, `--lsrb-sr-token-budget`, `--lsrb-sr-fit-time-limit`, `--lsrb-sr-fit`).
The token cap counts what the server reports in `usage` for the run's calls so far (`CallTally`),
checked before each call like the time cap. Both caps live in the
run (a deadline checked between model calls and inside every fit's objective), so no candidate
needs a process of its own. The symbolic check after the run is the exception: sympy cannot be
interrupted, so it gets a child process and a budget (`judge_budget`, `--lsrb-sr-judge-time-limit`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.bounded import Budget
from pytest_lsrb.srbench.fitting.fit import FitLimits
from pytest_lsrb.srbench.options import SrOptions

# The sympy checker's budget per attempt (it runs in a child process, core.bounded): at most
# `--lsrb-sr-judge-time-limit` seconds, and no more than what `--lsrb-sr-time-limit` leaves of the
# attempt (but at least MIN_JUDGE_S, so a run that used all its time still gets a quick verdict);
# and this much memory on top of the worker's own.
SYMBOLIC_TIME_S: Final = 60.0
SYMBOLIC_MEMORY_MB: Final = 2048
MIN_JUDGE_S: Final = 1.0
SYMBOLIC_BUDGET: Final = Budget(time_s=SYMBOLIC_TIME_S, memory_mb=SYMBOLIC_MEMORY_MB)


def judge_budget(options: SrOptions | Mapping[str, Any], started: float) -> Budget:
    """The symbolic check's budget for an attempt that started at `started` (perf_counter)."""
    sr = SrOptions.read(options)
    limit = sr.judge_time_limit_s
    if sr.time_limit_s is not None:
        left = sr.time_limit_s - (time.perf_counter() - started)
        limit = min(limit, max(MIN_JUDGE_S, left))
    return Budget(time_s=limit, memory_mb=SYMBOLIC_MEMORY_MB)


@dataclass(frozen=True)
class RunLimits:
    time_limit_s: float | None = None  # the whole discovery run; None: no cap
    fit: FitLimits = field(default_factory=FitLimits)  # each candidate's fit
    token_budget: int | None = None  # prompt + completion tokens of the run's calls; None: no cap

    def deadline(self, start: float | None = None) -> float | None:
        """The run's absolute `time.perf_counter()` deadline, if it has a cap."""
        if self.time_limit_s is None:
            return None
        return (time.perf_counter() if start is None else start) + self.time_limit_s


def out_of_tokens(token_budget: int | None, tally: CallTally) -> bool:
    """Whether a discovery run's calls so far have used its `--lsrb-sr-token-budget`."""
    return token_budget is not None and sum(tally.tokens.values()) >= token_budget


def run_limits(options: SrOptions | Mapping[str, Any]) -> RunLimits:
    sr = SrOptions.read(options)
    fit = FitLimits(policy=sr.fit, time_limit_s=sr.fit_time_limit_s)
    return RunLimits(time_limit_s=sr.time_limit_s, fit=fit, token_budget=sr.token_budget)


def check_limits(values: Mapping[str, Any]) -> None:
    """Refuse a non-positive cap before any model is called."""
    SrOptions.read(values)
