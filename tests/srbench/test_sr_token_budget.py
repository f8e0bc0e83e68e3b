"""`--lsrb-sr-token-budget` (issue #34): the per-attempt token cap of a discovery run. Every method
that makes many calls stops asking once the calls so far have used the cap (as the server reports
them in `usage`), keeps its best equation and says why it stopped, like the time cap."""

from __future__ import annotations

import pytest
from lsrb_testing import sin_problem

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, SamplingConfig
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.calls import AttemptCalls
from pytest_lsrb.engine.option_checks import check_values
from pytest_lsrb.srbench.limits import check_limits, run_limits
from pytest_lsrb.srbench.methods import get_method
from pytest_lsrb.srbench.mock.baseline import mock_equation_answer

PROMPT, COMPLETION = 100, 50  # tokens each answer reports


class Reporting:
    """An endpoint at the edge: the mock's equation answers, each with OpenAI-style `usage`."""

    name = model = "reporting"
    default_concurrency = 1

    def __init__(self, usage: bool = True) -> None:
        self.calls = 0
        self.usage = usage

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.calls += 1
        usage = {"prompt_tokens": PROMPT, "completion_tokens": COMPLETION} if self.usage else {}
        return GenerationResult(
            text=mock_equation_answer(request.context, request.seed), latency_ms=1.0, usage=usage
        )


@pytest.mark.parametrize("name", ["direct", "llmsr", "direct-expression", "sga"])
def test_a_search_stops_at_its_token_budget_and_keeps_its_best(name: str) -> None:
    adapter = Reporting()
    cap = 4 * (PROMPT + COMPLETION)  # four answers use it up exactly; the fifth is never asked
    calls = AttemptCalls(adapter)  # the harness's count of them (engine.calls)
    result = get_method(name).discover(
        sin_problem(), calls, SamplingConfig(), seed=1, budget=50, options={"sr_token_budget": cap}
    )
    assert adapter.calls == 4 and result.model_calls == 4
    counted = calls.record({}, "equation")
    assert (counted["prompt_tokens"], counted["completion_tokens"]) == (4 * PROMPT, 4 * COMPLETION)
    assert result.found
    if "stop_reason" in result.extra:
        assert result.extra["stop_reason"] == "token_limit"


def test_lasr_falls_back_to_its_symbolic_operators_once_the_tokens_are_spent() -> None:
    """LaSR asks the model after each iteration (its concept calls) and at random inside one
    (llm_weight); a small search of 8 iterations asks it at least 8 times without a cap, and with
    it only the first call is made while the symbolic search goes on to its last iteration."""
    from pytest_lsrb.srbench.methods.evolution import EvolutionConfig
    from pytest_lsrb.srbench.methods.lasr import LaSRConfig, LaSRRun

    small = EvolutionConfig(iterations=8, populations=2, population_size=12, cycles=30)
    free = Reporting()
    LaSRRun(sin_problem(), free, SamplingConfig(), 1, LaSRConfig(budget=50, evolution=small)).run()
    capped = Reporting()
    config = LaSRConfig(budget=50, token_budget=1, evolution=small)
    result = LaSRRun(sin_problem(), capped, SamplingConfig(), 1, config).run()
    assert free.calls >= 8
    assert capped.calls == 1 and result.model_calls == 1
    assert result.found  # the symbolic search went on to its own end
    assert result.extra.get("stop_reason") != "time_limit"


def test_without_reported_usage_nothing_is_counted() -> None:
    adapter = Reporting(usage=False)
    result = get_method("direct").discover(
        sin_problem(), adapter, SamplingConfig(), seed=1, budget=5, options={"sr_token_budget": 1}
    )
    assert adapter.calls == 5 and result.model_calls == 5


def test_the_cap_comes_from_the_run_options_and_is_checked() -> None:
    assert run_limits({"sr_token_budget": 600}).token_budget == 600
    assert run_limits({}).token_budget is None
    for bad in (0, -1):
        with pytest.raises(LsrbUsageError, match="--lsrb-sr-token-budget"):
            check_values({"sr_token_budget": bad})
        with pytest.raises(LsrbUsageError, match="--lsrb-sr-token-budget"):
            check_limits({"sr_token_budget": bad})
