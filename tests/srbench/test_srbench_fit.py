"""fit_program: the policies' common behaviour (caps, invalid candidates), the fast policy's closed
form and the enhanced policy's extras (least squares, seeded restarts). The reference policy is
compared with scipy's call as the reference writes it in test_srbench_fit_reference.py."""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from pytest_lsrb.equations import parse_equation
from pytest_lsrb.srbench.fitting.fit import FitLimits, fit_program
from pytest_lsrb.srbench.fitting.objective import FitPolicy

ENHANCED = FitLimits(policy="enhanced")
FAST = FitLimits(policy="fast")


def _data(n: int = 400, seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n)
    v = rng.uniform(-1.0, 1.0, n)
    y = 2.5 * np.exp(-1.3 * x) + 0.7 * v * x - 0.4
    return {"x": x, "v": v}, y


def test_nonlinear_skeleton_recovers_the_generating_constants() -> None:
    X, y = _data()
    program = parse_equation(
        "def f(x, v, params):\n    return params[0]*np.exp(-params[1]*x) + params[2]*v*x + params[3]",
        ["x", "v"],
    )
    result = fit_program(program, X, y, seed=0)
    assert result.method == "bfgs" and result.status == "ok"
    assert result.nmse < 1e-10
    np.testing.assert_allclose(result.params, [2.5, 1.3, 0.7, -0.4], rtol=1e-3)
    assert result.score == pytest.approx(-result.mse)


def test_enhanced_solves_a_linear_skeleton_by_least_squares() -> None:
    X, y = _data()
    program = parse_equation("c0*x + c1*v + c2*x**2 + c3", ["x", "v"])
    result = fit_program(program, X, y, limits=ENHANCED)
    assert result.method == "lstsq"
    design = np.column_stack([X["x"], X["v"], X["x"] ** 2, np.ones_like(y)])
    expected, *_ = np.linalg.lstsq(design, y, rcond=None)
    np.testing.assert_allclose(result.params, expected, rtol=1e-8, atol=1e-10)
    # The optimum: BFGS from the same skeleton cannot do better.
    nonlinear = parse_equation("c0*x + c1*v + c2*x**2 + c3 + 0*exp(c4)", ["x", "v"])
    assert fit_program(nonlinear, X, y, limits=ENHANCED).mse >= result.mse * (1 - 1e-9)
    # The fast policy lands where BFGS from all-ones converges, in closed form: the same optimum.
    fast = fit_program(program, X, y, limits=FAST)
    assert fast.method == "lstsq" and fast.mse <= result.mse * (1 + 1e-12)
    # The reference's numerical-gradient BFGS stops at scipy's gradient test, just above it.
    reference = fit_program(program, X, y)
    assert reference.method == "bfgs" and result.mse * (1 - 1e-12) <= reference.mse <= result.mse * (1 + 1e-6)


def test_unused_parameter_slots_do_not_break_least_squares() -> None:
    # LLM-SR's own starting skeleton skips params[2].
    X, y = _data()
    program = parse_equation(
        "def f(x, v, params):\n    return params[0]*x + params[1]*v + params[3]", ["x", "v"]
    )
    for limits in (ENHANCED, FAST, FitLimits()):
        result = fit_program(program, X, y, limits=limits)
        assert result.valid and len(result.params) == 4
        if limits.policy != "enhanced":
            assert result.params[2] == 1.0  # BFGS from all-ones never moves an unused parameter


def test_a_linear_skeleton_lands_where_bfgs_from_ones_converges() -> None:
    # Redundant parameters (params[0]*x + params[1]*x): many minimisers; BFGS from all-ones moves
    # only along the gradient's row space, so it ends at the minimiser nearest to all-ones.
    from scipy.optimize import minimize

    X, y = _data()
    program = parse_equation(
        "def f(x, v, params):\n    return params[0]*x + params[1]*x + params[2]*v*x + params[3]", ["x", "v"]
    )
    ours = fit_program(program, X, y, limits=FAST)
    bound = program.bind(X)

    def loss_and_grad(p: np.ndarray) -> tuple[float, np.ndarray]:
        yhat, jac = bound.value_and_jacobian(p)
        r = yhat - y
        return float(r @ r) / len(y), (2.0 / len(y)) * (jac.T @ r)

    bfgs = minimize(loss_and_grad, np.ones(4), jac=True, method="BFGS", options={"gtol": 1e-12})
    assert ours.method == "lstsq" and ours.mse <= float(bfgs.fun) * (1 + 1e-9)
    np.testing.assert_allclose(ours.params, bfgs.x, rtol=1e-6, atol=1e-8)
    assert ours.params[0] == pytest.approx(ours.params[1])  # split evenly, as BFGS splits it


