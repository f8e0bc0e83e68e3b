"""The generators' filters: symmetric renamings deduplicated, model-free-solvable problems dropped,
the Feynman complexity distribution matched (LSR-Transform); a solvability check that rejects,
OOD splits with the stated spread (LSR-Synth); generated names never official ids."""

from __future__ import annotations

import re
from collections import Counter
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.data.precision import stored_split
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, Problem
from pytest_lsrb.srbench.generate.complexity import match_distribution, source_bins
from pytest_lsrb.srbench.generate.feynman import read_feynman_csv
from pytest_lsrb.srbench.generate.model_free import SOLVED_NMSE, model_free_nmse, solved_without_model
from pytest_lsrb.srbench.generate.sweep import SWEEPS
from pytest_lsrb.srbench.generate.symmetry import orbit_representatives, symmetries
from pytest_lsrb.srbench.generate.synth import (
    MIN_OOD_OUTSIDE,
    MIN_OOD_SPREAD,
    candidate_data,
    generate_synth,
    ode_data,
    ood_outside_share,
)
from pytest_lsrb.srbench.generate.terms import DOMAINS
from pytest_lsrb.srbench.generate.transform import generate_transform

FEYNMAN = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "feynman" / "FeynmanEquations.csv"
# Official ids: the release's LSR-Synth names and AI-Feynman-based LSR-Transform names.
OFFICIAL_ID = re.compile(r"(CRK|BPG|PO|MatSci)\d+|[IV]+\.\d+(\.\d+)?[a-z]?(_\d+_\d+)?")


@pytest.fixture(scope="module")
def feynman_csv() -> Path:
    if not FEYNMAN.is_file():
        pytest.skip(f"the AI-Feynman table is not present at {FEYNMAN}")
    return FEYNMAN


@pytest.fixture(scope="module")
def table(feynman_csv: Path) -> dict[str, object]:
    return {eq.name: eq for eq in read_feynman_csv(feynman_csv)}


def test_found_symmetries_are_identities_for_sympy(table: dict) -> None:
    found = 0
    for eq in table.values():
        program = eq.program()
        syms = {n: sympy.Symbol(n, positive=True) for n in eq.names}
        expr = program.to_sympy(syms)
        for renaming in symmetries(program, {v.name: (v.low, v.high) for v in eq.variables}):
            swapped = expr.xreplace({syms[a]: syms[b] for a, b in renaming.items()})
            assert sympy.simplify(swapped - expr) == 0, (eq.name, renaming)
            found += 1
    assert found >= 70


def test_orbits_of_known_equations(table: dict) -> None:
    def orbits(name: str) -> dict[str, str]:
        eq = table[name]
        return orbit_representatives(eq.program(), {v.name: (v.low, v.high) for v in eq.variables})

    assert orbits("I.12.2")["q2"] == "q1" and orbits("I.12.2")["r"] == "r"
    # x1*y1 + x2*y2 + x3*y3: swapping pairs of pairs joins all six inputs in one orbit.
    assert set(orbits("I.11.19").values()) == {"x1"}
    assert all(k == v for k, v in orbits("I.10.7").items())  # m_0, v, c play different roles


def _same_up_to_renaming(dropped: Problem, kept: Problem) -> bool:
    """Whether some renaming of kept's inputs onto dropped's makes kept's ground truth give
    dropped's targets on dropped's data (brute force over permutations: the reference)."""
    truth = kept.ground_truth()
    assert truth is not None
    X, y = dropped.columns("train")
    if kept.inputs[0] != dropped.inputs[0]:  # the original output stays the first input
        return False
    for perm in permutations(dropped.inputs[1:]):
        cols = {kept.inputs[0]: X[dropped.inputs[0]]}
        cols.update(zip(kept.inputs[1:], (X[n] for n in perm), strict=True))
        with np.errstate(all="ignore"):
            pred = truth.evaluate(cols)
        if np.allclose(pred, y, rtol=1e-9, atol=0):
            return True
    return False


def test_dedupe_drops_only_renamings_of_kept_problems(feynman_csv: Path) -> None:
    subset = ["I.12.2", "I.11.19", "I.18.12", "II.11.3", "I.10.7"]
    common = {"seed": 1, "n_train": 40, "n_test": 10, "equations": subset, "drop_model_free": False}
    full = generate_transform(feynman_csv, dedupe=False, **common)
    kept = generate_transform(feynman_csv, **common)
    kept_names = {p.name for p in kept.problems}
    dropped = [p for p in full.problems if p.name not in kept_names]
    assert {p.name for p in dropped} >= {"gen-I.12.2_1_0", "gen-I.11.19_3_0"}  # q2, y1
    assert kept.skipped["symmetric_renaming"] > 0
    for d in dropped:
        equation = d.name.rsplit("_", 2)[0]
        same = [k for k in kept.problems if k.name.rsplit("_", 2)[0] == equation]
        assert any(_same_up_to_renaming(d, k) for k in same), d.name
    for k in kept.problems:  # nothing kept is a renaming of another kept problem
        equation = k.name.rsplit("_", 2)[0]
        others = [o for o in kept.problems if o is not k and o.name.rsplit("_", 2)[0] == equation]
        assert not any(_same_up_to_renaming(k, o) for o in others), k.name


