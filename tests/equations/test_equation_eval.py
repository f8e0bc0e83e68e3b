"""Evaluation laws: numpy results, non-finite instead of exceptions, exact Jacobians, sympy and
text round trips agree with the evaluator."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_lsrb.equations import Program, from_sympy, parse_expression, parse_function

XV = ["x", "v"]
RNG = np.random.default_rng(0)
DATA = {"x": RNG.uniform(0.2, 2.0, 50), "v": RNG.uniform(-1.5, 1.5, 50)}

# -- a grammar of valid expressions -----------------------------------------------------------

_leaf = st.sampled_from(["x", "v", "c0", "c1", "params[2]", "1.5", "2", "pi", "np.e"])
_unary = ["np.exp", "np.sin", "np.cos", "np.tanh", "np.log", "np.sqrt", "abs", "np.arctan", "np.cosh"]


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/"]), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    exponents = st.sampled_from(["2", "3", "0.5", "-1", "c1"])
    power = st.tuples(children, exponents).map(lambda t: f"({t[0]})**{t[1]}")
    call = st.tuples(st.sampled_from(_unary), children).map(lambda t: f"{t[0]}({t[1]})")
    neg = children.map(lambda c: f"-{c}")
    return binary | power | call | neg


EXPRESSIONS = st.recursive(_leaf, _extend, max_leaves=12)
PARAMS = np.array([0.7, -1.3, 0.4])


@settings(max_examples=200, deadline=None)
@given(EXPRESSIONS)
def test_generated_expressions_parse_and_evaluate(text: str) -> None:
    prog = parse_expression(text, XV)
    y = prog.evaluate(DATA, PARAMS)
    assert y.shape == (50,) and y.dtype == np.float64


@settings(max_examples=200, deadline=None)
@given(EXPRESSIONS)
def test_text_round_trip_is_exact(text: str) -> None:
    prog = parse_expression(text, XV)
    again = parse_expression(prog.to_expression(), XV)
    np.testing.assert_array_equal(prog.evaluate(DATA, PARAMS), again.evaluate(DATA, PARAMS))
    # Substituting the parameters as numbers evaluates the same too.
    fixed = parse_expression(prog.to_expression(PARAMS[: prog.n_params]), XV)
    assert fixed.n_params == 0
    np.testing.assert_allclose(fixed.evaluate(DATA), prog.evaluate(DATA, PARAMS), rtol=1e-12, equal_nan=True)


@settings(max_examples=150, deadline=None)
@given(EXPRESSIONS)
def test_jacobian_matches_finite_differences(text: str) -> None:
    prog = parse_expression(text, XV)
    assume(prog.n_params > 0)
    bound = prog.bind(DATA)
    y, jac = bound.value_and_jacobian(PARAMS)
    np.testing.assert_array_equal(y, bound.evaluate(PARAMS))
    assert jac.shape == (50, prog.n_params)
    for k in range(prog.n_params):
        h = 1e-6 * max(1.0, abs(PARAMS[k]))
        up, down = PARAMS.copy(), PARAMS.copy()
        up[k] += h
        down[k] -= h
        fd = (bound.evaluate(up) - bound.evaluate(down)) / (2 * h)
        # rows where y is huge lose the perturbation to rounding: finite differences say 0 there
        ok = np.isfinite(fd) & np.isfinite(jac[:, k]) & (np.abs(fd) < 1e6) & (np.abs(y) < 1e6)
        np.testing.assert_allclose(jac[ok, k], fd[ok], rtol=1e-4, atol=1e-5)
    weights = np.linspace(-1.0, 1.0, 50)
    y2, grad = bound.value_and_grad(PARAMS, weights)
    np.testing.assert_array_equal(y2, y)
    if np.isfinite(jac).all():
        np.testing.assert_allclose(grad, jac.T @ weights, rtol=1e-9, atol=1e-9)
    target = np.cos(DATA["x"])
    mse, g = bound.mse_and_grad(PARAMS, target)
    if not np.isfinite(y).all():
        assert mse == math.inf  # not finite on every row: invalid, never silently averaged
    elif np.isfinite(jac).all():
        assert mse == pytest.approx(float(np.mean((y - target) ** 2)), rel=1e-12)
        np.testing.assert_allclose(g, jac.T @ (2.0 * (y - target) / y.size), rtol=1e-9, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(EXPRESSIONS)
def test_sympy_form_evaluates_like_numpy(text: str) -> None:
    prog = parse_expression(text, XV)
    expr = prog.to_sympy(params=list(PARAMS[: prog.n_params]))
    y = prog.evaluate(DATA, PARAMS)
    for i in range(3):
        want = y[i]
        got = complex(expr.subs({sympy.Symbol("x"): DATA["x"][i], sympy.Symbol("v"): DATA["v"][i]}).evalf())
        if math.isfinite(want) and abs(want) < 1e8 and abs(got.imag) < 1e-9:
            assert got.real == pytest.approx(want, rel=1e-8, abs=1e-8)
    if expr.has(sympy.I) or expr.has(sympy.zoo) or expr.has(sympy.nan):
        return  # e.g. log of a negative constant: numpy says nan, sympy goes complex
    back = Program.from_ir(from_sympy(expr, XV), XV)
    ok = np.isfinite(y) & (np.abs(y) < 1e8)
    np.testing.assert_allclose(back.evaluate(DATA)[ok], y[ok], rtol=1e-7, atol=1e-9)


def test_overflow_and_invalid_math_give_non_finite_values() -> None:
    prog = parse_expression("np.exp(c0*x) + np.log(v) + 1/(x - x) + c1**c0", XV)
    y = prog.evaluate({"x": [1.0, 2.0], "v": [-1.0, 1.0]}, [1e300, 10.0])
    assert not np.isfinite(y).any()
    y2 = parse_expression("x**c0", XV).evaluate({"x": [-2.0, 1e300], "v": [0.0, 0.0]}, [0.5])
    assert math.isnan(y2[0]) and math.isfinite(y2[1])
    big = parse_expression("9.0**9.0**2.0**c0", XV).evaluate({"x": [1.0], "v": [1.0]}, [5.0])
    assert np.isinf(big[0])


def test_constant_and_parameter_only_programs_broadcast() -> None:
    assert parse_expression("3", XV).evaluate(DATA).shape == (50,)
    y = parse_expression("c0 * 2", XV).evaluate(DATA, [1.5])
    np.testing.assert_array_equal(y, np.full(50, 3.0))
    _, jac = parse_expression("c0 * 2", XV).value_and_jacobian(DATA, [1.5])
    np.testing.assert_array_equal(jac, np.full((50, 1), 2.0))


def test_missing_params_or_columns_are_caller_errors() -> None:
    prog = parse_expression("c1*x", XV)
    with pytest.raises(ValueError):
        prog.evaluate(DATA)
    with pytest.raises(ValueError):
        prog.evaluate(DATA, [1.0])
    with pytest.raises(ValueError):
        prog.evaluate({"v": [1.0]}, [1.0, 2.0])
    with pytest.raises(ValueError):
        prog.evaluate(np.ones((3, 3)), [1.0, 2.0])


def test_bound_program_reuses_the_fixed_part() -> None:
    prog = parse_function(
        "def f(x, v, params):\n    s = np.sin(x) * np.exp(v)\n    return params[0] * s + params[1]", XV
    )
    bound = prog.bind(DATA)
    base = np.sin(DATA["x"]) * np.exp(DATA["v"])
    for a, b in [(1.0, 0.0), (2.0, -1.0)]:
        np.testing.assert_allclose(bound.evaluate([a, b]), a * base + b)
    _, jac = bound.value_and_jacobian([2.0, 3.0])
    np.testing.assert_allclose(jac[:, 0], base)
    np.testing.assert_allclose(jac[:, 1], 1.0)


def test_to_sympy_with_symbols_and_free_names() -> None:
    prog = parse_expression("a*exp(b*t) + c0", ["t"], free_params=True)
    t = sympy.Symbol("t", positive=True)
    expr = prog.to_sympy({"t": t})
    a, b, c0 = sympy.symbols("a b c0")
    assert sympy.simplify(expr - (a * sympy.exp(b * t) + c0)) == 0
    fn = parse_expression("np.where(x > 1, x, -x) + np.maximum(x, v) + np.log10(x)", XV).to_sympy()
    assert fn.has(sympy.Piecewise) and fn.has(sympy.Max)


def test_from_sympy_covers_solver_output() -> None:
    x, v = sympy.symbols("x v")
    expr = sympy.sqrt(x) / (2 * v) - sympy.asin(x / 3) + sympy.log(v**2 + 1) * sympy.pi + sympy.Rational(1, 3)
    prog = Program.from_ir(from_sympy(expr, XV), XV)
    x_, v_ = DATA["x"], DATA["v"]
    want = np.sqrt(x_) / (2 * v_) - np.arcsin(x_ / 3) + np.log(v_**2 + 1) * np.pi + 1 / 3
    np.testing.assert_allclose(prog.evaluate(DATA), want, rtol=1e-12)
    with pytest.raises(Exception) as err:
        from_sympy(sympy.I * x, XV)
    assert getattr(err.value, "kind", None) == "bad_constant"
