"""The harness counts and enforces an attempt's calls (issue #49, item 2): the adapter a task or a
discovery method receives is the engine's `AttemptCalls` around the run's; it counts requests,
cache hits, time and tokens, refuses a call past the attempt's limit (or a method's
`--lsrb-sr-budget`) with a failed result the caller sees, and the record's plumbing fields are its
count, whatever the task or the method wrote. Before, a method that made 5 calls per problem under
`--lsrb-sr-budget 1` was recorded with `model_calls` 1, and a task copying the example's nine
fields by hand dropped the token usage."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsrb_testing import REPO, install_distribution

from pytest_lsrb import api
from pytest_lsrb.adapters.base import Adapter, GenerationRequest, GenerationResult, Message, SamplingConfig
from pytest_lsrb.core.errors import generation_domain
from pytest_lsrb.engine.calls import CALL_LIMIT, AttemptCalls
from pytest_lsrb.engine.outcomes import unanswered_kind

KINDS = ["timeout", "rate_limit", "empty_output", "client_error"]


class Scripted(Adapter):
    """The edge: answers from a list, one per call, in order; counts what reached it."""

    name = model = "scripted"

    def __init__(self, results: list[GenerationResult]) -> None:
        self.results = list(results)
        self.reached = 0
        self._lock = threading.Lock()

    def generate(self, request: GenerationRequest) -> GenerationResult:
        with self._lock:
            self.reached += 1
            return self.results.pop(0)

    def identity(self) -> dict[str, str]:
        return {"adapter": self.name}


def request(text: str = "q") -> GenerationRequest:
    return GenerationRequest((Message("user", text),), seed=0, sampling=SamplingConfig())


RESULT = st.builds(
    lambda ok, kind, cached, http, latency, p, c: (
        GenerationResult(
            "a",
            latency,
            http_attempts=http,
            cached=cached,
            usage={"prompt_tokens": p, "completion_tokens": c},
        )
        if ok
        else GenerationResult.failure(kind, f"{kind}!", latency, http)
    ),
    st.booleans(),
    st.sampled_from(KINDS),
    st.booleans(),
    st.integers(1, 4),
    st.floats(0.0, 1e4),
    st.integers(0, 100),
    st.integers(0, 100),
)


@given(st.lists(RESULT, max_size=12), st.integers(0, 14))
def test_the_record_is_the_harness_count_of_the_calls_the_limit_let_through(
    results: list[GenerationResult], limit: int
) -> None:
    inner = Scripted(results)
    calls = AttemptCalls(inner, limit)
    seen = [calls.generate(request(str(i))) for i in range(len(results))]
    through = results[:limit]
    assert inner.reached == len(through)  # a refused call is never sent
    refused = seen[len(through) :]
    assert all(r.error_kind == CALL_LIMIT and r.http_attempts == 0 for r in refused)
    assert generation_domain(CALL_LIMIT) == "harness"
    # what the task claimed is overwritten; its answer is kept
    rec = calls.record({"model_calls": 1, "latency_ms": 0.0, "proposal": "x"}, "none")
    assert rec["proposal"] == "x" and rec["verification_mode"] == "none"
    assert rec["model_calls"] == sum(r.http_attempts for r in through if not r.cached)
    assert rec["cached"] == (bool(through) and all(r.cached for r in through))
    assert rec["latency_ms"] == pytest.approx(sum(r.latency_ms for r in through), abs=1e-3)
    answered = [r for r in through if r.ok]
    tokens = sum(r.usage["prompt_tokens"] for r in answered) if answered else None
    assert rec["prompt_tokens"] == tokens
    assert rec.get("calls_refused") == (len(refused) or None)
    failed = Counter(str(r.error_kind) for r in through if not r.ok)
    assert rec["generation_error_kind"] == unanswered_kind(len(through), failed)


def test_a_part_of_the_attempt_is_held_to_its_own_limit_and_counted_in_the_attempts() -> None:
    inner = Scripted([GenerationResult("a", 1.0, usage={"prompt_tokens": 3})] * 4)
    calls = AttemptCalls(inner, 3)
    method = calls.within(1, "greedy with --lsrb-sr-budget 1")
    first, second = method.generate(request()), method.generate(request())
    assert first.ok and second.error_kind == CALL_LIMIT
    assert (
        second.error_message
        == "not sent: greedy with --lsrb-sr-budget 1 may make 1 model call(s) and has made them"
    )
    judge = calls.within(1, "the LLM judge")
    assert judge.generate(request()).ok
    rec = calls.record({}, "equation")
    assert (rec["model_calls"], rec["prompt_tokens"], rec["calls_refused"], inner.reached) == (2, 6, 1, 2)


def test_calls_from_several_threads_are_each_counted_once() -> None:
    n = 200
    inner = Scripted([GenerationResult("a", 1.0, http_attempts=2)] * n)
    calls = AttemptCalls(inner, n // 2)
    threads = [
        threading.Thread(target=lambda: [calls.generate(request()) for _ in range(20)]) for _ in range(10)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rec = calls.record({}, "none")
    assert inner.reached == n // 2 and rec["model_calls"] == n and rec["calls_refused"] == n // 2


# -- end to end: a discovery method and a task from other packages ---------------------------------

GREEDY = '''
import numpy as np

from pytest_lsrb import DiscoveryMethod, DiscoveryResult, GenerationRequest, Message, parse_equation


class GreedyMethod(DiscoveryMethod):
    """Makes 5 model calls per problem whatever its budget, and says it made 1."""

    name = "greedy"

    def discover(self, problem, adapter, sampling, seed, budget, *, options=None):
        _, y = problem.columns("train")
        kinds = []
        for i in range(5):
            request = GenerationRequest(
                messages=(Message("user", f"Propose y ({i})."),), seed=seed + i, sampling=sampling,
                context=problem.context(),
            )
            kinds.append(adapter.generate(request).error_kind)
        mean = float(np.mean(y))
        mse = float(np.mean((y - mean) ** 2))
        return DiscoveryResult(
            program=parse_equation("c0", problem.inputs, free_params=True), params=(mean,),
            proposal="c0", train_mse=mse, train_nmse=mse / float(np.var(y)), model_calls=1,
            extra={"seen_errors": [k for k in kinds if k]},
        )
'''

PLAIN_TASK = '''
from pydantic import BaseModel

from pytest_lsrb import Adapter, GenerationRequest, GenerationResult, Message, Task, stream_jsonl


class Reporting(Adapter):
    """An endpoint that reports its usage, as a served model does."""

    name = "reporting"

    def __init__(self, config):
        self.model = config.model or "reporting-1"

    def generate(self, request):
        return GenerationResult(
            text="yes", latency_ms=2.5, usage={"prompt_tokens": 7, "completion_tokens": 1},
            finish_reason="stop", served_model="reporting-1-q4",
        )

    def identity(self):
        return {"adapter": self.name, "model": self.model}


class Row(BaseModel):
    item_id: str
    word: str

    def content_hash(self):
        return self.word


class PlainTask(Task):
    """Returns its answer and verdict only: no plumbing field."""

    name = "plain"

    def load_rows(self, suite, index_path):
        return stream_jsonl(index_path, Row)

    def run_attempt(self, ctx):
        row = ctx.case.row
        result = ctx.adapter.generate(GenerationRequest((Message("user", row.word),), 0, ctx.sampling))
        return {"proposal": result.text, "valid": result.ok, "nonempty": bool(result.text)}

    def mock_answer(self, context, seed):
        return "yes"
'''

ENTRY_POINTS = """
[pytest_lsrb.methods]
greedy = callplug:GreedyMethod

