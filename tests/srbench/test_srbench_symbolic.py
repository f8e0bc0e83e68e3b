"""Symbolic accuracy by the paper's rule, against a labelled set of (ground truth, proposal) pairs.

`data/symbolic_pairs.json` (built by `data/build_symbolic_pairs.py` from hand-written pairs and
the AI-Feynman table; the test needs only the JSON) labels each pair by the rule: the two
families, constants free, are equal. Supersets, subsets and local approximations are `false`.
Every pair is its own test; `test_agreement_by_kind` prints the agreement per kind.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.scoring.symbolic import (
    NOT_APPLICABLE,
    SymbolicVerdict,
    canonical_skeleton,
    promote_constants,
    symbolic_match,
)

DATA = Path(__file__).with_name("data") / "symbolic_pairs.json"
PAIRS: list[dict[str, Any]] = json.loads(DATA.read_text())["pairs"]
FEYNMAN_CSV = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "feynman" / "FeynmanEquations.csv"
)


def _pair_id(i: int) -> str:
    p = PAIRS[i]
    return f"{i:03d}-{p['kind']}-{'eq' if p['equivalent'] else 'ne'}"


@cache
def verdict(i: int, seed: int = 0) -> SymbolicVerdict:
    pair = PAIRS[i]
    names = list(pair["ranges"])
    rng = np.random.default_rng(0)
    cols = {k: rng.uniform(lo, hi, 500) for k, (lo, hi) in pair["ranges"].items()}
    truth = parse_expression(pair["truth"], names, free_params=True)
    proposal = parse_expression(pair["proposal"], names, free_params=True)
    return symbolic_match(proposal, truth, cols, seed=seed)


def test_the_labelled_set_covers_every_kind() -> None:
    kinds = Counter((p["kind"], p["equivalent"]) for p in PAIRS)
    assert len(PAIRS) >= 100
    for kind in ("rewrite", "convention", "scale", "template"):
        assert kinds[(kind, True)] >= 3, kind
    for kind in ("superset", "subset", "approximation", "different"):
        assert kinds[(kind, False)] >= 3, kind
    assert sum(p["source"].startswith("feynman") for p in PAIRS) >= 50


@pytest.mark.parametrize("i", range(len(PAIRS)), ids=_pair_id)
def test_pair(i: int) -> None:
    pair = PAIRS[i]
    got = verdict(i)
    assert got.match is pair["equivalent"], (pair["truth"], pair["proposal"], pair["note"], got)


def test_agreement_by_kind() -> None:
    """The agreement of the checker with the labels, per kind (printed: `pytest -s`)."""
    rows: dict[str, list[int]] = {}
    for i, pair in enumerate(PAIRS):
        row = rows.setdefault(f"{pair['kind']}/{'eq' if pair['equivalent'] else 'ne'}", [0, 0])
        row[0] += verdict(i).match is pair["equivalent"]
        row[1] += 1
    agree = sum(a for a, _ in rows.values())
    print(f"\nsymbolic accuracy rule: {agree}/{len(PAIRS)} pairs agree with their label")
    for kind, (a, n) in sorted(rows.items()):
        print(f"  {kind:<18} {a}/{n}")
    methods = Counter(verdict(i).method for i in range(len(PAIRS)))
    print(f"  verdicts by method: {dict(sorted(methods.items()))}")
    assert {"structure", "family", "no_match"} <= set(methods)
    assert agree == len(PAIRS)


@pytest.mark.skipif(not FEYNMAN_CSV.is_file(), reason="../shared/data/feynman is absent")
def test_the_json_is_what_the_builder_writes(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_pairs", DATA.with_name("build_symbolic_pairs.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = [
        dict(truth=t, proposal=p, ranges=r, equivalent=e, kind=k, note=n, source="hand")
        for t, p, r, e, k, n in module.HAND
    ] + module.feynman_pairs(FEYNMAN_CSV)
    assert json.loads(json.dumps(built)) == PAIRS


def test_verdicts_are_deterministic() -> None:
    for i in range(0, len(PAIRS), 17):
        assert verdict.__wrapped__(i).record() == verdict(i).record()


def test_not_applicable_and_missing_proposal() -> None:
    prop = parse_expression("a*x", ["x"], free_params=True)
    assert symbolic_match(prop, None, {"x": np.ones(3)}) == NOT_APPLICABLE
    truth = parse_expression("2*x", ["x"])
    got = symbolic_match(None, truth, {"x": np.linspace(1, 2, 20)})
    assert got.match is False and got.method == "no_proposal"
    assert NOT_APPLICABLE.record()["symbolic_match"] is None


def _find(note: str) -> int:
    return next(i for i, p in enumerate(PAIRS) if p["note"] == note)


def test_a_narrow_range_approximation_fits_inside_and_is_caught_outside() -> None:
    got = verdict(_find("Taylor fit to 1e-9 inside a narrow range: only the wider probe tells"))
    assert got.match is False and got.residual is not None and got.residual < 1e-7
    assert "outside" in got.detail


def test_a_superset_is_named_as_one() -> None:
    got = verdict(_find("extra term, zero at best fit"))
    assert got.match is False and "superset" in got.detail


def test_tanh_matches_its_exponential_form_where_exp_overflows() -> None:
    got = verdict(_find("tanh definition where the far probe overflows exp"))
    # (data on [-40, 40]: the far probe reaches |x| = 840, where exp(x) overflows to inf and the
    # ratio to nan; those points are left out, the rest agree)
    assert got.match is True


def test_template_truth_is_decided_with_params_fitted_to_data() -> None:
    rng = np.random.default_rng(1)
    cols = {k: rng.uniform(-1.5, 1.5, 300) for k in ("t", "x", "v")}
    y = 0.7 * np.sin(cols["t"]) - 2.1**2 * cols["x"] - 0.3 * cols["v"]
    truth = parse_expression("F0*sin(t) - omega0**2*x - beta*v", ["t", "x", "v"], free_params=True)
    form = parse_expression("c0*sin(t) + c1*x + c2*v", ["t", "x", "v"], free_params=True)
    extra = parse_expression("c0*sin(t) + c1*x + c2*v + c3*v**3", ["t", "x", "v"], free_params=True)
    assert symbolic_match(form, truth, cols, target=y, params=[0.7, -4.41, -0.3]).match is True
    assert symbolic_match(extra, truth, cols, target=y).match is False


@pytest.mark.parametrize(
    ("text", "promoted"),
    [
        ("2.5*x + 1", 1),  # 2.5 becomes a constant; 1 stays
        ("x**6 + 0.3", 1),  # the exponent 6 is structural
        ("x**2.7", 1),
        ("2*x", 1),  # every number but 0 and ±1 is a constant
        ("(exp(2*a*x) - 1)/(exp(2*a*x) + 1)", 1),  # one subexpression written twice: one constant
        ("0.5*x**2 + 0.5*x", 2),  # equal values in different terms: two constants
    ],
)
def test_literals_become_constants(text: str, promoted: int) -> None:
    prog = parse_expression(text, ["x"], free_params=True)
    new, literals = promote_constants(prog)
    assert len(literals) == promoted and new.n_params == prog.n_params + promoted


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("3.14159*x**2", "pi*x**2"),
        ("-2*c0*c1*x + 4", "k*x + m"),
        ("exp(c0*x + c1)", "c2*exp(c3*x)"),
        ("(x + c0)**2", "x**2 + 2*c0*x + c0**2"),
    ],
)
def test_canonical_skeletons_fold_signs_products_and_powers_of_constants(a: str, b: str) -> None:
    pa = parse_expression(a, ["x"], free_params=True)
    pb = parse_expression(b, ["x"], free_params=True)
    assert canonical_skeleton(pa, ["x"]) == canonical_skeleton(pb, ["x"])


# -- the overall-factor rule (--lsrb-sr-sa-scale) --------------------------------------------------


def _scale_verdict(truth: str, proposal: str, scale: str) -> SymbolicVerdict:
    names = ["E", "g", "z"]
    rng = np.random.default_rng(3)
    cols = {k: rng.uniform(0.5, 3.0, 300) for k in names}
    t = parse_expression(truth, names, free_params=True)
    p = parse_expression(proposal, names, free_params=True)
    return symbolic_match(p, t, cols, scale=scale)


@pytest.mark.parametrize(
    ("truth", "proposal", "free", "strict"),
    [
        # A constant-free truth (llm-srbench's skeletons come without constants) and a fitted scale:
        # one form after removing constants (free); a larger family than the truth's (strict).
        ("E/(g*z)", "c*E/(g*z)", True, False),
        ("E/(g*z)", "0.5*E/(g*z)", True, False),
        # The truth writes a constant: both readings free it, so the scaled answer is its form.
        ("4*E/(g*z)", "c*E/(g*z)", True, True),
        # Equal as written: equal under both.
        ("E/(g*z)", "E/g/z", True, True),
        # Never a match: a free offset, or a superset.
        ("E/(g*z)", "E/(g*z) + c", False, False),
        ("E/(g*z)", "c0*E/(g*z) + c1*E", False, False),
    ],
)
def test_the_overall_factor_is_free_by_default_and_fixed_when_strict(
    truth: str, proposal: str, free: bool, strict: bool
) -> None:
    assert _scale_verdict(truth, proposal, "free").match is free
    assert (
        symbolic_match(
            parse_expression(proposal, ["E", "g", "z"], free_params=True),
            parse_expression(truth, ["E", "g", "z"], free_params=True),
            {k: np.random.default_rng(3).uniform(0.5, 3.0, 300) for k in ["E", "g", "z"]},
        ).match
        is free
    )  # free is the default
    assert _scale_verdict(truth, proposal, "strict").match is strict


def test_an_unknown_scale_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="scale"):
        _scale_verdict("E/(g*z)", "E/(g*z)", "loose")
