"""The mock adapter answers with what its builder gives it (issue #28: the adapter layer knows no
task); a run gives it its task's baseline."""

from __future__ import annotations

import pytest

from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest, Message, SamplingConfig
from pytest_lsrb.adapters.mock import MockAdapter
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.task import mock_answers
from pytest_lsrb.tactic.baseline import mock_tactic_answer
from pytest_lsrb.tactic.task import TacticTask


def test_it_answers_with_its_handler_and_refuses_without_one() -> None:
    seen: list[GenerationRequest] = []

    def handler(request: GenerationRequest) -> str:
        seen.append(request)
        return f"answer {request.seed}"

    request = GenerationRequest(messages=(Message("user", "hi"),), seed=7, sampling=SamplingConfig())
    result = MockAdapter(AdapterConfig(answers=handler)).generate(request)
    assert (result.text, result.ok, seen) == ("answer 7", True, [request])
    bare = MockAdapter(AdapterConfig())
    with pytest.raises(LsrbUsageError, match="given no answers"):
        bare.check()


def test_a_task_s_answers_see_its_context_and_the_prompt_text() -> None:
    goal = "x : Nat\n⊢ x + 0 = x"
    request = GenerationRequest(
        messages=(Message("system", "be brief"), Message("user", "prove it")),
        seed=3,
        sampling=SamplingConfig(),
        task="goal_to_tactic_proposal_v1",
        context={"goal_text": goal},
    )
    got: dict[str, object] = {}

    def mock_answer(context: object, seed: int) -> str:
        got.update(context=context, seed=seed)
        return "rfl"

    assert mock_answers(mock_answer)(request) == "rfl"
    assert got == {"context": {"goal_text": goal, "prompt": "be brief\n\nprove it"}, "seed": 3}
    adapter = MockAdapter(AdapterConfig(answers=mock_answers(TacticTask().mock_answer)))
    assert adapter.generate(request).text == mock_tactic_answer(goal, 3)