def test_model_free_fits() -> None:
    rng = np.random.default_rng(0)

    def split(f):
        X = rng.uniform(1.0, 5.0, (200, 2))
        return np.column_stack([f(X[:, 0], X[:, 1]), X])

    power = split(lambda a, b: -3.0 * a**2 / np.sqrt(b))
    assert model_free_nmse(power[:150], power[150:])["power_law"] < 1e-20
    assert solved_without_model(power[:150], power[150:]) == "power_law"
    linear = split(lambda a, b: 2.0 * a - b + 7.0)
    assert solved_without_model(linear[:150], linear[150:]) == "linear"
    hard = split(lambda a, b: a * np.sqrt(1.0 - (b / 6.0) ** 2))  # I.10.7's shape: NMSE ~1e-3
    nmse = model_free_nmse(hard[:150], hard[150:])
    assert min(nmse.values()) > 1e3 * SOLVED_NMSE and solved_without_model(hard[:150], hard[150:]) is None
    mixed_sign = split(lambda a, b: a - b)
    assert "power_law" not in model_free_nmse(mixed_sign[:150], mixed_sign[150:])


def test_complexity_match_keeps_the_sources_shares() -> None:
    source = [3] * 25 + [8] * 25 + [12] * 25 + [20] * 25
    bins = source_bins(source)
    assert bins.shares == (0.25, 0.25, 0.25, 0.25)
    sizes = [3] * 10 + [8] * 40 + [12] * 7 + [20] * 90
    groups = [f"eq{i % 13}" for i in range(len(sizes))]
    keep = match_distribution(sizes, groups, bins, seed=0)
    counts = Counter(bins.bin_of(sizes[i]) for i in keep)
    assert counts == {0: 7, 1: 7, 2: 7, 3: 7}  # the scarcest bin (7) decides
    assert keep == match_distribution(sizes, groups, bins, seed=0)


@given(
    source=st.lists(st.integers(1, 40), min_size=4, max_size=60),
    candidates=st.lists(st.tuples(st.integers(1, 40), st.integers(0, 5)), max_size=80),
)
def test_complexity_match_laws(source: list[int], candidates: list[tuple[int, int]]) -> None:
    bins = source_bins(source)
    assert sum(bins.shares) == pytest.approx(1.0)
    sizes = [size for size, _ in candidates]
    groups = [f"eq{g}" for _, g in candidates]
    keep = match_distribution(sizes, groups, bins, seed=3)
    assert keep == sorted(set(keep)) and keep == match_distribution(sizes, groups, bins, seed=3)
    supply = Counter(bins.bin_of(s) for s in sizes)
    kept = Counter(bins.bin_of(sizes[i]) for i in keep)
    used = [share for share in bins.shares if share > 0]
    total = min(supply[b] / share for b, share in enumerate(bins.shares) if share > 0) if used else 0
    for b, share in enumerate(bins.shares):
        assert kept[b] == min(supply[b], round(total * share))  # the source's share of the total
    # Within a bin, no equation gets a second problem while another of its candidates waits.
    for b in kept:
        per_group = Counter(groups[i] for i in keep if bins.bin_of(sizes[i]) == b)
        waiting = {groups[i] for i in range(len(sizes)) if bins.bin_of(sizes[i]) == b and i not in keep}
        if waiting:
            assert max(per_group.values(), default=0) <= min(per_group.get(g, 0) for g in waiting) + 1


def test_whole_table_counts_and_filters(feynman_csv: Path) -> None:
    from pytest_lsrb.srbench.generate.default_set import SEED, TRANSFORM_PROBLEMS

    rep = generate_transform(feynman_csv, seed=SEED, n_train=60, n_test=30)
    # The built-in set's LSR-Transform problems are ones the whole filtered set keeps.
    assert set(TRANSFORM_PROBLEMS) <= {p.name for p in rep.problems}
    stages = rep.summary()["stages"]
    assert stages["built"] >= stages["after_model_free"] >= stages["after_complexity_match"]
    assert stages["after_complexity_match"] == len(rep.problems)
    assert rep.skipped["symmetric_renaming"] > 0 and rep.skipped["model_free_power_law"] > 0
    assert 60 <= len(rep.problems) <= 150  # the paper: 111
    for p in rep.problems:
        assert p.name.startswith(GENERATED_PREFIX) and not OFFICIAL_ID.fullmatch(p.name)
        assert solved_without_model(p.train, p.test) is None
    # The kept set's size distribution is the source's, to rounding (one problem per bin).
    sizes = [eq.program().node_count for eq in read_feynman_csv(feynman_csv)]
    bins = source_bins(sizes)
    truths = [p.ground_truth() for p in rep.problems]
    counts = Counter(bins.bin_of(t.node_count) for t in truths if t is not None)
    n = len(rep.problems)
    for b, share in enumerate(bins.shares):
        assert abs(counts[b] - share * n) <= 1.0, (b, counts, bins.shares)


