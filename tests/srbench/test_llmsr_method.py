"""The llmsr discovery method: budget in model calls, prompts from the buffer, safe candidates,
early stop, caps, determinism and independence of parallel runs, and search quality on the real
LLM-SR data."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, SamplingConfig
from pytest_lsrb.srbench.data.loaders import load_csv_problem
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.methods.buffer import BufferConfig
from pytest_lsrb.srbench.methods.llmsr import LLMSRConfig, LLMSRRun
from pytest_lsrb.srbench.mock.baseline import mock_equation_answer, shown_bodies


class ScriptedAdapter:
    """A model endpoint at the edge of the test: answers with `answer(request, call_index)` and
    keeps every request it saw."""

    name = "scripted"
    model = "scripted"
    default_concurrency = 1

    def __init__(self, answer: Callable[[GenerationRequest, int], GenerationResult | str]) -> None:
        self.answer = answer
        self.requests: list[GenerationRequest] = []
        self._lock = threading.Lock()

    def generate(self, request: GenerationRequest) -> GenerationResult:
        with self._lock:
            self.requests.append(request)
            n = len(self.requests)
        out = self.answer(request, n)
        return out if isinstance(out, GenerationResult) else GenerationResult(text=out, latency_ms=1.0)

    def check(self) -> None: ...

    def identity(self) -> Mapping[str, Any]:
        return {"adapter": self.name}

    def close(self) -> None: ...


def mock(req: GenerationRequest) -> str:
    """What `--lsrb-adapter=mock` answers: the task's mock reads the context and the prompt text."""
    prompt = "\n\n".join(m.content for m in req.messages)
    return mock_equation_answer({**req.context, "prompt": prompt}, req.seed)


def baseline_adapter() -> ScriptedAdapter:
    """What `--lsrb-adapter=mock` answers for an equation request."""
    return ScriptedAdapter(lambda req, _n: mock(req))


