"""Symbolic accuracy where a checker over-reads the paper's sentence (issue #48).

LLM-SRBench §2.3 compares the forms "after removing parameters and constants": values of the
hypothesis's constants must exist that make it the ground truth. A constant either side writes is
free; one neither side writes is not invented (docs/srbench.md). So sin is not cos unless a phase
is written, a series is not its function however well it fits a narrow domain, PySR's `x**2.0002`
is `x**2`, and rows on a line decide nothing about forms.

The adversarial pairs (`judge_pairs/adversarial.jsonl`, built by
`data/build_adversarial_pairs.py`, labelled by the rule before the checker changed) are scored
here; their blind third (`adversarial_heldout.jsonl`) only by `lsrb srbench judge-agreement`.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.scoring.agreement import REJECTED, Pair, load_pairs, measure
from pytest_lsrb.srbench.scoring.maximal import Written, maximal_form, written
from pytest_lsrb.srbench.scoring.probes import TRUSTED, rounding_bound
from pytest_lsrb.srbench.scoring.symbolic import SymbolicVerdict, symbolic_match

ADVERSARIAL = load_pairs("adversarial")
CATEGORIES = (
    "function_swap",
    "shift_written",
    "narrow_approximation",
    "narrow_domain",
    "float_exponent",
    "exponent_value",
    "rows_on_line",
    "line_only",
)


def _verdict(truth: str, proposal: str, ranges: dict, line: dict | None = None) -> SymbolicVerdict:
    pair = Pair(truth, proposal, True, "", ranges, line=line or {})
    t = parse_expression(truth, pair.inputs, free_params=True)
    p = parse_expression(proposal, pair.inputs, free_params=True)
    return symbolic_match(p, t, pair.columns())


def test_the_adversarial_set_covers_its_categories_and_holds_out_a_third() -> None:
    held = load_pairs("adversarial_heldout")
    assert len(ADVERSARIAL) + len(held) >= 300
    assert 0.25 <= len(held) / (len(ADVERSARIAL) + len(held)) <= 0.42
    cats = Counter(p.category for p in ADVERSARIAL)
    for cat in CATEGORIES:
        assert cats[cat] >= 8, cats
    assert {p.category for p in held} <= set(CATEGORIES)
    for pair in [*ADVERSARIAL, *held]:  # one label per category, fixed before scoring
        assert pair.label is (pair.category not in REJECTED), pair
    for pair in held:  # the blind third is the fixed hash's, not a choice
        assert hashlib.sha256(f"{pair.truth}\x00{pair.proposal}".encode()).digest()[0] % 3 == 0
    for pair in ADVERSARIAL:
        assert hashlib.sha256(f"{pair.truth}\x00{pair.proposal}".encode()).digest()[0] % 3 != 0
    old = {(p.truth, p.proposal) for name in ("dev", "heldout", "fresh") for p in load_pairs(name)}
    assert not old & {(p.truth, p.proposal) for p in [*ADVERSARIAL, *held]}


THETA = {"theta": (0.1, 1.4)}
SNELL = {"theta1": (0.1, 1.2), "theta2": (0.1, 1.2)}
OSC = {"t": (0.0, 20.0), "x": (-1.5, 1.5), "v": (-1.0, 1.0)}


@pytest.mark.parametrize(
    ("truth", "proposal", "ranges"),
    [
        ("sin(theta1)/sin(theta2)", "cos(theta1)/cos(theta2)", SNELL),
        ("d*n*sin(theta)", "d*n*cos(theta)", {"d": (2.0, 5.0), "n": (1.0, 5.0), "theta": (0.06, 0.64)}),
        ("arcsin(tau/(F*r))", "arccos(tau/(F*r))", {"tau": (0.1, 1.0), "F": (1.0, 2.0), "r": (1.0, 2.0)}),
        ("-x - 0.1*v + 0.3*sin(t)", "c0*x + c1*v + c2*cos(t)", OSC),
        ("sin(theta)*cos(theta)", "c*sin(theta)**2", THETA),
        ("cos(w*t)**2", "cos(w*t)*sin(w*t)", {"w": (0.5, 2.0), "t": (0.0, 10.0)}),
        ("F*sin(2*t)", "c0*cos(c1*t)", {"t": (0.0, 10.0)}),
        ("sinh(x)", "cosh(x)", {"x": (3.0, 6.0)}),
        ("tanh(x)", "x/(1 + abs(x))", {"x": (0.01, 0.3)}),
        ("exp(-x)", "c0*x**c1", {"x": (1.0, 1.1)}),
    ],
)
def test_a_function_for_its_sibling_is_not_the_form(truth: str, proposal: str, ranges: dict) -> None:
    got = _verdict(truth, proposal, ranges)
    assert got.match is False, got


@pytest.mark.parametrize(
    ("truth", "proposal", "ranges"),
    [
        ("F*sin(2*t)", "c0*sin(c1*t + c2)", {"t": (0.0, 10.0)}),
        ("sin(2*t + 0.5)", "cos(2*t)", {"t": (0.0, 10.0)}),
        ("2*pi - arccos(z)", "c0 - arcsin(z)", {"z": (-0.9, 0.9)}),
        ("sin(x)**2 + 0.5", "c0*cos(x)**2 + c1", {"x": (-2.0, 2.0)}),
    ],
)
def test_a_swap_a_written_constant_makes_good_is_the_form(truth: str, proposal: str, ranges: dict) -> None:
    got = _verdict(truth, proposal, ranges)
    assert got.match is True, got


X1 = {"x": (0.01, 0.1)}


@pytest.mark.parametrize(
    ("truth", "proposal", "ranges"),
    [
        ("sin(x)", "x - x**3/6 + x**5/120", X1),
        ("sin(x)", "c0*x + c1*x**3 + c2*x**5 + c3*x**7", X1),
        ("exp(x)", "1 + x + x**2/2 + c0*x**3 + c1*x**4", X1),
        ("1/sqrt(1 - v**2/c**2)", "1 + c0*v**2/c**2 + c1*v**4/c**4", {"v": (1.0, 10.0), "c": (1e3, 3e3)}),
        ("exp(x)", "(c0 + c1*x + c2*x**2)/(1 + c3*x + c4*x**2)", X1),
        ("d*n*sin(theta)", "c0*d*n*theta", {"d": (2.0, 5.0), "n": (1.0, 5.0), "theta": (1e-4, 1e-3)}),
        ("1/(exp(x) - 1)", "exp(-x)", {"x": (20.0, 30.0)}),
        # data far from unit scale, where the forms part only orders of magnitude away (rv48's
        # review: these four were accepted before the unit band of probes)
        ("sqrt(x**2 + 1)", "x + 1/(2*x)", {"x": (1e4, 1.001e4)}),
        ("log(1 + x)", "log(x) + 1/x", {"x": (1e6, 1.001e6)}),
        ("arctan(x)", "pi/2 - 1/x", {"x": (1e8, 1.001e8)}),
        ("sin(x)", "x", {"x": (1e-9, 1.001e-9)}),
    ],
)
def test_an_approximation_accurate_on_a_narrow_domain_is_not_the_form(
    truth: str, proposal: str, ranges: dict
) -> None:
    got = _verdict(truth, proposal, ranges)
    assert got.match is False, got


@pytest.mark.parametrize(
    ("truth", "proposal", "ranges"),
    [
        ("sin(x)", "c0*sin(c1*x)", X1),
        ("1/sqrt(1 - v**2/c**2)", "c0/sqrt(1 + c1*v**2/c**2)", {"v": (1.0, 10.0), "c": (1e3, 3e3)}),
        ("1/(exp(x) - 1)", "c0/(exp(c1*x) + c2)", {"x": (20.0, 30.0)}),
        ("sqrt(x**2 + y**2)", "c0*sqrt(x**2 + c1*y**2)", {"x": (100.0, 200.0), "y": (0.1, 1.0)}),
        # the same truths far from unit scale, written another way: still the form
        ("sqrt(x**2 + 1)", "sqrt(c0 + x**2)", {"x": (1e4, 1.001e4)}),
        ("arctan(x)", "pi/2 - arctan(1/x)", {"x": (1e8, 1.001e8)}),
        ("log(1 + x)", "log(x) + log(1 + 1/x)", {"x": (1e6, 1.001e6)}),
        ("sin(x)", "2*sin(x/2)*cos(x/2)", {"x": (1e-9, 1.001e-9)}),
        ("x*exp(-y/x)", "c0*x*exp(c1*y/x)", {"x": (1e5, 2e5), "y": (1.0, 2.0)}),
    ],
)
def test_the_form_on_a_narrow_domain_is_the_form(truth: str, proposal: str, ranges: dict) -> None:
    got = _verdict(truth, proposal, ranges)
    assert got.match is True, got


@pytest.mark.parametrize(
    ("truth", "proposal", "same"),
    [
        ("A**2", "A**2.0002", True),
        ("A**2*B", "1.0001*A**2.0002*B**0.99995", True),
        ("0.2*A**1.5", "0.2003*A**1.50012", True),
        ("sqrt(A)", "A**0.50031", True),
        ("A**2", "A**2.01", False),  # 0.5 %: another exponent
        ("A**1.5", "A**1.4", False),
    ],
)
def test_exponents_within_a_relative_1e_3_are_one_constant(truth: str, proposal: str, same: bool) -> None:
    got = _verdict(truth, proposal, {"A": (0.5, 3.0), "B": (0.5, 3.0)})
    assert got.match is same, got


LINE = {"T": ("epsilon", 273.0, 500.0)}  # every row on T = 273 + 500*epsilon, as in the release
MATSCI = {"epsilon": (0.01, 0.3), "T": (278.0, 423.0)}


@pytest.mark.parametrize(
    ("proposal", "same"),
    [
        ("c0*epsilon + c1*epsilon**0.224 + c2*epsilon**2*sqrt(T)", True),
        ("c0*epsilon + c1*epsilon**0.224 + c2*epsilon**2*sqrt(500*epsilon + 273)", False),
    ],
)
def test_rows_on_a_line_decide_nothing_about_the_form(proposal: str, same: bool) -> None:
    truth = "136.0*epsilon + 88.3*epsilon**0.224 + 4.09*epsilon**2*sqrt(T)"
    got = _verdict(truth, proposal, MATSCI, LINE)
    assert got.match is same, got


# -- the rule's parts ------------------------------------------------------------------------------


def test_a_constant_is_in_the_form_only_where_a_side_writes_it() -> None:
    prog = parse_expression("x**2 + sin(w*t)", ["x", "w", "t"])
    assert written(prog) == Written(additive=False, phases=frozenset(), exponents=(1.0, 2.0))
    phased = written(parse_expression("x**2 + 1.2 + cos(w*t - 0.3)", ["x", "w", "t"]))
    assert phased.additive and phased.phases == frozenset({frozenset({"w", "t"})})
    # the coefficients and the argument's scale, no offset, no phase
    assert maximal_form(prog).program.n_params == 3
    # an additive constant and a phase the other side writes
    assert maximal_form(prog, other=phased).program.n_params == 5
    # a proposal's exponent within 1e-3 of the truth's is the truth's: one skeleton
    pysr = maximal_form(parse_expression("1.0001*x**2.0009", ["x"]), other=Written(exponents=(1.0, 2.0)))
    assert pysr.skeleton == maximal_form(parse_expression("3*x**2", ["x"])).skeleton


@pytest.mark.parametrize(
    ("truth", "proposal", "same"),
    [
        # a constant term inside an argument is there or not, whichever side writes it (rv48's
        # review: the proposal's was fitted to 0 and the pair accepted)
        ("log(x)", "log(x + 1)", False),
        ("sqrt(x)", "sqrt(x + 1)", False),
        ("log(x)", "log(x + c0)", False),
        ("x*y", "(x + 1)*y", False),
        ("log(1 + x)", "log(c0 + x)", True),
        ("sqrt(1 + x)", "c0*sqrt(c1 + x)", True),
        # ...unless what it adds is a constant the top's free one holds anyway
        ("3*x + 2*(1 - exp(-x))", "c0*x + c1*(1 - exp(c2*x))", True),
        # ...and in an exponential's argument it is a scale (`exp(u + c)` is `e**c * exp(u)`)
        ("x*exp(-y)", "c0*x*exp(c1*y + c2)", True),
    ],
)
def test_a_constant_term_inside_an_argument_is_there_or_not(truth: str, proposal: str, same: bool) -> None:
    got = _verdict(truth, proposal, {"x": (1.0, 5.0), "y": (1.0, 2.0)})
    assert got.match is same, got


def test_rounding_is_bounded_where_a_difference_cancels() -> None:
    x = {"x": np.array([1e-6, 1e-3, 1.0])}
    value, error = rounding_bound(parse_expression("1 - cos(x)", ["x"]), x)
    assert error[0] / value[0] > TRUSTED > error[2] / value[2]  # 1 - cos(1e-6): only rounding left
    value, error = rounding_bound(parse_expression("2*sin(x/2)**2", ["x"]), x)
    assert (error / value < TRUSTED).all()  # the same function, written without the cancellation


# -- laws ------------------------------------------------------------------------------------------

SIBLINGS = [("sin", "cos"), ("cos", "sin"), ("sinh", "cosh"), ("arcsin", "arccos"), ("tanh", "arctan")]
values = st.floats(0.3, 3.0).map(lambda v: round(v, 3))


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(SIBLINGS), values, values, st.floats(0.05, 0.9))
def test_a_function_for_its_sibling_never_matches(
    swap: tuple[str, str], a: float, b: float, hi: float
) -> None:
    f, g = swap
    ranges = {"x": (hi / 10, hi), "y": (0.5, 2.0)}
    got = _verdict(f"{a}*{f}({b}*x)*y", f"c0*{g}(c1*x)*y", ranges)
    assert got.match is False, (swap, a, b, hi, got)


TAYLOR = {
    "sin(x)": "c0*x + c1*x**3 + c2*x**5 + c3*x**7",
    "exp(x)": "c0 + c1*x + c2*x**2 + c3*x**3 + c4*x**4 + c5*x**5",
    "log(1 + x)": "c0*x + c1*x**2 + c2*x**3 + c3*x**4 + c4*x**5",
    "tanh(x)": "c0*x + c1*x**3 + c2*x**5 + c3*x**7",
    "1/sqrt(1 - x**2)": "c0 + c1*x**2 + c2*x**4 + c3*x**6",
}


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(sorted(TAYLOR)), st.floats(-3.0, -1.0))
def test_a_series_never_matches_however_narrow_the_domain(truth: str, log_hi: float) -> None:
    hi = 10**log_hi
    got = _verdict(truth, TAYLOR[truth], {"x": (hi / 10, hi)})
    assert got.match is False, (truth, hi, got)


@settings(max_examples=10, deadline=None)
@given(
    st.sampled_from([2.0, 3.0, 0.5, 1.5, -2.0, 0.333333]),
    st.floats(-9e-4, 9e-4),
    values,
)
def test_an_exponent_a_relative_1e_3_away_is_the_same(exponent: float, shift: float, a: float) -> None:
    got = _verdict(
        f"{a}*x**{exponent}*y", f"c0*x**{exponent * (1 + shift):.6g}*y", {"x": (0.5, 3.0), "y": (1, 2)}
    )
    assert got.match is True, (exponent, shift, got)


@pytest.mark.slow
def test_the_checker_agrees_with_the_adversarial_labels_and_never_accepts_a_wrong_form() -> None:
    report = measure(ADVERSARIAL, "adversarial", ["sympy"])
    print("\n" + "\n".join(report.lines()))
    total = report.judges["sympy"]["all"]
    assert total.false_accepts == 0
    assert total.rate is not None and total.rate >= 0.97
