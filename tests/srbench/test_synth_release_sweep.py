"""LSR-Synth OOD splits built as the official release builds them (issue #40 item 5).

The release's numbers below are read off its rows as mirrored at github.com/jiaruisu0218-cloud/STRIDE
(commit 9d1ca636), `data/benchmark_dr/lsr_synth/<domain>/<name>/{train,test_id,test_ood}.csv`, five
problems per domain; each line of `RELEASE` holds in all five (see generate/sweep.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.generate.sweep import OOD_FRACTION, SWEEPS, sweep_columns, sweep_fractions
from pytest_lsrb.srbench.generate.synth import candidate_data, generate_synth
from pytest_lsrb.srbench.generate.terms import DOMAINS

# The release's sizes: 4,000 train, 500 in-domain test, 500 OOD rows per problem.
N_TRAIN, N_TEST, N_OOD = 4000, 500, 500
# Per domain, the swept input and, as the release stores them: its first value, the last
# in-domain value, the first and last OOD value; and the state at the sweep's start.
RELEASE = {
    "chem_react": ("t", 0.0, 53.9988, 54.010803, 60.0, {"A": 1.0}),  # CRK3/15/19/22/29
    "bio_pop_growth": ("t", 1.0, 54.0988, 54.110622, 60.0, {"P": 1.0}),  # BPG9/13/19/20/21
    "phys_osc": ("t", 0.0, 35.9992, 36.0072, 40.0, {"x": 1.0, "v": 0.0}),  # PO5/12/14/20/40
    "matsci": ("epsilon", 0.0, 0.539988, 0.540108, 0.6, {}),  # MatSci1/3/5/12/23
}
# The release's step between neighbouring rows of the sweep: (end - start) / 4999.
RELEASE_STEP = {d: (r[4] - r[1]) / 4999 for d, r in RELEASE.items()}


@pytest.fixture(scope="module", params=list(RELEASE))
def release_sized(request: pytest.FixtureRequest) -> tuple[str, list]:
    domain = request.param
    rep = generate_synth(domain, count=2, seed=0, n_train=N_TRAIN, n_test=N_TEST, n_ood=N_OOD)
    assert len(rep.problems) == 2
    return domain, rep.problems


def test_splits_have_the_release_sizes_and_spans(release_sized: tuple[str, list]) -> None:
    domain, problems = release_sized
    name, start, last_id, first_ood, end, _ = RELEASE[domain]
    step = RELEASE_STEP[domain]
    for p in problems:
        assert (len(p.train), len(p.test), len(p.ood_test)) == (N_TRAIN, N_TEST, N_OOD)
        col = p.inputs.index(name) + 1
        in_domain = np.sort(np.concatenate([p.train, p.test])[:, col])
        ood = p.ood_test[:, col]
        assert in_domain[0] == pytest.approx(start, abs=1e-12)
        assert ood[-1] == pytest.approx(end, abs=1e-12)
        # Within one of the release's steps of where its in-domain rows end and OOD rows begin.
        assert abs(in_domain[-1] - last_id) <= step and abs(ood[0] - first_ood) <= step
        # One even sweep, as the release's: its step throughout, across the cut too (ours differ
        # from it by < 0.1 %; the release's own stored steps vary by 0.06 %).
        gaps = np.diff(np.concatenate([in_domain, ood]))
        assert np.allclose(gaps, step, rtol=2e-3, atol=0)


def test_the_state_starts_where_the_release_starts_it(release_sized: tuple[str, list]) -> None:
    domain, problems = release_sized
    *_, initial = RELEASE[domain]
    for p in problems:
        rows = np.concatenate([p.train, p.test])
        first = rows[np.argmin(rows[:, 1 + p.inputs.index(RELEASE[domain][0])])]
        for state, value in initial.items():
            assert first[1 + p.inputs.index(state)] == pytest.approx(value, abs=1e-9)


def test_material_science_sweeps_strain_and_temperature_together() -> None:
    # The release's every MatSci row: T = 273 + 500 * epsilon (to its float32 storage).
    for p in generate_synth("matsci", count=3, seed=2, n_train=80, n_test=10, n_ood=10).problems:
        assert p.ood_test is not None
        for table in (p.train, p.test, p.ood_test):
            eps, temp = table[:, 1 + p.inputs.index("epsilon")], table[:, 1 + p.inputs.index("T")]
            assert np.allclose(temp, 273.0 + 500.0 * eps, rtol=0, atol=1e-9)


def test_a_zero_target_row_is_trained_on_never_tested() -> None:
    # A strain sweep from 0 gives stress 0 there (Hooke's law): Acc_tau divides by |y|, so that
    # row goes to train, where the release's random split leaves it with probability 8/9.
    rep = generate_synth("matsci", count=6, seed=0, n_train=20, n_test=20, n_ood=10)
    zeros = 0
    for p in rep.problems:
        assert p.ood_test is not None and np.all(p.test[:, 0] != 0) and np.all(p.ood_test[:, 0] != 0)
        zeros += int(np.sum(p.train[:, 0] == 0))
    assert zeros >= 1  # the rule had something to move


@given(n_id=st.integers(1, 3000), n_ood=st.integers(1, 600), domain=st.sampled_from(list(SWEEPS)))
def test_ood_rows_lie_past_every_in_domain_row_in_each_swept_input(
    n_id: int, n_ood: int, domain: str
) -> None:
    """The law the release extrapolates by: every swept input of every OOD row lies beyond every
    in-domain row, in the sweep's last tenth, and the sweep reaches both its ends."""
    f_id, f_ood = sweep_fractions(n_id, n_ood)
    assert (f_id.size, f_ood.size) == (n_id, n_ood)
    assert f_id[0] == 0.0 and f_ood[-1] == 1.0
    assert f_id.max() < 1 - OOD_FRACTION < f_ood.min()
    id_cols, ood_cols = sweep_columns(SWEEPS[domain], n_id, n_ood)
    for name, (lo, hi) in SWEEPS[domain].spans.items():
        assert id_cols[name].max() < lo + (1 - OOD_FRACTION) * (hi - lo) < ood_cols[name].min()
        assert id_cols[name].min() == lo and ood_cols[name].max() == pytest.approx(hi)


@pytest.mark.parametrize(
    ("domain", "text", "accepted"),
    [
        # A nearly settled reaction is kept, as the release keeps its own (CRK22's OOD variance is
        # 4e-7 of its in-domain variance): first order at k = 0.1, A = 4.5e-3 at t = 54 (6e-6).
        ("chem_react", "-0.1*A", True),
        # A reaction that is over is not: at k = 0.25, A = 1.3e-6 at t = 54 (variance ratio 3e-12).
        ("chem_react", "-0.25*A", False),
        # A driven oscillator: t leaves its in-domain range, so the OOD rows are new inputs.
        ("phys_osc", "-2.0*x - 0.3*v + 0.8*sin(0.5*t)", True),
        # A free damped oscillator swings inside its earlier box: interpolation (ours, not the release's).
        ("phys_osc", "-2.0*x - 0.3*v", False),
    ],
)
def test_the_filters_on_release_built_splits(domain: str, text: str, accepted: bool) -> None:
    spec = DOMAINS[domain]
    data = candidate_data(spec, SWEEPS[domain], parse_expression(text, list(spec.symbols[1:])), 300, 50)
    assert (not isinstance(data, str)) is accepted, data if isinstance(data, str) else text
