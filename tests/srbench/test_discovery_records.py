"""What a discovery attempt's record tells the report: the prompt and a bounded log of the model's
answers, prediction samples for the predicted-vs-true plots, and a result that is LLM-SR's
starting skeleton counted as no valid answer of the model's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_llmsr_method import ScriptedAdapter, baseline_adapter, make_problem, run

from pytest_lsrb.adapters.base import GenerationResult, Message, SamplingConfig
from pytest_lsrb.srbench.methods.base import ANSWER_LOG_CALLS, ANSWER_LOG_TEXT, AnswerLog
from pytest_lsrb.srbench.methods.expression import DirectExpressionMethod as DirectMethod
from pytest_lsrb.srbench.scoring.evaluation import PREDICTION_SAMPLE_POINTS, prediction_sample, score
from pytest_lsrb.srbench.task import SrbenchTask


def test_the_answer_log_keeps_the_first_answers_and_the_best_one() -> None:
    log = AnswerLog()
    prompt = (Message("user", "q"),)
    for call in range(1, 30):
        log.add(call, "parse_error", "x" * 5000, prompt, keep=call in (20, 25))
    fields = log.record_fields(best_call=25)
    answers = fields["model_answers"] or []
    calls = [e["call"] for e in answers]
    assert calls == [*range(1, ANSWER_LOG_CALLS + 1), 25]  # 20 was the best once, then 25
    assert all(len(e["answer"]) == ANSWER_LOG_TEXT for e in answers)
    assert fields["prompt"] == [{"role": "user", "content": "q"}]
    assert AnswerLog().record_fields(None) == {"model_answers": []}


def test_an_llmsr_record_carries_its_prompt_and_what_the_model_wrote() -> None:
    fields = run(make_problem(), baseline_adapter(), budget=12).record_fields()
    assert fields["prompt"][0]["role"] == "user" and "def equation" in fields["prompt"][0]["content"]
    answers = fields["model_answers"]
    assert 0 < len(answers) <= ANSWER_LOG_CALLS + 1 and all(e["answer"] for e in answers)
    assert fields["result_is_starting_skeleton"] is False


def test_a_search_that_keeps_the_starting_skeleton_is_scored_and_flagged_as_the_fallback() -> None:
    problem = make_problem()
    result = run(problem, ScriptedAdapter(lambda req, n: "I cannot help with that."), budget=4)
    fields = result.record_fields()
    assert fields["result_is_starting_skeleton"] is True and fields["equation"]  # a fitted linear skeleton
    assert [e["status"] for e in fields["model_answers"]] == ["parse_error"] * 4 or all(
        e["status"] != "valid" for e in fields["model_answers"]
    )
    scored = score(problem, result.discovery_result(), judge="none")
    assert scored["valid"] is False  # valid_rate counts the model's own valid candidates
    assert fields["model_valid_candidates"] == 0 and fields["fallback_result"] is True
    # The fitted linear skeleton is what is scored (the reference's rule): a finite NMSE, a verdict.
    assert scored["nmse_id"] is not None and scored["verification_outcome"] in ("accurate", "inaccurate")
    judgement = SrbenchTask().judge({**fields, **scored})
    if scored["verification_outcome"] == "inaccurate":
        assert judgement.outcome == "fail" and "the method's fallback" in judgement.message


def test_direct_records_its_prompt_and_answers() -> None:
    adapter = baseline_adapter()
    result = DirectMethod().discover(make_problem(), adapter, SamplingConfig(), seed=3, budget=3)
    assert [e["call"] for e in result.extra["model_answers"] or []] == [1, 2, 3]
    assert result.extra["prompt"] == [
        {"role": m.role, "content": m.content} for m in adapter.requests[0].messages
    ]


def test_failed_calls_are_logged_with_their_kind() -> None:
    failing = ScriptedAdapter(lambda req, n: GenerationResult.failure("timeout", "no answer within 1s", 1.0))
    result = DirectMethod().discover(make_problem(), failing, SamplingConfig(), seed=0, budget=2)
    assert [e["status"] for e in result.extra["model_answers"] or []] == ["error:timeout", "error:timeout"]


def test_prediction_samples_are_true_and_predicted_values_of_the_test_rows() -> None:
    problem = make_problem(n=400)
    result = run(problem, baseline_adapter(), budget=8).discovery_result()
    points = prediction_sample(problem, result, "test")
    assert points is not None and len(points) == PREDICTION_SAMPLE_POINTS
    X, y = problem.columns("test")
    yhat = result.program.evaluate(X, np.asarray(result.params) if result.program.n_params else None)
    rows = list(zip(y.tolist(), np.asarray(yhat).tolist(), strict=True))
    for true, predicted in points:  # each point is a row's (true, predicted), to 6 significant digits
        assert any(
            t == pytest.approx(true, rel=1e-5, abs=1e-9) and p == pytest.approx(predicted, rel=1e-5, abs=1e-9)
            for t, p in rows
        )
    assert prediction_sample(problem, result, "ood_test") is None  # this problem has no OOD split
    fields = score(problem, result, judge="none")
    assert fields["pred_sample_id"] == points and fields["pred_sample_ood"] is None


@pytest.mark.parametrize("method", ["llmsr", "lasr", "sga"])
def test_every_call_failing_is_the_commonest_failure_of_every_search(method: str) -> None:
    """One rule (`DiscoveryResult.note_generation_failure`) for each search: when no model call
    answered, the attempt's generation error is the commonest kind of failure (a tie: the first)."""
    from pytest_lsrb.srbench.methods import get_method

    def answer(_req: Any, n: int) -> GenerationResult:
        kind = "timeout" if n % 3 == 0 else "server_error"
        return GenerationResult.failure(kind, f"failure {n}", 1.0)

    if method == "lasr":  # at the reference's settings LaSR searches for minutes: a small search
        from pytest_lsrb.srbench.methods.evolution import EvolutionConfig
        from pytest_lsrb.srbench.methods.lasr import LaSRConfig, LaSRRun

        # one concept call per iteration (every call fails, so no prompt_evol follows): 8 iterations
        # spend the budget of 6, as a whole search would, in well under a second
        small = EvolutionConfig(iterations=8, populations=2, population_size=12, cycles=30)
        config = LaSRConfig(budget=6, evolution=small)
        result = LaSRRun(make_problem(), ScriptedAdapter(answer), SamplingConfig(), 1, config).run()
        assert result.model_calls == 6
    else:
        result = get_method(method).discover(make_problem(), ScriptedAdapter(answer), SamplingConfig(), 1, 6)
    assert result.generation_error_kind == "server_error"
    calls = result.model_calls
    assert result.generation_error_message == (
        f"the model never answered: every one of {calls} model call(s) failed (server_error)"
    )


