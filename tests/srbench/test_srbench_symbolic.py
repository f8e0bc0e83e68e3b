"""The model-free symbolic checker against a labelled set of equivalent / non-equivalent pairs."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.scoring.symbolic import (
    NOT_APPLICABLE,
    SymbolicVerdict,
    promote_constants,
    symbolic_match,
)

sys.path.insert(0, str(Path(__file__).parent))
from symbolic_pairs import PAIRS, Pair

MIN_AGREEMENT = 0.95


def _verdict(pair: Pair, seed: int = 0) -> SymbolicVerdict:
    names = list(pair.ranges)
    rng = np.random.default_rng(0)
    cols = {k: rng.uniform(lo, hi, 500) for k, (lo, hi) in pair.ranges.items()}
    truth = parse_expression(pair.truth, names)
    proposal = parse_expression(pair.proposal, names, free_params=True)
    return symbolic_match(proposal, truth, cols, seed=seed)


def test_labelled_set_agreement() -> None:
    assert len(PAIRS) >= 60
    labels = Counter(p.equivalent for p in PAIRS)
    assert labels[True] >= 25 and labels[False] >= 25
    verdicts = [_verdict(p) for p in PAIRS]
    agree = [v.match == p.equivalent for v, p in zip(verdicts, PAIRS, strict=True)]
    rate = sum(agree) / len(PAIRS)
    methods = Counter(v.method for v in verdicts)
    print(
        f"\nsymbolic checker: agreement {sum(agree)}/{len(PAIRS)} = {rate:.3f}; "
        f"verdicts by method {dict(sorted(methods.items()))}"
    )
    for ok, p, v in zip(agree, PAIRS, verdicts, strict=True):
        if not ok:
            print(f"  disagrees: {p.note}: {p.truth} vs {p.proposal} -> {v}")
    assert rate >= MIN_AGREEMENT
    # The labelled set exercises every route: structure, refit (with and without sympy), no match.
    assert {"structure", "refit+sympy", "refit+numeric", "no_match"} <= set(methods)


def test_verdicts_are_deterministic() -> None:
    for pair in PAIRS[::7]:
        assert _verdict(pair) == _verdict(pair)


def test_not_applicable_and_missing_proposal() -> None:
    prop = parse_expression("a*x", ["x"], free_params=True)
    assert symbolic_match(prop, None, {"x": np.ones(3)}) == NOT_APPLICABLE
    truth = parse_expression("2*x", ["x"])
    verdict = symbolic_match(None, truth, {"x": np.linspace(1, 2, 20)})
    assert verdict.match is False and verdict.method == "no_proposal"
    assert NOT_APPLICABLE.record()["symbolic_match"] is None


def test_wider_probe_catches_an_in_range_approximation() -> None:
    narrow = next(p for p in PAIRS if p.note.startswith("Taylor fit to 1e-9"))
    verdict = _verdict(narrow)
    assert verdict.match is False
    assert verdict.residual is not None and verdict.residual < 1e-7  # it fits inside the data...
    assert "outside the data" in verdict.detail  # ...and is caught outside


@pytest.mark.parametrize(
    ("text", "promoted"),
    [
        ("2.5*x + 1", "2"),  # 2.5 becomes a parameter; 1 stays
        ("x**6 + 0.3", "2"),  # the exponent 6 is structural
        ("x**2.7", "2"),
    ],
)
def test_literals_become_constants(text: str, promoted: str) -> None:
    prog = parse_expression(text, ["x"], free_params=True)
    new, literals = promote_constants(prog)
    assert new.n_params == int(promoted) - 1 + prog.n_params
    assert len(literals) == new.n_params - prog.n_params


TRAPS = [
    ("sin(x)", "x - x**3/6 + x**5/120", {"x": (0.01, 0.1)}),
    (
        "m/sqrt(1 - v**2/c**2)",
        "m*(1 + v**2/(2*c**2) + 3*v**4/(8*c**4))",
        {"m": (1, 5), "v": (1, 10), "c": (300, 1000)},
    ),
    ("exp(x)", "1 + x + x**2/2 + x**3/6", {"x": (0.001, 0.01)}),
    ("1/(1-x)", "1 + x + x**2 + x**3", {"x": (0.001, 0.01)}),
]
SMALL_RANGE_IDENTITIES = [
    ("sin(2*x)", "2*sin(x)*cos(x)", {"x": (0.01, 0.1)}),
    ("m/sqrt(1 - v**2/c**2)", "m*c/sqrt(c**2 - v**2)", {"m": (1, 5), "v": (1, 10), "c": (300, 1000)}),
]


@pytest.mark.parametrize(("truth", "proposal", "ranges"), TRAPS + SMALL_RANGE_IDENTITIES)
def test_truncated_series_on_a_small_range_are_not_identities(
    truth: str, proposal: str, ranges: dict
) -> None:
    """A series that fits the data to 1e-11 is still not the function: the far probe (each variable
    up to 10x its data's magnitude) tells them apart; true identities still agree there."""
    rng = np.random.default_rng(0)
    columns = {k: rng.uniform(lo, hi, 500) for k, (lo, hi) in ranges.items()}
    names = list(ranges)
    verdict = symbolic_match(
        parse_expression(proposal, names, free_params=True), parse_expression(truth, names), columns
    )
    assert verdict.match is ((truth, proposal, ranges) in SMALL_RANGE_IDENTITIES), verdict
