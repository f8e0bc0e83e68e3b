"""SGA: the Adam inner loop against the textbook update, reading SGA's code block safely, the
multi-turn conversation, and whole runs on the mock adapter; plus the search-progress fields."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from lsrb_testing import mock_config

from pytest_lsrb.adapters.base import SamplingConfig
from pytest_lsrb.adapters.mock import MockAdapter
from pytest_lsrb.equations import EquationError, parse_expression
from pytest_lsrb.srbench.data.problem import Problem, output_first
from pytest_lsrb.srbench.fitting.adam import fit_adam
from pytest_lsrb.srbench.methods.sga import SGAConfig, SGARun, read_code
from pytest_lsrb.srbench.scoring.progress import progress_fields
from pytest_lsrb.srbench.task import SrbenchTask

MOCK = mock_config(SrbenchTask().mock_answer)  # the mock as an llm_srbench run builds it


def problem() -> Problem:
    rng = np.random.default_rng(0)
    x, v = rng.uniform(-1, 1, 200), rng.uniform(-1, 1, 200)
    y = -0.8 * x - 0.3 * v**3
    table = np.column_stack([y, x, v])
    return Problem(
        name="osc",
        symbols=["a", "x", "v"],
        symbol_descs=["acceleration", "position", "velocity"],
        symbol_properties=output_first(2),
        problem_set="llmsr",
        train=table,
        test=table[:50],
        ood_test=table[50:90],
    )


def test_adam_matches_the_textbook_update_with_clipping() -> None:
    x = np.linspace(-1, 1, 50)
    y = 2.0 * x + 0.5
    program = parse_expression("c0*x + c1", ["x"])
    fit = fit_adam(program, {"x": x}, y, [1.0, 1.0], epochs=3)
    # reference: torch.optim.Adam(lr=3e-2) after clip_grad_norm_(1.0), written out
    p, m, v = np.array([1.0, 1.0]), np.zeros(2), np.zeros(2)
    for t in range(1, 4):
        r = p[0] * x + p[1] - y
        g = np.array([2 * np.mean(r * x), 2 * np.mean(r)])
        norm = np.linalg.norm(g)
        g = g * (1.0 / (norm + 1e-6)) if norm > 1.0 else g
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p - 3e-2 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    r = p[0] * x + p[1] - y
    assert fit.epochs == 3 and len(fit.losses) == 1  # logged at epoch 0 only (every 10)
    long = fit_adam(program, {"x": x}, y, [1.0, 1.0], epochs=1000)
    assert len(long.losses) == 101 and long.loss == min(long.losses)
    assert long.loss < 1e-3 and abs(long.params[0] - 2.0) < 0.05
    short = fit_adam(program, {"x": x}, y, [1.0, 1.0], epochs=10)
    assert short.losses[-1] <= short.losses[0]
    assert math.isclose(float(np.mean(r * r)), _loss_after(program, x, y, p), rel_tol=1e-12)


def _loss_after(program: object, x: np.ndarray, y: np.ndarray, p: np.ndarray) -> float:
    yhat = program.evaluate({"x": x}, p)  # type: ignore[attr-defined]
    return float(np.mean((yhat - y) ** 2))


def test_read_code_takes_the_function_and_initial_params_and_runs_nothing() -> None:
    code = (
        "import numpy as np\nINITIAL_PARAMS = [-0.5, 2]\n\n"
        "def equation(x, v, params):\n    return params[0] * x + params[1] * v**3\n"
    )
    program, initial = read_code(code, problem())
    assert initial == [-0.5, 2.0] and program.n_params == 2


@pytest.mark.parametrize(
    "code",
    [
        "import os\ndef equation(x, v, params):\n    return x\n",
        "X = open('f')\ndef equation(x, v, params):\n    return x\n",
        "INITIAL_PARAMS = [__import__('os')]\ndef equation(x, v, params):\n    return x\n",
        "class M:\n    pass\n",
        "def equation(x, v, params):\n    return eval('x')\n",
    ],
)
def test_read_code_refuses_anything_else(code: str) -> None:
    with pytest.raises(EquationError):
        read_code(code, problem())


def test_conversation_follows_sgas_layout() -> None:
    run = SGARun(problem(), MockAdapter(MOCK), SamplingConfig(), 1, SGAConfig(budget=0))
    run._add(run.primitive())
    msgs = run.messages(run.shown())
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user", "user", "assistant"]
    assert msgs[2].content.startswith("## Iteration 1\n\n### Code")
    assert msgs[3].content.startswith("### Feedback\n\n#### Optimized Physical parameter")
    assert "(Key loss)" in msgs[3].content and msgs[4].content.startswith("## Format Requirements")
    assert msgs[-1].content == "## Iteration 2"


def test_mock_run_spends_the_budget_mixes_temperatures_and_improves() -> None:
    seen: list[float] = []
    adapter = MockAdapter(MOCK)
    generate = adapter.generate

    def spy(request):
        seen.append(request.sampling.temperature)
        return generate(request)

    adapter.generate = spy  # type: ignore[method-assign]
    config = SGAConfig(budget=32)
    result = SGARun(problem(), adapter, SamplingConfig(), 7, config).run()
    again = SGARun(problem(), MockAdapter(MOCK), SamplingConfig(), 7, config).run()
    assert result.model_calls == 32 and seen == ([0.5] * 4 + [1.0] * 12) * 2
    assert result.equation() == again.equation()
    assert result.trace[0].call == 0 and result.trace[-1].call > 0  # the model beat the primitive
    fields = progress_fields(problem(), result)
    points = fields["search_progress"] or []
    assert [p[0] for p in points] == sorted({t.call for t in result.trace})
    assert points[-1][1] == pytest.approx(result.train_nmse, rel=1e-9)
    assert all(p[2] is not None and p[3] is not None for p in points)
    assert fields["truth_complexity"] is None


_PIECES = st.sampled_from(
    [
        "### Analysis\n",
        "### Step-by-Step Plan\n",
        "### Code\n",
        "```python\n",
        "```",
        "def equation(x, v, params):\n",
        "    return ",
        "params[0]",
        "*x",
        "INITIAL_PARAMS = [",
        "]",
        "1e999",
        "import os\n",
        "\x00",
        "\ud800",
        "class A:\n",
        "(" * 120,
        "\n",
    ]
)


@given(st.lists(_PIECES | st.text(max_size=4), max_size=30).map("".join))
@example("### Analysis\nx\n### Step-by-Step Plan\ny\n### Code\n```python\nINITIAL_PARAMS = [1e999]\n```\n")
def test_any_answer_becomes_a_hypothesis_or_a_reported_error(answer: str) -> None:
    run = SGARun(problem(), MockAdapter(MOCK), SamplingConfig(), 0, SGAConfig(budget=0))
    hyp = run.offspring(answer)
    if hyp.program is None:
        assert not math.isfinite(hyp.fitness) and hyp.feedback and sum(run.candidate_errors.values()) == 1
    else:
        assert math.isfinite(hyp.fitness)


def test_time_limit_ends_the_run_with_the_best_so_far() -> None:
    run = SGARun(problem(), MockAdapter(MOCK), SamplingConfig(), 1, SGAConfig(budget=80, time_limit_s=1.0))
    result = run.run()
    assert result.extra["stop_reason"] == "time_limit" and result.model_calls < 80 and result.found