def test_an_equation_that_is_never_finite_is_invalid() -> None:
    X, y = _data()
    program = parse_equation("c0*log(c1*x - 100)", ["x", "v"])
    result = fit_program(program, X, y)
    assert not result.valid
    assert result.status == "nonfinite" and result.mse == math.inf and result.score == -math.inf
    assert result.as_record()["train_mse"] is None


@pytest.mark.parametrize("limits", [FitLimits(), FAST, ENHANCED], ids=["reference", "fast", "enhanced"])
def test_non_finite_rows_are_not_dropped(limits: FitLimits) -> None:
    # sqrt(x) is nan on the negative half of the rows: the candidate is invalid, not fitted on
    # the other half (the reference's loss is nan there too).
    X, y = _data()
    program = parse_equation("c0*sqrt(x) + c1", ["x", "v"])
    assert not fit_program(program, X, y, limits=limits).valid


def test_a_parameter_free_equation_is_just_scored() -> None:
    X, y = _data()
    program = parse_equation("2.5*exp(-1.3*x) + 0.7*v*x - 0.4", ["x", "v"])
    result = fit_program(program, X, y)
    assert result.method == "none" and result.params == () and result.mse < 1e-20


def test_time_cap_stops_inside_the_objective() -> None:
    X, y = _data()
    program = parse_equation("c0*exp(-c1*x) + c2*sin(c3*v)", ["x", "v"])
    result = fit_program(program, X, y, limits=FitLimits(time_limit_s=0.0))
    assert result.status == "time_limit" and not result.valid
    past = fit_program(program, X, y, deadline=0.0)  # a run deadline already passed
    assert past.status == "time_limit"


class _TickingClock:
    """A clock that moves one second per reading: a fit then reaches any cap after a known number
    of objective evaluations, on any machine."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("policy", ["reference", "fast", "enhanced"])
def test_a_fit_that_reaches_its_own_cap_is_invalid_as_the_reference_scores_it(
    policy: FitPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LLM-SR's evaluator registers no score for a program past `evaluate_timeout_seconds`, whatever
    # its loss so far; a run's own deadline (ours) ends the fit with its best point kept
    X, y = _data()
    program = parse_equation("c0*exp(-c1*x) + c2*sin(c3*v)", ["x", "v"])
    monkeypatch.setattr(time, "perf_counter", _TickingClock())
    capped = fit_program(program, X, y, limits=FitLimits(policy=policy, time_limit_s=6.0))
    assert capped.status == "time_limit" and not capped.valid and capped.evaluations >= 1
    assert "cap" in capped.message
    clock = _TickingClock()
    monkeypatch.setattr(time, "perf_counter", clock)
    cut = fit_program(
        program, X, y, limits=FitLimits(policy=policy, time_limit_s=1e9), deadline=clock.now + 7.0
    )
    assert cut.status == "time_limit" and cut.valid and math.isfinite(cut.mse)


def test_evaluation_cap_keeps_the_best_point_so_far() -> None:
    X, y = _data()
    program = parse_equation("c0*exp(-c1*x) + c2*v*x + c3", ["x", "v"])
    capped = fit_program(program, X, y, limits=FitLimits(max_evals=4))
    assert capped.status == "eval_limit" and capped.valid
    full = fit_program(program, X, y)
    assert full.mse < capped.mse


def test_same_seed_same_fit_even_from_parallel_threads() -> None:
    X, y = _data(seed=3)
    program = parse_equation("c0*sin(c1*x) + c2*exp(c3*v)", ["x", "v"])
    sequential = [fit_program(program, X, y, seed=s, limits=ENHANCED) for s in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda s: fit_program(program, X, y, seed=s, limits=ENHANCED), range(4)))
    for a, b in zip(sequential, parallel, strict=True):
        assert a.params == b.params and a.mse == b.mse


def test_seeded_restarts_escape_the_all_ones_local_minimum() -> None:
    # sin(k*x) with k = 4: from k = 1 BFGS settles in a poor local minimum. Extra starts, drawn
    # from the seed and screened on a row subset, find the right basin for some seeds and never
    # make the fit worse.
    rng = np.random.default_rng(1)
    x = rng.uniform(-3.0, 3.0, 2000)
    y = 1.5 * np.sin(4.0 * x)
    program = parse_equation("c0*sin(c1*x)", ["x"])
    one_start = fit_program(program, {"x": x}, y, limits=FitLimits(policy="enhanced", restarts=0))
    assert fit_program(program, {"x": x}, y).nmse > 0.5  # the reference policy: one start too
    assert one_start.nmse > 0.5
    with_restarts = [
        fit_program(program, {"x": x}, y, seed=s, limits=FitLimits(policy="enhanced", restarts=4))
        for s in range(10)
    ]
    assert sum(r.nmse < 1e-6 for r in with_restarts) >= 2
    assert all(r.nmse <= one_start.nmse for r in with_restarts)
    assert max(r.starts for r in with_restarts) == 2  # only the most promising start is polished
