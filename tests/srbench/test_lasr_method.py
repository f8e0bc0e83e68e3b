"""LaSR: the tree language, LaSR's prompt filling and answer reading, the PySR-style engine, and
whole runs on the mock adapter (reproducible, budget-bounded, model operators used)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lsrb_testing import mock_config

from pytest_lsrb.adapters.base import SamplingConfig
from pytest_lsrb.adapters.mock import MockAdapter
from pytest_lsrb.equations import EquationError
from pytest_lsrb.equations.ir import Num, Op, Var
from pytest_lsrb.srbench.data.problem import Problem, output_first
from pytest_lsrb.srbench.methods.base import DiscoveryResult
from pytest_lsrb.srbench.methods.evolution import Evolution, EvolutionConfig, Member, select_best
from pytest_lsrb.srbench.methods.expression_tree import admissible, read_expression, render, size
from pytest_lsrb.srbench.methods.lasr import PROMPTS, LaSRConfig, LaSRRun, fill_list, read_list
from pytest_lsrb.srbench.task import SrbenchTask

MOCK = mock_config(SrbenchTask().mock_answer)  # the mock as an llm_srbench run builds it


def problem(n: int = 120) -> Problem:
    rng = np.random.default_rng(0)
    x, v = rng.uniform(0.5, 2.0, n), rng.uniform(-1.0, 1.0, n)
    y = 1.5 * x * x + np.sin(v)
    table = np.column_stack([y, x, v])
    return Problem(
        name="toy",
        symbols=["y", "x", "v"],
        symbol_descs=["output", "position", "velocity"],
        symbol_properties=output_first(2),
        expression="1.5*x**2 + sin(v)",
        problem_set="lsr_transform",
        train=table,
        test=table[:40],
    )


# -- LaSR's prompt helpers, checked against LaSR's `construct_prompt` / `parse_msg_content` -------


def test_fill_list_adds_lines_for_extra_items_and_drops_unused_ones() -> None:
    text = fill_list(PROMPTS["mutate_user"], ["ctx", "a", "b", "c"], "assump")
    assert text.splitlines()[:5] == [
        "Suggestion 1: ctx",
        "Suggestion 2: a",
        "Suggestion 3: b",
        "Suggestion 4: c",
        "Reference Expression: {{expr}}",
    ]
    short = fill_list(PROMPTS["mutate_user"], ["ctx", "None", "None"], "assump")
    assert short.splitlines()[:2] == ["Suggestion 1: ctx", "Reference Expression: {{expr}}"]


def test_fill_list_keeps_braces_and_backslashes_in_items_verbatim() -> None:
    text = fill_list("Idea 1: {{idea1}}", ["a \\1 {{x}} b"], "idea")
    assert text == "Idea 1: a \\1 {{x}} b"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('notes\n```json\n["C*x", "sin(v)"]\n```', ["C*x", "sin(v)"]),
        ('```\n["x + C"]\n```', ["x + C"]),
        ('I propose ["x", "v"] as the answer', ["x", "v"]),
        ('```json\n{"a": "x"}\n```', ["x"]),
        ("no list at all", []),
        ('```json\n["x", 3]\n```', []),
    ],
)
def test_read_list(answer: str, expected: list[str]) -> None:
    assert read_list(answer) == expected


# -- the tree language ----------------------------------------------------------------------------


def test_read_expression_makes_each_C_a_constant_and_keeps_variables() -> None:
    tree = read_expression("y = C*x^2 + sin(C*v)", ["x", "v"])
    assert render(tree) == "((1 * (x ^ 2)) + sin((1 * v)))"  # LaSR too reads C as 1, then optimises it
    values = [n.value for n in _nums(tree)]
    assert values == [1.0, 2.0, 1.0]
    # a variable called c is a variable, not a constant
    tree = read_expression("C*c", ["c"])
    assert any(isinstance(n, Var) and n.name == "c" for n in _all(tree))


@pytest.mark.parametrize("text", ["tanh(x)", "abs(x)", "import os", "x.__class__", "params[0]*x"])
def test_read_expression_refuses_what_the_search_cannot_write(text: str) -> None:
    with pytest.raises(EquationError):
        read_expression(text, ["x"])


def test_constraints_follow_llm_srbench_lasr_config() -> None:
    x = Var("x")
    assert admissible(Op("sin", (x,)), 30)
    assert not admissible(Op("sin", (Op("cos", (x,)),)), 30)  # no trig inside trig
    assert not admissible(Op("exp", (Op("log", (x,)),)), 30)
    assert not admissible(Op("sqrt", (Op("sqrt", (x,)),)), 30)
    assert admissible(Op("exp", (Op("sin", (x,)),)), 30)
    deep: Op | Var = x
    for _ in range(15):
        deep = Op("add", (deep, x))
    assert size(deep) == 31 and not admissible(deep, 30)
    eleven: Op | Var = x
    for _ in range(5):
        eleven = Op("add", (eleven, x))
    assert size(eleven) == 11 and not admissible(Op("sin", (eleven,)), 30)  # sin's argument <= 10


def test_select_best_is_pysrs_score_rule() -> None:
    front = [Member(Var("x"), 1.0, 0, 1), Member(Var("x"), 0.1, 0, 3), Member(Var("x"), 0.09, 0, 9)]
    # scores: 0, -ln(0.1)/2 = 1.15, -ln(0.9)/6 = 0.018: the size-3 member wins
    assert select_best(front) is front[1]
    # a member beyond 1.5x the lowest loss is never chosen, whatever its score
    front = [Member(Var("x"), 1.0, 0, 1), Member(Var("x"), 0.5, 0, 2), Member(Var("x"), 0.01, 0, 30)]
    assert select_best(front) is front[2]


def test_evolution_finds_a_planted_law_and_is_reproducible() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2.0, 100)
    y = 3.0 * x * x
    config = EvolutionConfig(iterations=4, populations=3, cycles=15)
    a = Evolution({"x": x}, y, ("x",), random.Random(5), config).run()
    b = Evolution({"x": x}, y, ("x",), random.Random(5), config).run()
    assert render(a.best.tree, constant=True) == render(b.best.tree, constant=True)
    assert a.lowest.loss / float(np.var(y)) < 1e-3


# -- whole runs on the mock adapter ---------------------------------------------------------------


def run(seed: int, **kw: object) -> DiscoveryResult:
    evolution = EvolutionConfig(iterations=3, populations=2, cycles=8)
    config = LaSRConfig(evolution=evolution, **kw)
    return LaSRRun(problem(), MockAdapter(MOCK), SamplingConfig(), seed, config).run()


def test_mock_run_is_reproducible_and_uses_the_model() -> None:
    a, b = run(3, llm_weight=0.05), run(3, llm_weight=0.05)
    assert a.equation() == b.equation() and a.model_calls == b.model_calls
    calls = a.extra["llm_calls_by_kind"]
    assert calls["concepts"] == 3  # one concept call per iteration
    assert sum(calls.values()) == a.model_calls
    assert a.extra["llm_used_by_kind"].get("concepts") == 3
    assert a.extra["concepts"]  # the library grew from the mock's ideas
    assert math.isfinite(a.train_nmse)


def test_budget_caps_model_calls() -> None:
    result = run(4, llm_weight=0.5, budget=2)
    assert result.model_calls == 2
    assert result.found


def _all(node: object) -> list[object]:
    out = [node]
    if isinstance(node, Op):
        for a in node.args:
            out += _all(a)
    return out


def _nums(node: object) -> list[Num]:
    return [n for n in _all(node) if isinstance(n, Num)]


# -- hostile answers and the time cap -------------------------------------------------------------

_ANSWER_PIECES = st.sampled_from(
    [
        "```json\n",
        "```",
        "[",
        "]",
        '"',
        ", ",
        "C",
        "x",
        "v",
        "^",
        "**",
        "(",
        ")",
        "sin",
        "exp",
        "tanh",
        "\x00",
        "\ud800",
        "__import__('os')",
        "1e308",
        "/",
        "0",
        "\\",
        "{",
        "}",
        "9" * 30,
    ]
)


@given(st.lists(_ANSWER_PIECES | st.text(max_size=5), max_size=40).map("".join))
@example('```json\n["C*x^C", "sin(sin(v))", "x^' + "(" * 200 + '"]\n```')
def test_any_model_answer_gives_a_tree_or_nothing(answer: str) -> None:
    lasr = LaSRRun(problem(), MockAdapter(MOCK), SamplingConfig(), 0, LaSRConfig())
    tree = lasr._pick_tree("mutate", answer)
    assert tree is None or size(tree) >= 1
    if tree is None and read_list(answer):
        assert sum(lasr.candidate_errors.values()) >= 1  # each refusal is counted with its kind


def test_time_limit_ends_the_run_with_the_best_so_far() -> None:
    result = LaSRRun(problem(), MockAdapter(MOCK), SamplingConfig(), 1, LaSRConfig(time_limit_s=0.5)).run()
    assert result.extra["stop_reason"] == "time_limit" and result.extra["iterations"] < 25
    assert result.found


@settings(max_examples=200)
@given(
    ideas=st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=12),
    n=st.integers(min_value=0, max_value=6),
    max_concepts=st.integers(min_value=1, max_value=10),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
@example(ideas=["a", "a"], n=2, max_concepts=5, seed=0)  # hung forever: one idea twice, two asked
def test_picked_ideas_are_distinct_and_the_draw_ends(
    ideas: list[str], n: int, max_concepts: int, seed: int
) -> None:
    from pytest_lsrb.srbench.methods.lasr import pick_ideas

    chosen = pick_ideas(ideas, n, max_concepts, random.Random(seed))
    if len(ideas) < n:
        assert chosen == ideas + ["None"] * (n - len(ideas))
    else:
        pool = set(ideas[:max_concepts])
        assert len(chosen) == len(set(chosen)) == min(n, len(pool))
        assert set(chosen) <= pool
