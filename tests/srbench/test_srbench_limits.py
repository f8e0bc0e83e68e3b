"""Run and per-candidate time caps: options, validation before any model call, both methods."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import sin_problem

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, SamplingConfig
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.limits import check_limits, run_limits
from pytest_lsrb.srbench.methods import get_method
from pytest_lsrb.srbench.mock.baseline import mock_equation_answer

REPO = Path(__file__).resolve().parents[2]


class SlowAdapter:
    name = "slow"
    model = "slow"
    default_concurrency = 1

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.calls += 1
        time.sleep(0.1)
        return GenerationResult(text=mock_equation_answer(request.context, request.seed), latency_ms=100.0)


def test_limits_come_from_the_run_options() -> None:
    limits = run_limits({"sr_time_limit": 12.5, "sr_fit_time_limit": 0.5})
    assert limits.time_limit_s == 12.5 and limits.fit.time_limit_s == 0.5
    assert run_limits({}).time_limit_s is None and run_limits({}).deadline() is None


@pytest.mark.parametrize("key", ["sr_time_limit", "sr_fit_time_limit"])
@pytest.mark.parametrize("value", [0, -3.0])
def test_non_positive_caps_are_a_usage_error(key: str, value: float) -> None:
    with pytest.raises(LsrbUsageError, match="--lsrb-" + key.replace("_", "-")):
        check_limits({key: value})


@pytest.mark.parametrize("name", ["direct", "llmsr"])
def test_both_methods_stop_at_the_run_time_limit(name: str) -> None:
    adapter = SlowAdapter()
    result = get_method(name).discover(
        sin_problem(), adapter, SamplingConfig(), seed=1, budget=200, options={"sr_time_limit": 0.5}
    )
    assert 1 <= adapter.calls <= 8 and result.model_calls == adapter.calls
    assert result.found  # the best equation so far is kept


def test_a_bad_cap_stops_the_run_before_any_model_call(run_suite: Any, tmp_path: Path) -> None:
    result = run_suite("--lsrb-sr-time-limit=0", suite=REPO / "suites" / "llm_srbench", out=tmp_path / "o")
    assert result.returncode == 4
    # engine/option_checks.py: every numeric option's bounds, checked with the other options.
    assert "--lsrb-sr-time-limit: expected a finite number of seconds > 0" in result.stderr + result.stdout
    assert not (tmp_path / "o" / "attempts.jsonl").exists()
