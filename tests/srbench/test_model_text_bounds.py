"""What a discovery run keeps of the model's words, and sends back to it, is bounded
(`core.excerpts`): a 2 MB LaSR concept, a 3 MB SGA answer, a 1 MB judge answer become excerpts
in the method's memory, in every later prompt and in the record, which keeps the whole length.

The model is the mock adapter with a few answers made huge: the edge is the model, the code
under test (the methods and the judge) runs as in a run."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
from lsrb_testing import mock_config

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, SamplingConfig
from pytest_lsrb.adapters.mock import MockAdapter
from pytest_lsrb.core.excerpts import CONCEPT_TEXT, PROMPT_TEXT, RECORD_TEXT, cut_length, excerpt
from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.data.problem import Problem, output_first
from pytest_lsrb.srbench.methods.evolution import EvolutionConfig
from pytest_lsrb.srbench.methods.lasr import LaSRConfig, LaSRRun
from pytest_lsrb.srbench.methods.sga import SGAConfig, SGARun
from pytest_lsrb.srbench.scoring.judge import llm_judge
from pytest_lsrb.srbench.task import SrbenchTask

MARKER = 60  # the marker's length at most: "…[cut here: N characters in all]"


def problem() -> Problem:
    rng = np.random.default_rng(0)
    x, v = rng.uniform(-1, 1, 120), rng.uniform(-1, 1, 120)
    table = np.column_stack([-0.8 * x - 0.3 * v**3, x, v])
    return Problem(
        name="osc",
        symbols=["a", "x", "v"],
        symbol_descs=["acceleration", "position", "velocity"],
        symbol_properties=output_first(2),
        expression="-0.8*x - 0.3*v**3",
        problem_set="llmsr",
        train=table,
        test=table[:40],
        ood_test=table[40:80],
    )


class Swelling:
    """The mock model, but `swell(request, text)` may make an answer huge; it notes the
    longest message of every prompt it is sent."""

    def __init__(self, swell: Any) -> None:
        self.inner = MockAdapter(mock_config(SrbenchTask().mock_answer))  # as an llm_srbench run builds it
        self.swell = swell
        self.longest_message: list[int] = []

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.longest_message.append(max(len(m.content) for m in request.messages))
        result = self.inner.generate(request)
        return dataclasses.replace(result, text=self.swell(request, result.text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_excerpt_keeps_short_text_and_says_how_long_long_text_was() -> None:
    assert excerpt("abc", 3) == "abc"
    cut = excerpt("x" * 100, 10)
    assert cut.startswith("x" * 10) and cut.endswith("[cut here: 100 characters in all]")
    assert len(cut) <= 10 + MARKER
    long = "y" * (RECORD_TEXT + 1)
    assert cut_length(long) == RECORD_TEXT + 1 and len(excerpt(long, RECORD_TEXT)) <= RECORD_TEXT + MARKER
    assert cut_length("short") is None and cut_length("z" * RECORD_TEXT) is None


def test_a_huge_lasr_concept_is_kept_and_resent_as_an_excerpt() -> None:
    huge = "C" * 2_000_000

    def swell(request: GenerationRequest, text: str) -> str:
        if request.context.get("lasr_op") == "concepts":
            return json.dumps([huge])
        return text

    model = Swelling(swell)
    config = LaSRConfig(llm_weight=0.05, evolution=EvolutionConfig(iterations=3, populations=2, cycles=8))
    result = LaSRRun(problem(), model, SamplingConfig(), 3, config).run()
    concepts = result.extra["concepts"]
    assert concepts and all(len(c) <= CONCEPT_TEXT + MARKER for c in concepts)
    assert any("2000000 characters in all" in c for c in concepts)
    assert max(model.longest_message) < 20 * CONCEPT_TEXT  # the prompts built from them stay small
    record = result.record_fields()
    assert len(json.dumps(record)) < 4 * RECORD_TEXT


def test_a_huge_sga_answer_is_kept_and_replayed_as_an_excerpt() -> None:
    pad = "z" * 3_000_000

    def swell(request: GenerationRequest, text: str) -> str:
        return text.replace("### Plan", "### Plan\n" + pad, 1) if "### Plan" in text else text + pad

    model = Swelling(swell)
    result = SGARun(problem(), model, SamplingConfig(), 7, SGAConfig(budget=4)).run()
    assert len(model.longest_message) == 4
    assert max(model.longest_message[1:]) <= PROMPT_TEXT + MARKER + 100  # each replayed turn cut
    record = result.record_fields()
    assert len(record["raw_output"]) <= PROMPT_TEXT + MARKER  # the best hypothesis, as kept
    assert len(json.dumps(record)) < 10 * RECORD_TEXT


def test_a_huge_judge_answer_is_recorded_as_an_excerpt_with_its_length() -> None:
    answer = "Let me think. " * 80_000 + "Yes"

    model = Swelling(lambda request, text: answer)
    verdict, fields = llm_judge(problem(), parse_expression("c0*x + c1*v**3", ["x", "v"]), model)
    assert verdict.match is True  # read from the whole answer
    assert fields["judge_raw_output_chars"] == len(answer)
    assert len(fields["judge_raw_output"]) <= RECORD_TEXT + MARKER