def test_the_generation_failure_rule() -> None:
    from pytest_lsrb.srbench.methods.base import DiscoveryResult

    fatal = DiscoveryResult(program=None)
    fatal.note_generation_failure(("quota", "over quota"), 1, {"quota": 1})
    assert (fatal.generation_error_kind, fatal.generation_error_message) == ("quota", "over quota")
    tie = DiscoveryResult(program=None)
    tie.note_generation_failure(None, 4, {"timeout": 2, "connection": 2})
    assert tie.generation_error_kind == "timeout"  # the first seen of the commonest
    answered = DiscoveryResult(program=None)
    answered.note_generation_failure(None, 4, {"timeout": 3})  # one call answered
    assert answered.generation_error_kind is None and answered.generation_error_message is None


@pytest.mark.parametrize(("fallback", "expected"), [(True, True), (False, False), (None, None)])
def test_the_fallback_flag_is_null_when_the_method_cannot_tell(fallback: bool | None, expected: Any) -> None:
    # LaSR's PySR backend calls the model from Julia: which answers entered the search is unknown
    from pytest_lsrb.equations import parse_equation
    from pytest_lsrb.srbench.methods.base import DiscoveryResult

    program = parse_equation("c0*x", ["x", "v"])
    found = DiscoveryResult(program=program, params=(1.0,), proposal="x", train_mse=0.1, fallback=fallback)
    assert found.record_fields()["fallback_result"] is expected
    missing = DiscoveryResult(program=None, proposal="", fallback=fallback)
    assert missing.record_fields()["fallback_result"] is (None if fallback is None else False)
