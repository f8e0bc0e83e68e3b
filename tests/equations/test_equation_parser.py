"""The equation language: what parses, how it binds, and what it is refused with."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_lsrb.equations import (
    EQUATION_ERROR_KINDS,
    EquationError,
    parse_equation,
    parse_expression,
    parse_function,
)

XV = ["x", "v"]
ROWS = {"x": np.array([0.5, 1.0, 2.0]), "v": np.array([-1.0, 0.0, 3.0])}


def test_expression_with_const_names_and_numpy_functions() -> None:
    p = parse_expression("c0*x**2 + np.sin(v) + c1", XV)
    assert p.n_params == 2
    assert p.param_names == ("c0", "c1")
    assert p.kind == "expression"
    y = p.evaluate(ROWS, [2.0, 0.5])
    np.testing.assert_allclose(y, 2.0 * ROWS["x"] ** 2 + np.sin(ROWS["v"]) + 0.5)


def test_params_subscripts_and_aliases() -> None:
    p = parse_expression("params[0]*ln(x) + math.exp(v) + numpy.arcsin(x/4) + asin(x/4)", XV)
    assert p.n_params == 1
    y = p.evaluate(ROWS, np.array([3.0]))
    want = 3 * np.log(ROWS["x"]) + np.exp(ROWS["v"]) + 2 * np.arcsin(ROWS["x"] / 4)
    np.testing.assert_allclose(y, want)


def test_free_params_allocate_after_explicit_indices() -> None:
    p = parse_expression("a*exp(b*x) + c0", ["x"], free_params=True)
    assert p.n_params == 3
    assert p.param_names == ("c0", "a", "b")
    np.testing.assert_allclose(
        p.evaluate({"x": np.array([0.0, 1.0])}, [1.0, 2.0, 3.0]), [2.0 + 1.0, 2.0 * np.exp(3.0) + 1.0]
    )


def test_unknown_name_without_free_params() -> None:
    with pytest.raises(EquationError) as err:
        parse_expression("a*x", ["x"])
    assert err.value.kind == "unknown_name"


def test_variables_win_over_constant_names() -> None:
    p = parse_expression("pi*c0 + c1", ["pi", "c1"])
    assert p.n_params == 1
    np.testing.assert_allclose(p.evaluate({"pi": [2.0], "c1": [5.0]}, [3.0]), [11.0])


def test_constants_and_ifexp_where() -> None:
    p = parse_expression("np.where(x > 1, np.pi, np.e) + (x if v < 0 else -x)", XV)
    y = p.evaluate(ROWS)
    np.testing.assert_allclose(y, [np.e + 0.5, np.e - 1.0, np.pi - 2.0])


LLMSR_SKELETON = '''
import numpy as np

def equation(x: np.ndarray, v: np.ndarray, params: np.ndarray) -> np.ndarray:
    """ Mathematical function for acceleration in a damped nonlinear oscillator

    Args:
        x: A numpy array representing observations of current position.
        v: A numpy array representing observations of velocity.
        params: Array of numeric constants or parameters to be optimized

    Return:
        A numpy array representing acceleration.
    """
    k, b = params[0], params[1]
    c, d, e = params[2:5]
    damping = -b * v
    spring = -k * x
    spring += -c * x**3
    dx: float = d * np.sin(e * x)
    return spring + damping + dx
'''


def test_llmsr_skeleton() -> None:
    p = parse_function(LLMSR_SKELETON, XV)
    assert p.kind == "function"
    assert p.n_params == 5
    params = np.array([1.0, 0.5, 0.1, 0.2, 3.0, 99.0])  # extra entries are ignored
    x, v = ROWS["x"], ROWS["v"]
    want = -1.0 * x - 0.1 * x**3 - 0.5 * v + 0.2 * np.sin(3.0 * x)
    np.testing.assert_allclose(p.evaluate(ROWS, params), want)
    # The same program evaluates from a 2-D array in variable order.
    np.testing.assert_allclose(p.evaluate(np.column_stack([x, v]), params), want)


def test_function_arguments_bind_by_position_when_names_differ() -> None:
    p = parse_function("def f(a, b, params):\n    return a - b*params[0]", XV)
    np.testing.assert_allclose(p.evaluate(ROWS, [2.0]), ROWS["x"] - 2.0 * ROWS["v"])
    assert p.used_variables == frozenset({"x", "v"})


def test_function_may_use_a_subset_of_variables() -> None:
    p = parse_function("def f(v, params):\n    return params[0]*v", XV)
    np.testing.assert_allclose(p.evaluate({"v": ROWS["v"]}, [2.0]), 2.0 * ROWS["v"])


def test_local_reuse_is_shared_not_duplicated() -> None:
    src = (
        "def f(x, params):\n"
        + "".join(f"    a{i} = a{i - 1} * a{i - 1}\n" if i else "    a0 = x + params[0]\n" for i in range(8))
        + "    return a7\n"
    )
    p = parse_function(src, ["x"])
    assert p.node_count > 200  # the tree doubles at each step...
    np.testing.assert_allclose(p.evaluate({"x": np.array([1.0])}, [0.0]), [1.0])


def test_parse_equation_dispatches_and_drops_lhs() -> None:
    assert parse_equation("a = c0*x + v", XV).kind == "expression"
    assert parse_equation("def f(x, v, params):\n    return x", XV).kind == "function"
    with pytest.raises(EquationError):
        parse_equation("x = c0*x", XV)


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("", "parse_error"),
        ("x +", "parse_error"),
        ("x\x00", "parse_error"),
        ("foo(x)", "unknown_name"),
        ("np.frobnicate(x)", "unknown_name"),
        ("np.foo", "unknown_name"),
        ("params[10]*x", "too_many_params"),
        ("c12*x", "too_many_params"),
        ("params[-1]*x", "forbidden_construct"),
        ("params[0:2]", "forbidden_construct"),
        ("params*x", "forbidden_construct"),
        ("exp(x, v)", "bad_call"),
        ("exp(x=1)", "bad_call"),
        ("1e999*x", "bad_constant"),
        ("x % 2", "forbidden_construct"),
        ("x // 2", "forbidden_construct"),
        ("x @ v", "forbidden_construct"),
        ("x < v < 1", "forbidden_construct"),
        ("x < v", "forbidden_construct"),
        ("x and v", "forbidden_construct"),
        ("'x'", "forbidden_construct"),
        ("True*x", "forbidden_construct"),
        ("1j*x", "forbidden_construct"),
        ("[x, v]", "forbidden_construct"),
        ("exp", "forbidden_construct"),
    ],
)
def test_expression_refusals(source: str, kind: str) -> None:
    with pytest.raises(EquationError) as err:
        parse_expression(source, XV)
    assert err.value.kind == kind
    assert err.value.kind in EQUATION_ERROR_KINDS


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("import numpy as np", "bad_signature"),
        ("def f(x, v):\n    return x", "bad_signature"),
        ("def f(x, v, params):\n    y = x", "bad_signature"),
        ("def f(x, v, params):\n    return x\n    y = 2", "bad_signature"),
        ("def f(x, v, params):\n    return\n", "bad_signature"),
        ("def f(x, v, w, z, params):\n    return x", "bad_signature"),
        ("def f(x, v, params=None):\n    return x", "bad_signature"),
        ("def f(*args, params):\n    return 1", "bad_signature"),
        ("def f(x, v, params):\n    return x\ndef g(x, v, params):\n    return v", "bad_signature"),
        (
            "def f(x, v, params):\n    for i in range(3):\n        x = x + 1\n    return x",
            "unsupported_form",  # the reference runs it; the language has no loop
        ),
        ("def f(x, v, params):\n    if x:\n        return x\n    return v", "forbidden_construct"),
        ("def f(x, v, params):\n    params = 1\n    return x", "forbidden_construct"),
        ("def f(x, v, params):\n    np = 1\n    return x", "forbidden_construct"),
        ("def f(x, v, params):\n    x.y = 1\n    return x", "forbidden_construct"),
        ("def f(x, v, params):\n    import os\n    return x", "forbidden_construct"),
        ("import os\ndef f(x, v, params):\n    return x", "forbidden_construct"),
        ("from numpy import exp\ndef f(x, v, params):\n    return x", "forbidden_construct"),
        ("import math as np\ndef f(x, v, params):\n    return x", "forbidden_construct"),
        ("@decorate\ndef f(x, v, params):\n    return x", "forbidden_construct"),
        ("def f(x, v, params) -> __import__('os'):\n    return x", "forbidden_construct"),
        ("def f(x: x.__class__, v, params):\n    return x", "forbidden_construct"),
        ("def f(x, v, params):\n    def g():\n        return 1\n    return x", "forbidden_construct"),
        ("def f(x, v, params):\n    return q", "unknown_name"),
        ("def f(x, v, params):\n    a, b = params[0:3]\n    return a", "forbidden_construct"),
        ("x = 1\ndef f(x, v, params):\n    return x", "forbidden_construct"),
    ],
)
def test_function_refusals(source: str, kind: str) -> None:
    with pytest.raises(EquationError) as err:
        parse_function(source, XV)
    assert err.value.kind == kind


def test_error_kind_must_be_known() -> None:
    with pytest.raises(ValueError):
        EquationError("nonsense", "x")


def test_bad_variable_names_are_a_caller_error() -> None:
    with pytest.raises(ValueError):
        parse_expression("x", ["params"])
    with pytest.raises(ValueError):
        parse_expression("x", ["not a name"])
