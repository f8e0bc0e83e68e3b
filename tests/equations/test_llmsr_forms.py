"""What LLM-SR programs write, parsed into the equation language and compared with what the
reference computes: LLM-SR runs the program itself with numpy (`equation(*X.T, params)` with a
params array of MAX_NPARAMS = 10), so a test here runs the same text with numpy (our own fixed
text, never a model's) and holds our parse to its values. Forms the language does not express are
refused as `unsupported_form` (our limit, counted apart), never as the model's parse error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.equations import UNSUPPORTED_KINDS, EquationError, parse_function
from pytest_lsrb.srbench.tables.table import SrbenchSummary, unsupported_candidates

VARS = ["x", "v"]
HEADER = "import numpy as np\ndef equation(x, v, params):\n"

# Programs the reference runs: (body, what it exercises).
RUNNABLE = {
    "clip": "    return np.clip(params[0] * x, -1.0, 1.0) + params[1] * v",
    "clip_keywords": "    return np.clip(params[0] * x, a_min=-0.5, a_max=params[2])",
    "minimum_maximum": "    return np.minimum(x, params[0]) + np.maximum(v, 0.0)",
    "reciprocal": "    return params[0] * np.reciprocal(x + 3.0)",
    "heaviside": "    return params[0] * np.heaviside(x - 0.1, 0.5) * v",
    "float64": "    return np.float64(2.0) * params[0] * x ** np.float64(2) + float(params[1])",
    "len_guard_raise": (
        "    if len(params) < 3:\n        raise ValueError('need 3 parameters')\n"
        "    a = params[0] * x\n    return a + params[1] * v"
    ),
    "len_guard_branch": (
        "    n = len(params)\n    if n >= 4:\n        k = params[3]\n"
        "    else:\n        k = 1.0\n    return k * x"
    ),
    "len_guard_return": "    if len(params) > 20:\n        return x\n    return params[0] * v + params[1]",
    "params_branch": "    if params[0] > 0:\n        return params[1] * x\n    else:\n        return v",
    "params_branch_bind": (
        "    if params[2] < 0.5:\n        y = x\n    else:\n        y = v\n    return params[0] * y"
    ),
    # numpy's one-sided clip: a bound of None is no bound
    "clip_one_sided": "    return np.clip(params[0] * x, None, 0.5) + np.clip(v, a_min=0.0, a_max=None)",
    "clip_no_bound": "    return np.clip(params[0] * x, None, None)",
    # an early return: the if's other way is the rest of the block
    "early_return": "    if params[0] > 0:\n        return params[1] * x\n    return v",
    "early_returns_chained": (
        "    y = params[1] * x\n    if params[0] > 0.5:\n        return y\n    y = y + v\n"
        "    if params[2] < 0:\n        if params[3] > 0:\n            return y * v\n"
        "        else:\n            return y - v\n    return y + 1.0"
    ),
    "early_return_in_else": (
        "    if params[0] > 0:\n        y = x\n    else:\n        return v * params[1]\n    return y * y"
    ),
}


def reference(body: str, X: np.ndarray, params: np.ndarray) -> np.ndarray:
    """What LLM-SR computes: the program run by numpy (our fixed test text)."""
    scope: dict[str, object] = {}
    exec(HEADER + body, scope)
    fn = scope["equation"]
    assert callable(fn)
    return np.asarray(fn(*X.T, params), dtype=float) * np.ones(len(X))


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_an_llmsr_program_parses_to_what_numpy_computes(name: str) -> None:
    body = RUNNABLE[name]
    program = parse_function(HEADER + body, VARS)
    rng = np.random.default_rng(7)
    X = rng.uniform(-1.0, 1.0, size=(64, 2))
    X[0, 0] = 0.1  # heaviside's own point: h0 at exactly 0
    for trial in range(5):
        params = rng.uniform(-1.0, 1.0, size=10)
        if trial == 0:
            params[:] = 1.0  # the reference's starting point
        ours = program.evaluate(X, params[: max(program.n_params, 1)])
        np.testing.assert_allclose(ours, reference(body, X, params), rtol=1e-12, atol=1e-12)


@given(
    x=st.floats(-1e6, 1e6, allow_nan=False),
    lo=st.floats(-1e3, 1e3, allow_nan=False),
    width=st.floats(0, 1e3, allow_nan=False),
)
@example(x=0.0, lo=0.0, width=0.0)
def test_clip_is_numpys_clip(x: float, lo: float, width: float) -> None:
    program = parse_function(HEADER + "    return np.clip(x, params[0], params[1])", VARS)
    value = program.evaluate(np.array([[x, 0.0]]), [lo, lo + width])[0]
    assert value == np.clip(x, lo, lo + width)


@given(x=st.floats(-10, 10, allow_nan=False), h0=st.floats(-2, 2, allow_nan=False))
@example(x=0.0, h0=0.5)
@example(x=-0.0, h0=0.25)
def test_heaviside_is_numpys_heaviside(x: float, h0: float) -> None:
    program = parse_function(HEADER + "    return np.heaviside(x, params[0])", VARS)
    assert program.evaluate(np.array([[x, 0.0]]), [h0])[0] == np.heaviside(x, h0)


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        # the reference runs these; the language has no loop, no comprehension, no np.sinc
        (
            "    s = 0.0\n    for i in range(3):\n        s = s + params[i] * x ** i\n    return s",
            "unsupported_form",
        ),
        ("    return sum(params[i] * x ** i for i in range(3))", "unsupported_form"),
        ("    return np.sinc(x) * params[0]", "unsupported_form"),
        ("    return round(x) * params[0]", "unsupported_form"),
        ("    return np.array([x, v])[0]", "forbidden_construct"),
        ("    if params[0] > 0:\n        return x\n    y = v", "unsupported_form"),  # returns None
        # the model's own errors: the reference fails on them too
        ("    return np.frobnicate(x)", "unknown_name"),  # AttributeError in numpy
        ("    if x > 0:\n        return x\n    return v", "forbidden_construct"),  # ambiguous truth value
        ("    if len(params) <= 10:\n        raise ValueError('no')\n    return x", "forbidden_construct"),
        ("    return np.clip(x, 0.0)", "bad_call"),  # clip needs both bounds
        ("    return len(x) * params[0]", "unsupported_form"),
    ],
)
def test_refusals_say_whose_they_are(body: str, kind: str) -> None:
    with pytest.raises(EquationError) as err:
        parse_function(HEADER + body, VARS)
    assert err.value.kind == kind, err.value


def test_a_long_chain_of_early_returns_is_too_complex_not_a_crash() -> None:
    # each early return nests the rest of the block in its if: 500 of them (under the source
    # limit) recursed past Python's limit before that nesting was bounded
    body = "".join(f"    if params[{i % 10}] > {i % 10}: return x\n" for i in range(500))
    with pytest.raises(EquationError) as err:
        parse_function(HEADER + body + "    return v\n", VARS)
    assert err.value.kind == "too_complex" and "nested deeper than" in str(err.value), err.value


def test_a_guard_that_always_raises_under_the_references_params_is_the_models() -> None:
    # the reference calls with 10 parameters: `len(params) < 11` is always true, so it always raises
    with pytest.raises(EquationError) as err:
        parse_function(HEADER + "    if len(params) < 11:\n        raise ValueError('x')\n    return x", VARS)
    assert err.value.kind == "forbidden_construct" and err.value.kind not in UNSUPPORTED_KINDS


def test_unsupported_forms_are_counted_apart_from_the_models_parse_errors() -> None:
    summary = SrbenchSummary()
    records = [
        {"item_id": "a", "sample_index": 0, "candidate_errors": {"unsupported_form": 2, "parse_error": 3}},
        {"item_id": "b", "sample_index": 0, "candidate_errors": {"parse_error": 1}},
        {"item_id": "c", "sample_index": 0, "proposal_error_kind": "unsupported_form"},
    ]
    assert [unsupported_candidates(r) for r in records] == [2, 0, 1]
    for record in records:
        summary.add(record)
    done = summary.finish()
    assert done["sr_unsupported_candidates"] == 3 and done["sr_unsupported_attempts"] == 2


def test_an_unsupported_equation_is_not_charged_to_the_model() -> None:
    from pathlib import Path

    from pytest_lsrb.engine.verifier import outcome_domain
    from pytest_lsrb.srbench.data.loaders import load_problems
    from pytest_lsrb.srbench.scoring.verifier import EquationVerifier

    suite = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"
    problem = next(iter(load_problems(suite / "index.jsonl")))
    first = problem.inputs[0]
    verifier = EquationVerifier()
    ours = verifier.verify(problem, f"c0*np.sinc({first})", attempt_seed=1)
    assert ours.outcome == "unsupported_equation" and outcome_domain(ours.outcome) == "harness"
    theirs = verifier.verify(problem, f"c0*np.frobnicate({first})", attempt_seed=1)
    assert theirs.outcome == "no_equation" and outcome_domain(theirs.outcome) == "model"


def test_model_text_that_makes_python_warn_warns_nothing(recwarn: pytest.WarningsRecorder) -> None:
    """An invalid escape or `1if x` in a model's answer is the model's text, not a warning of
    the user's run (pytest's warnings summary showed DeprecationWarning: invalid escape sequence)."""
    from pytest_lsrb.equations import parse_python

    parse_python("def equation(x, v, params):\n    s = '\\q'\n    return 1if x else 2\n")
    assert [str(w.message) for w in recwarn] == []