@pytest.mark.parametrize(
    ("domain", "text", "reason"),
    [
        ("chem_react", "A**2", "state_unbounded"),  # from A = 1, blows up at t = 1
        ("chem_react", "-log(A - 3)", "rate_not_finite"),  # log of a negative number
        ("chem_react", "-1e4*(A - 1)", "stiff"),  # relaxes in 1e-4 of a time unit
        ("chem_react", "-0.1*A + 0.01*sin(1000*t)", "integration_budget"),  # 160 periods per time unit
        ("bio_pop_growth", "P**1.5", "state_unbounded"),  # from P = 1 at t = 1, blows up at t = 3
    ],
)
def test_the_solvability_check_rejects(domain: str, text: str, reason: str) -> None:
    spec = DOMAINS[domain]
    program = parse_expression(text, list(spec.symbols[1:]))
    assert ode_data(spec, SWEEPS[domain], program, 100, 50) == reason


def test_the_solvability_check_accepts_a_plain_decay() -> None:
    spec = DOMAINS["chem_react"]
    program = parse_expression("-0.1*A", list(spec.symbols[1:]))
    data = ode_data(spec, SWEEPS["chem_react"], program, 100, 50)
    assert not isinstance(data, str)


def test_a_population_at_capacity_has_no_ood_spread() -> None:
    spec = DOMAINS["bio_pop_growth"]
    program = parse_expression("3*P*(1 - P/100)", list(spec.symbols[1:]))  # at K by t = 4
    assert candidate_data(spec, SWEEPS["bio_pop_growth"], program, 100, 50) == "ood_degenerate"


@pytest.mark.parametrize("domain", list(DOMAINS))
def test_synth_problems_have_the_stated_ood_spread_and_generated_names(domain: str) -> None:
    rep = generate_synth(domain, count=6, seed=0, n_train=60, n_test=20, n_ood=30)
    assert len(rep.problems) == 6
    for p in rep.problems:
        assert p.name.startswith(GENERATED_PREFIX) and not OFFICIAL_ID.fullmatch(p.name)
        assert OFFICIAL_ID.fullmatch(p.name.removeprefix(GENERATED_PREFIX))  # the release's shape
        truth = p.ground_truth()
        assert truth is not None and p.ood_test is not None
        ood = stored_split(p.ood_test, truth)[:, 0]
        in_domain = stored_split(np.concatenate([p.train, p.test]), truth)[:, 0]
        assert np.var(ood) >= MIN_OOD_SPREAD * np.var(in_domain)
        # OOD for the equation: most OOD rows leave the in-domain range of an input it uses
        box = np.concatenate([p.train, p.test])
        used = [i + 1 for i, v in enumerate(p.inputs) if v in truth.used_variables]
        outside = (p.ood_test[:, used] < box[:, used].min(0)) | (p.ood_test[:, used] > box[:, used].max(0))
        assert outside.any(axis=1).mean() >= MIN_OOD_OUTSIDE, p.name


def test_oscillator_ood_must_be_new_inputs_for_the_equation() -> None:
    # The release's physics OOD is the trajectory's last tenth (t from 36 of 0..40): a driven
    # oscillator's OOD rows are new inputs to it (t leaves its range); a free one, damped or not,
    # swings inside its earlier x-v box there, so its OOD test would be interpolation: rejected.
    spec, sweep = DOMAINS["phys_osc"], SWEEPS["phys_osc"]
    symbols = list(spec.symbols[1:])
    driven = parse_expression("-2.0*x - 0.3*v + 0.8*sin(0.5*t)", symbols)
    data = candidate_data(spec, sweep, driven, 100, 50)
    assert not isinstance(data, str)
    assert ood_outside_share(data[0], data[1], symbols, driven) == 1.0
    for text in ("-2.0*x - 0.3*v", "-2.0*x"):
        free = parse_expression(text, symbols)
        assert candidate_data(spec, sweep, free, 100, 50) == "ood_interpolation", text
        tables = ode_data(spec, sweep, free, 100, 50)
        assert not isinstance(tables, str)
        assert ood_outside_share(tables[0], tables[1], symbols, free) < MIN_OOD_OUTSIDE


def test_builtin_ood_targets_vary() -> None:
    from pytest_lsrb.srbench.data.loaders import load_problems

    suite = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench" / "index.jsonl"
    for p in load_problems(suite):
        assert p.name.startswith(GENERATED_PREFIX)
        if p.ood_test is not None:
            spread = np.var(p.ood_test[:, 0]) / np.var(np.concatenate([p.train, p.test])[:, 0])
            assert spread >= MIN_OOD_SPREAD, p.name
