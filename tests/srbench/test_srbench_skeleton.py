"""LLM-SR prompts in the reference's format, and skeletons read safely out of model answers."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_lsrb.equations import EquationError
from pytest_lsrb.srbench.data.loaders import load_problems
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.methods.expression import read_equation
from pytest_lsrb.srbench.methods.skeleton import INSTRUCTION, Spec, read_skeleton

OSC = Spec(
    output="a",
    output_desc="acceleration",
    inputs=("x", "v"),
    input_descs=("current position", "velocity"),
    desc="A damped nonlinear oscillator with a driving force.",
)


def test_prompt_has_the_reference_layout() -> None:
    better = "    return params[0] * x + params[1] * v ** 3\n"
    prompt = OSC.prompt([OSC.initial_body(), better])
    assert prompt.startswith(
        '"""\nFind the mathematical function skeleton that represents acceleration, '
        "given data on current position, and velocity.\n"
    )
    assert "A damped nonlinear oscillator" not in prompt  # the reference shows no description
    assert "MAX_NPARAMS = 10\nparams = [1.0]*MAX_NPARAMS\n" in prompt
    # v0 carries the full docstring with the variable descriptions, later versions the
    # "Improved version" line; the prompt ends with the header of the next version.
    v0 = prompt.index("def equation_v0(x: np.ndarray, v: np.ndarray, params: np.ndarray) -> np.ndarray:")
    v1 = prompt.index(
        "def equation_v1(x: np.ndarray, v: np.ndarray, params: np.ndarray) -> np.ndarray:\n"
        '    """Improved version of `equation_v0`."""\n' + better
    )
    assert v0 < prompt.index("x: A numpy array representing observations of current position.") < v1
    assert prompt.rstrip().endswith(
        "def equation_v2(x: np.ndarray, v: np.ndarray, params: np.ndarray) "
        '-> np.ndarray:\n    """Improved version of `equation_v1`."""'
    )
    assert "output = params[0] * x + params[1] * v + params[2]" in prompt
    assert "Complete the 'equation' function below" in INSTRUCTION


def test_prompt_without_earlier_skeletons_shows_the_documented_header() -> None:
    prompt = OSC.prompt([])
    assert prompt.rstrip().endswith('to the inputs.\n    """')
    assert "equation_v0(" in prompt and "equation_v1" not in prompt


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # A chat answer with a fenced function, docstring and chatter around it.
        (
            "Sure! Here it is:\n```python\ndef equation_v2(x: np.ndarray, v: np.ndarray, params: np.ndarray)"
            ' -> np.ndarray:\n    """Improved version of `equation_v1`."""\n    damping = params[0] * v\n'
            "    return -damping - params[1] * x ** 3\n```\nThe cubic term models stiffening.",
            lambda x, v, p: -(p[0] * v) - p[1] * x**3,
        ),
        # A bare continuation of the header (completion-style local models), unindented lines.
        (
            "a = params[0]*x - params[1]*v*np.abs(v)\nreturn a\n",
            lambda x, v, p: p[0] * x - p[1] * v * np.abs(v),
        ),
        # Code after the return and after the function is ignored, as in the reference.
        (
            "def equation(x, v, params):\n    return params[0]*np.sin(x)\n    y = 2\nprint('done')\n",
            lambda x, v, p: p[0] * np.sin(x),
        ),
        # The model renamed the inputs: its own header binds them by position.
        (
            "def equation(pos, vel, params):\n    return params[0]*pos + params[1]*vel**2\n",
            lambda x, v, p: p[0] * x + p[1] * v**2,
        ),
        # Tabs, and a syntax error after the body: cut where the code stops parsing.
        (
            "def equation(x, v, params):\n\tk = params[0]\n\treturn k*x\nthis is not python (",
            lambda x, v, p: p[0] * x,
        ),
    ],
)
def test_read_skeleton_cuts_the_function_out(answer: str, expected: object) -> None:
    skeleton = read_skeleton(answer, OSC)
    rng = np.random.default_rng(0)
    x, v, p = rng.normal(size=50), rng.normal(size=50), rng.normal(size=4)
    got = skeleton.program.evaluate({"x": x, "v": v}, p)
    np.testing.assert_allclose(got, expected(x, v, p))  # type: ignore[operator]
    assert skeleton.body.startswith("    ") and "return" in skeleton.body


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("def equation(x, v, params):\n    return __import__('os').system('id')\n", "forbidden_construct"),
        ("def equation(x, v, params):\n    return x.__class__.__mro__[1]\n", "forbidden_construct"),
        # the reference runs a lambda: the language has none, so it is our limit, not the model's
        ("def equation(x, v, params):\n    f = lambda t: t\n    return f(x)\n", "unsupported_form"),
        ("def equation(x, v, params):\n    return np.clip_values(x, 0, 1) * params[0]\n", "unknown_name"),
        ("def equation(x, v, params):\n    return params[10] * x\n", "too_many_params"),
        ("def equation(x, v, params):\n    return x ** 1000\n", "too_complex"),
        ("I cannot help with that.", "parse_error"),
        ("garbage", "forbidden_construct"),
        ("", "parse_error"),
    ],
)
def test_unsafe_or_unusable_answers_are_rejected_with_a_kind(answer: str, kind: str) -> None:
    with pytest.raises(EquationError) as err:
        read_skeleton(answer, OSC)
    assert err.value.kind == kind


def test_initial_skeleton_is_the_reference_linear_one() -> None:
    skeleton = read_skeleton(OSC.function(OSC.initial_body()), OSC)
    assert skeleton.program.n_params == 3
    assert skeleton.program.to_expression() == "c0*x + c1*v + c2"


# What a model may write: code-like pieces (so the parser gets deep, not just refuses the first
# character) mixed with any character at all, lone surrogates and NUL included.
_PIECES = [
    "def equation(x, v, params):\n",
    "    return ",
    "params[0] * x",
    " + ",
    "np.sin(v)",
    "(",
    ")",
    "\n",
    "```python\n",
    "```",
    "    ",
    "\t",
    "import os\n",
    "__class__",
    "lambda: 0",
    "\ud800",
    "\x00",
    "x" * 50,
    "(" * 120,
    "**",
    "1e308",
]
model_text = st.lists(st.sampled_from(_PIECES) | st.text(max_size=6), max_size=30).map("".join)


@settings(max_examples=300)
@given(text=model_text)
def test_any_answer_reads_to_a_skeleton_or_an_equation_error(text: str) -> None:
    """Reading an answer never raises anything but EquationError (which scores it invalid); any
    other exception would error the test as if the harness had failed."""
    with contextlib.suppress(EquationError):
        read_skeleton(text, OSC)


_LINES = [
    "y = ",
    "a = ",
    "params[0] * x + params[1]",
    "sqrt(",
    "x**2",
    "exp(-v)",
    "```",
    "\n",
    ";",
    ".",
    "\ud800",
    "\x00",
    "(" * 200,
    "def f(x, v, params):\n    return x\n",
    "1/0",
    "__import__('os')",
]
answer_text = st.lists(st.sampled_from(_LINES) | st.text(max_size=6), max_size=25).map("".join)


@functools.cache
def _builtin_problem() -> Problem:
    return load_problems(Path(__file__).resolve().parents[2] / "suites" / "llm_srbench" / "index.jsonl")[0]


@settings(max_examples=300)
@given(text=answer_text)
def test_any_direct_answer_reads_to_an_equation_or_an_equation_error(text: str) -> None:
    with contextlib.suppress(EquationError):
        read_equation(text, _builtin_problem())
