"""The model-free symbolic checker against a labelled set of equivalent / non-equivalent pairs."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.symbolic import NOT_APPLICABLE, SymbolicVerdict, promote_constants, symbolic_match

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