[pytest_lsrb.tasks]
plain = callplug_task:PlainTask

[pytest_lsrb.adapters]
reporting = callplug_task:Reporting
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    modules = {"callplug": GREEDY, "callplug_task": PLAIN_TASK}
    return install_distribution(tmp_path / "site", "callplug", ENTRY_POINTS, modules, monkeypatch)


def test_a_method_past_its_budget_is_refused_and_recorded_as_counted(installed: Path, tmp_path: Path) -> None:
    result = api.run(
        REPO / "suites" / "llm_srbench", sr_method="greedy", sr_budget=1, sr_judge="none", max_items=2,
        output_dir=tmp_path / "o", pytest_args=["-q"],
    )  # fmt: skip
    assert len(result.records) == 2 and result.summary is not None
    for record in result.records:
        assert (record["model_calls"], record["calls_refused"]) == (1, 4)
        assert record["seen_errors"] == [CALL_LIMIT] * 4  # the method saw each refusal
        assert record["generation_error_kind"] is None  # it answered: judged on its result
    assert result.summary["model_calls"] == 2


def test_a_task_that_writes_no_plumbing_gets_the_harness_fields(installed: Path, tmp_path: Path) -> None:
    suite = tmp_path / "plain"
    suite.mkdir()
    (suite / "index.jsonl").write_text('{"item_id": "a", "word": "hi"}\n{"item_id": "b", "word": "yo"}\n')
    (suite / "prompt.md").write_text("{{word}}\n")
    toml = '[suite]\nname = "plain"\ntask = "plain"\nindex = "index.jsonl"\nprompt = "prompt.md"\n'
    (suite / "suite.toml").write_text(toml)
    (suite / "test_plain.py").write_text(
        "def test_plain(lsrb_attempt):\n    lsrb_attempt.check()\n", encoding="utf-8"
    )
    result = api.run(suite, adapter="reporting", output_dir=tmp_path / "o", pytest_args=["-q"])
    assert result.exit_code == 0 and len(result.records) == 2
    for record in result.records:
        assert (record["prompt_tokens"], record["completion_tokens"]) == (7, 1)
        assert (record["finish_reason"], record["served_model"]) == ("stop", "reporting-1-q4")
        assert (record["model_calls"], record["cached"], record["latency_ms"]) == (1, False, 2.5)
        assert record["raw_output"] == "yes" and len(str(record["prompt_hash"])) == 64
        assert record["verification_mode"] == "none" and record["generation_error_kind"] is None
    assert result.summary is not None and result.summary["prompt_tokens"] == 14
