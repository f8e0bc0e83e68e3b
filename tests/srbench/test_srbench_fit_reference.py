"""The default fit is the reference's: scipy's BFGS from ten ones with its numerical gradient, as
LLM-SRBench's LLMSRSearcher and LLM-SR's specification programs run it; the opt-in `fast` fit
reaches the same optimum on smooth skeletons.

The reference procedure, from its facts (methods/llmsr/searcher.py eval_spec, LLM-SR's
specs/specification_*_numpy.txt): `loss(params) = np.mean((y_pred - outputs) ** 2)` over a
vector of MAX_NPARAMS = 10 parameters, `scipy.optimize.minimize(loss, [1.0]*MAX_NPARAMS,
method='BFGS')` (no gradient, default options); `result.fun` nan or inf makes the candidate
invalid. `test_reference_fit_is_the_reference_call` writes that call by hand around skeletons
written as numpy functions (phase-shifted sines, rational terms and logs among them) and
compares; the `fast` checks use the reference loss of the same compiled program.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

from pytest_lsrb.equations import Program, parse_expression, parse_function
from pytest_lsrb.srbench.data.loaders import load_problems
from pytest_lsrb.srbench.fitting.fit import FitLimits, fit_program
from pytest_lsrb.srbench.scoring.symbolic import promote_constants

REPO = Path(__file__).resolve().parents[2]
BUILT_IN = REPO / "suites" / "llm_srbench" / "index.jsonl"
REFERENCE_NPARAMS = 10
RTOL = 1e-6
FAST = FitLimits(policy="fast")


def reference_loss(program: Program, X: dict[str, np.ndarray], y: np.ndarray) -> float:
    """The reference's score (negated): BFGS from ten ones with scipy's numerical gradient."""
    n = program.n_params

    def loss(params: np.ndarray) -> float:
        with np.errstate(all="ignore"):
            y_pred = program.evaluate(X, params[:n] if n else None)
            return float(np.mean((y_pred - y) ** 2))

    with np.errstate(all="ignore"):
        result = minimize(loss, [1.0] * REFERENCE_NPARAMS, method="BFGS")
    value = float(result.fun)
    return value if math.isfinite(value) else math.inf


def linear_start(inputs: list[str]) -> str:
    """LLM-SR's starting skeleton (the searcher's specification): linear in every input."""
    terms = " + ".join(f"params[{i}] * {v}" for i, v in enumerate(inputs))
    return f"def equation({', '.join(inputs)}, params):\n    return {terms} + params[{len(inputs)}]\n"


def built_in_cases() -> list[tuple[str, Program, dict[str, np.ndarray], np.ndarray]]:
    cases = []
    for problem in load_problems(BUILT_IN):
        X, y = problem.columns("train")
        start = parse_function(linear_start(problem.inputs), problem.inputs)
        cases.append((f"{problem.name}:linear", start, X, y))
        if problem.expression is not None:
            truth = parse_expression(problem.expression, problem.inputs)
            template, _ = promote_constants(truth)
            if 0 < template.n_params <= REFERENCE_NPARAMS:
                cases.append((f"{problem.name}:truth-template", template, X, y))
    return cases


LLMSR_SKELETONS = {
    "oscillator1": (
        ["x", "v"],
        [
            "params[0]*x + params[1]*v + params[2]*x**3 + params[3]*np.sin(params[4]*x)",
            "params[0]*x + params[1]*v + params[2]*x**3 + params[3]*np.sin(params[4]*x)"
            " + params[5]*v**3 + params[6]*np.exp(-params[7]*x**2)*v + params[8]*np.tanh(params[9]*v)",
            "params[0]*np.sin(params[1]*x) + params[2]*v*np.abs(v) + params[3]*x**3",
            "params[0]*x*np.exp(-params[1]*np.abs(v)) + params[2]*v + params[3]",
        ],
    ),
    "stressstrain": (
        ["strain", "temp"],
        [
            "params[0]*strain*np.exp(-params[1]*temp) + params[2]*strain**2",
            "params[0]*np.tanh(params[1]*strain)*(params[2] - params[3]*temp) + params[4]",
            "params[0]*np.abs(strain)**params[1] + params[2]*temp + params[3]",
            "params[0]*strain + params[1]*strain**2 + params[2]*strain*temp + params[3]*temp + params[4]",
        ],
    ),
}


def llmsr_cases(data: Path) -> list[tuple[str, Program, dict[str, np.ndarray], np.ndarray]]:
    cases = []
    for name, (inputs, bodies) in LLMSR_SKELETONS.items():
        table = np.loadtxt(data / "llmsr" / name / "train.csv", delimiter=",", skiprows=1)
        X = {v: table[:, i] for i, v in enumerate(inputs)}
        y = table[:, -1]
        header = f"def equation({', '.join(inputs)}, params):\n"
        programs = [parse_function(linear_start(inputs), inputs)]
        programs += [parse_function(header + f"    return {body}\n", inputs) for body in bodies]
        cases += [(f"{name}:{i}", p, X, y) for i, p in enumerate(programs)]
    return cases


def _check(program: Program, X: dict[str, np.ndarray], y: np.ndarray) -> tuple[float, float]:
    ours = fit_program(program, X, y, limits=FAST)
    reference = reference_loss(program, X, y)
    if not math.isfinite(reference):
        assert not ours.valid, "the reference scores this candidate invalid"
        return ours.mse, reference
    assert ours.valid and ours.status == "ok"
    assert ours.mse <= reference * (1 + RTOL) + 1e-300, (ours.mse, reference)
    return ours.mse, reference


# Skeletons where the module's caveat holds on the built-in data: a rational term, and the exact
# and the numerical gradient take BFGS to different basins. gen-BPG0's population falls from 1 to
# 0.29, where P**2/(c2 + P**2) ~ P**2/c2 leaves c1 and c2 nearly tied: fast ends at MSE 3.2e-8,
# the reference at 1.2e-8 (the set's data since issue #40's release-built sweeps).
DIFFERENT_BASINS = {"gen-BPG0:truth-template"}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c,
            id=c[0],
            marks=[pytest.mark.xfail(strict=True, reason="another basin (module caveat)")]
            if c[0] in DIFFERENT_BASINS
            else [],
        )
        for c in built_in_cases()
    ],
)
def test_fast_fit_reaches_the_reference_optimum_on_built_in_skeletons(case: tuple) -> None:
    _name, program, X, y = case
    _check(program, X, y)


def test_fast_fit_reaches_the_reference_optimum_on_real_llmsr_skeletons(shared_data: Path) -> None:
    gaps = []
    for name, program, X, y in llmsr_cases(shared_data):
        ours, reference = _check(program, X, y)
        gaps.append((name, ours, reference))
    assert len(gaps) == 10


# -- the default: the reference's own call ------------------------------------------------------

# (name, inputs, skeleton as the model writes it, the same skeleton as numpy code written here)
Skeleton = Callable[..., np.ndarray]
WRITTEN: list[tuple[str, list[str], str, Skeleton]] = [
    (
        "linear",
        ["x", "v"],
        "params[0]*x + params[1]*v + params[2]",
        lambda x, v, p: p[0] * x + p[1] * v + p[2],
    ),
    (
        "phase-sine",
        ["x", "v"],
        "params[0]*np.sin(params[1]*x + params[2]) + params[3]*v",
        lambda x, v, p: p[0] * np.sin(p[1] * x + p[2]) + p[3] * v,
    ),
    (
        "two-sines",
        ["x", "v"],
        "params[0]*np.sin(params[1]*x + params[2]) + params[3]*np.cos(params[4]*v + params[5])",
        lambda x, v, p: p[0] * np.sin(p[1] * x + p[2]) + p[3] * np.cos(p[4] * v + p[5]),
    ),
    (
        "rational",
        ["x", "v"],
        "params[0]*x/(params[1] + params[2]*v**2) + params[3]*v",
        lambda x, v, p: p[0] * x / (p[1] + p[2] * v**2) + p[3] * v,
    ),
    (
        "log",
        ["x", "v"],
        "params[0]*np.log(np.abs(params[1]*x) + params[2]) + params[3]*v",
        lambda x, v, p: p[0] * np.log(np.abs(p[1] * x) + p[2]) + p[3] * v,
    ),
    (
        "exp-damped",
        ["x", "v"],
        "params[0]*x*np.exp(-params[1]*np.abs(v)) + params[2]*v + params[3]",
        lambda x, v, p: p[0] * x * np.exp(-p[1] * np.abs(v)) + p[2] * v + p[3],
    ),
    # nan on half the rows whatever the parameters: the reference's final loss is nan -> invalid
    ("log-nan", ["x", "v"], "params[0]*np.log(params[1]*x)", lambda x, v, p: p[0] * np.log(p[1] * x)),
]


def reference_call(equation: Skeleton, X: np.ndarray, y: np.ndarray) -> float | None:
    """LLM-SR's `evaluate(data)` as its specification writes it: the score's loss, or None."""
    inputs, outputs = X, y
    x, v = inputs[:, 0], inputs[:, 1]

    def loss(params: np.ndarray) -> float:
        y_pred = equation(x, v, params)
        return float(np.mean((y_pred - outputs) ** 2))

    loss_partial = lambda params: loss(params)  # noqa: E731 (as written there)
    with np.errstate(all="ignore"):
        result = minimize(loss_partial, [1.0] * REFERENCE_NPARAMS, method="BFGS")
    value = float(result.fun)
    if np.isnan(value) or np.isinf(value):
        return None
    return value


@pytest.mark.parametrize("case", WRITTEN, ids=lambda c: c[0])
def test_reference_fit_is_the_reference_call(case: tuple, shared_data: Path) -> None:
    _name, inputs, body, equation = case
    table = np.loadtxt(shared_data / "llmsr" / "oscillator1" / "train.csv", delimiter=",", skiprows=1)
    table = table[::5]  # 2000 of the 10,000 rows, spread along the trajectory (CPU)
    X, y = table[:, :-1], table[:, -1]
    program = parse_function(f"def equation(x, v, params):\n    return {body}\n", inputs)
    ours = fit_program(program, {"x": X[:, 0], "v": X[:, 1]}, y)
    expected = reference_call(equation, X, y)
    if expected is None:
        assert not ours.valid and ours.status == "nonfinite"
        return
    assert ours.valid and ours.status == "ok" and ours.method == "bfgs"
    assert ours.mse == pytest.approx(expected, rel=1e-9)
