"""The `--lsrb-sr-*` run options, typed: read and checked once, then passed around as one object.

A missing or empty value takes the option's default (`srbench.option_table`, the one place they
are written; a method's option is absent from a run of another method, and reads as its default);
`sr_budget` None means the discovery method's own budget. A bad value is
one sentence naming the option, before any model call (`SrbenchTask.check_options`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Literal, cast

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.fitting.objective import FitPolicy
from pytest_lsrb.srbench.option_table import ALL, choices_of

# The choice lists are the family's option table's (`srbench.option_table`), spelled once there.
JUDGES: Final = choices_of("sr_judge")
# Which points a metric counts (`--lsrb-sr-metrics`; `scoring.metrics` implements each).
MetricsPolicy = Literal["reference", "strict"]
METRICS_POLICIES: Final = cast("tuple[MetricsPolicy, ...]", choices_of("sr_metrics"))


@cache
def _defaults() -> dict[str, Any]:
    return {k: v for option_set in ALL for k, v in option_set.defaults().items()}


def _seconds(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        flag = "--lsrb-" + name.replace("_", "-")
        raise LsrbUsageError(f"{flag} must be a positive number of seconds (got {value}).")
    return float(value)


def _choice(name: str, value: str) -> str:
    """`value` when it is one of the option's choices (the option table's one spelling)."""
    choices = choices_of(name)
    if value not in choices:
        flag = "--lsrb-" + name.replace("_", "-")
        raise LsrbUsageError(f"{flag}: expected one of {', '.join(choices)} (got {value!r}).")
    return value


@dataclass(frozen=True)
class SrOptions:
    method: str
    budget: int | None  # None: the method's default budget
    time_limit_s: float | None  # the whole discovery run; None: no cap
    judge_time_limit_s: float  # the sympy check of one answer
    fit_time_limit_s: float  # fitting one candidate
    fit: FitPolicy
    reset_every: int  # llmsr: reset islands every N skeletons; 0: the reference's schedule
    lasr_backend: str  # lasr: python (our engine) or pysr (LaSR's PySR fork)
    lasr_rows: str  # lasr: first (the reference's first 2000 rows) or seeded
    metrics: MetricsPolicy
    per_problem: str
    judge: str
    judge_model: str | None
    judge_base_url: str | None
    judge_adapter: str | None
    judge_api_key_env: str | None
    success: str
    partial_release: bool = False
    sa_scale: str = "free"  # the sympy checker's additive-constant reading (srbench.scoring.symbolic)
    token_budget: int | None = None  # prompt + completion tokens per discovery run; None: no cap

    @classmethod
    def read(cls, values: SrOptions | Mapping[str, Any]) -> SrOptions:
        """The options in `values` (a run config's values or a method's options), checked."""
        if isinstance(values, SrOptions):
            return values
        default = _defaults()

        def get(name: str) -> Any:
            value = values.get(name)
            return default[name] if value is None or value == "" else value

        def text(name: str) -> str | None:
            value = get(name)
            return None if value is None else str(value)

        budget = get("sr_budget")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise LsrbUsageError(f"--lsrb-sr-budget must be at least 1 (got {budget}).")
        judge = str(get("sr_judge"))
        if judge not in JUDGES:
            raise LsrbUsageError(
                f"--lsrb-sr-judge: '{judge}' is not available (available: {', '.join(JUDGES)})."
            )
        reset_every = get("sr_reset_every")
        tokens = get("sr_token_budget")
        if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1):
            raise LsrbUsageError(f"--lsrb-sr-token-budget must be at least 1 (got {tokens}).")
        judge_time = _seconds("sr_judge_time_limit", get("sr_judge_time_limit"))
        fit_time = _seconds("sr_fit_time_limit", get("sr_fit_time_limit"))
        return cls(
            method=str(get("sr_method")),
            budget=budget,
            time_limit_s=_seconds("sr_time_limit", get("sr_time_limit")),
            judge_time_limit_s=default["sr_judge_time_limit"] if judge_time is None else judge_time,
            fit_time_limit_s=default["sr_fit_time_limit"] if fit_time is None else fit_time,
            fit=cast(FitPolicy, _choice("sr_fit", str(get("sr_fit")))),
            reset_every=max(0, int(reset_every or 0)),
            lasr_backend=_choice("sr_lasr_backend", str(get("sr_lasr_backend"))),
            lasr_rows=_choice("sr_lasr_rows", str(get("sr_lasr_rows"))),
            metrics=cast(MetricsPolicy, _choice("sr_metrics", str(get("sr_metrics")))),
            per_problem=str(get("sr_per_problem")),
            judge=judge,
            judge_model=text("sr_judge_model"),
            judge_base_url=text("sr_judge_base_url"),
            judge_adapter=text("sr_judge_adapter"),
            judge_api_key_env=text("sr_judge_api_key_env"),
            success=_choice("sr_success", str(get("sr_success"))),
            partial_release=bool(get("sr_partial_release")),
            sa_scale=_choice("sr_sa_scale", str(get("sr_sa_scale"))),
            token_budget=tokens,
        )

    @property
    def llm_judge(self) -> bool:
        """The LLM judge runs (one more model call per attempt)."""
        return self.judge in ("llm", "both")