def make_problem(n: int = 300, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)
    x, v = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    y = -0.8 * x - 0.3 * v * np.abs(v) + 0.2 * np.sin(3.0 * x)
    table = np.column_stack([y, x, v])
    return Problem(
        name="toy_osc",
        symbols=["a", "x", "v"],
        symbol_descs=["acceleration", "position", "velocity"],
        symbol_properties=["O", "V", "V"],
        desc="A toy damped oscillator.",
        problem_set="lsr_synth",
        domain="phys_osc",
        train=table[: n // 2],
        test=table[n // 2 :],
        ood_test=None,
    )


def run(problem: Problem, adapter: Any, seed: int = 0, **config: Any) -> Any:
    return LLMSRRun(
        problem,
        adapter,
        SamplingConfig(temperature=0.8),
        seed=seed,
        config=LLMSRConfig(**config),
        task_name="llm_srbench",
    ).run()


def test_the_budget_counts_model_calls() -> None:
    adapter = baseline_adapter()
    result = run(make_problem(), adapter, budget=10)
    assert len(adapter.requests) == result.model_calls == 10
    assert result.stop_reason == "budget"
    assert result.hypotheses == 11  # the starting skeleton and one per call
    # Four samples per prompt: calls 1-4 share a prompt, each with its own seed.
    assert len({r.messages for r in adapter.requests[:4]}) == 1
    assert len({r.seed for r in adapter.requests}) == 10
    assert all(r.task == "llm_srbench" and r.sampling.temperature == 0.8 for r in adapter.requests)


def test_prompts_show_the_best_earlier_skeletons_and_no_invented_context() -> None:
    adapter = baseline_adapter()
    run(make_problem(), adapter, budget=12)
    first = adapter.requests[0].messages[0].content
    assert "Complete the 'equation' function" in first
    assert "represents acceleration, given data on position, and velocity" in first
    assert "A toy damped oscillator." not in first  # the reference shows no description
    assert "def equation_v0(x: np.ndarray, v: np.ndarray, params: np.ndarray)" in first
    assert "output = params[0] * x + params[1] * v + params[2]" in first  # the starting skeleton
    later = adapter.requests[-1]
    shown = shown_bodies(later.messages[0].content)
    assert 1 <= len(shown) <= 2
    for i, body in enumerate(shown):
        assert body in later.messages[0].content
        assert f"def equation_v{i}(" in later.messages[0].content


def test_search_improves_on_the_starting_skeleton() -> None:
    problem = make_problem()
    result = run(problem, baseline_adapter(), budget=40)
    start = run(problem, baseline_adapter(), budget=0)
    assert start.best.call == 0 and start.model_calls == 0
    assert result.best.fit.nmse < 0.5 * start.best.fit.nmse
    assert result.best.call > 0
    fields = result.record_fields()
    assert fields["best_from_model"] is True
    assert result.model_calls == 40 and fields["search_trace_length"] == 41
    assert fields["train_nmse"] == pytest.approx(result.best.fit.nmse)
    assert len(fields["params"]) == result.best.program.n_params
    # The curve of best training NMSE only goes down.
    curve = [v for _, v in fields["best_nmse_by_call"]]
    assert curve == sorted(curve, reverse=True)


def test_same_seed_same_run_and_parallel_runs_do_not_interfere() -> None:
    problem = make_problem()

    def one(seed: int) -> dict[str, Any]:
        result = run(problem, baseline_adapter(), seed=seed, budget=12)
        return {**result.record_fields(), "calls": result.model_calls}

    sequential = [one(s) for s in (1, 2, 3)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        parallel = list(pool.map(one, (1, 2, 3)))
    drop = {"wall_time_s", "latency_ms"}
    for a, b in zip(sequential, parallel, strict=True):
        assert {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}
    assert sequential[0]["calls"] == 12  # each run spent its own budget
    assert len({s["equation"] for s in sequential}) > 1


def test_early_stop_on_an_exactly_zero_training_error_after_the_prompt_round() -> None:
    problem = make_problem()
    exact = problem.model_copy(
        update={
            "train": problem.train * np.array([[0.0, 1.0, 1.0]])
            + problem.train[:, [1]] * np.array([[2.0, 0.0, 0.0]])
        }
    )
    # y = 2x exactly: `x + x` scores exactly 0 (the reference's stop rule: best score == 0).
    adapter = ScriptedAdapter(
        lambda req, n: "def equation(x, v, params):\n    return x + x\n" if n == 3 else mock(req)
    )
    result = run(exact, adapter, budget=50)
    assert result.stop_reason == "early_stop" and result.best.fit.mse == 0.0
    assert result.model_calls == 4  # the prompt's four samples all run, as in the reference
    # A near-zero but non-zero error is not the reference's stop: the run goes on.
    near = problem.model_copy(update={"train": exact.train + np.array([[1e-9, 0.0, 0.0]])})
    adapter = ScriptedAdapter(
        lambda req, n: "def equation(x, v, params):\n    return x + x\n" if n == 3 else mock(req)
    )
    assert run(near, adapter, budget=12).stop_reason == "budget"


def test_unsafe_and_broken_answers_are_counted_never_run() -> None:
    answers = [
        "def equation(x, v, params):\n    return __import__('os').system('touch /tmp/pwned_lsrb')\n",
        "I am not sure.",
        "def equation(x, v, params):\n    return params[0]*np.log(x - 5)\n",  # nan on every row
        "def equation(x, v, params):\n    return params[0]*x + params[1]*v**3\n",
    ]
    adapter = ScriptedAdapter(lambda _req, n: answers[(n - 1) % len(answers)])
    result = run(make_problem(), adapter, budget=4)
    assert not Path("/tmp/pwned_lsrb").exists()
    assert dict(result.candidate_errors) == {"forbidden_construct": 1, "parse_error": 1, "nonfinite": 1}
    assert result.model_valid == 1 and result.model_calls == 4


def test_transient_errors_spend_budget_and_the_run_goes_on() -> None:
    def answer(req: GenerationRequest, n: int) -> GenerationResult | str:
        if n % 2:
            return GenerationResult.failure("timeout", "read timed out", 5.0)
        return mock(req)

    result = run(make_problem(), ScriptedAdapter(answer), budget=6)
    assert result.model_calls == 6 and result.generation_errors == {"timeout": 3}
    assert result.fatal is None and "generation_error_kind" not in result.record_fields()


def test_an_auth_failure_stops_the_run_and_is_reported() -> None:
    adapter = ScriptedAdapter(lambda _req, _n: GenerationResult.failure("auth", "401 bad key", 2.0))
    result = run(make_problem(), adapter, budget=20)
    assert result.stop_reason == "fatal_error" and result.model_calls == 1
    fields = result.record_fields()
    assert fields["generation_error_kind"] == "auth" and "401" in fields["generation_error_message"]


def test_every_call_failing_is_a_generation_error_not_a_result() -> None:
    adapter = ScriptedAdapter(lambda _req, _n: GenerationResult.failure("connection", "refused", 1.0))
    discovered = run(make_problem(), adapter, budget=3).discovery_result()
    assert discovered.generation_error_kind == "connection" and discovered.model_calls == 3


def test_the_method_is_registered_behind_the_protocol() -> None:
    from pytest_lsrb.srbench.methods import DiscoveryMethod, get_method

    method = get_method("llmsr")
    assert isinstance(method, DiscoveryMethod) and method.default_budget == 1000
    problem = make_problem()
    adapter = baseline_adapter()
    result = method.discover(
        problem, adapter, SamplingConfig(), seed=4, budget=8, options={"sr_time_limit": 60.0}
    )
    assert result.found and result.model_calls == 8 == len(adapter.requests)
    assert result.trace_length == 9 and result.extra["sr_method"] == "llmsr"
    fields = result.record_fields()
    assert fields["equation"] and fields["params"] and fields["train_nmse"] is not None
    again = method.discover(problem, baseline_adapter(), SamplingConfig(), seed=4, budget=8)
    assert again.equation() == result.equation() and again.params == result.params


def test_the_run_wall_clock_cap() -> None:
    def slow(req: GenerationRequest, _n: int) -> str:
        time.sleep(0.05)
        return mock(req)

    result = run(make_problem(), ScriptedAdapter(slow), budget=1000, time_limit_s=0.3)
    assert result.stop_reason == "time_limit"
    assert 1 <= result.model_calls < 20


def test_buffer_resets_happen_inside_a_run() -> None:
    result = run(
        make_problem(), baseline_adapter(), budget=24, buffer=BufferConfig(num_islands=4, reset_every=8)
    )
    assert result.buffer_resets >= 2


@pytest.mark.parametrize("name", ["oscillator1", "stressstrain"])
def test_llmsr_on_the_mock_beats_the_linear_skeleton_on_real_llmsr_data(shared_data: Path, name: str) -> None:
    folder = shared_data / "llmsr" / name
    if not folder.is_dir():
        pytest.skip(f"{folder} is missing")
    problem = load_csv_problem(folder)
    X, y = problem.columns("test")

    def test_nmse(result: Any) -> float:
        best = result.best
        pred = best.program.evaluate(X, np.asarray(best.fit.params))
        return float(np.mean((pred - y) ** 2) / np.var(y))

    linear = run(problem, baseline_adapter(), budget=0)
    searched = run(problem, baseline_adapter(), seed=0, budget=40)
    assert linear.best.program.to_expression() == f"c0*{problem.inputs[0]} + c1*{problem.inputs[1]} + c2"
    # Measured: oscillator1 0.0959 -> 0.0039, stressstrain 0.377 -> 0.199 (test NMSE).
    assert test_nmse(searched) < 0.6 * test_nmse(linear)
