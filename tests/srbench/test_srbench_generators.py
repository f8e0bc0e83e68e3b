"""The generators: LSR-Transform on the real AI-Feynman table (a subset, for time) and the
LSR-Synth domains; determinism, data consistent with the ground truth, solvability."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_lsrb.srbench.data.loaders import load_problems
from pytest_lsrb.srbench.data.precision import STORED_BITS
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, SPLITS, Problem
from pytest_lsrb.srbench.generate import generate_problems, main
from pytest_lsrb.srbench.generate.feynman import read_feynman_csv
from pytest_lsrb.srbench.generate.synth import generate_synth
from pytest_lsrb.srbench.generate.transform import generate_transform

# Chosen for the table's quirks: a wrong `# variables` count (I.18.12, II.37.1), ranges from 0
# (I.18.12, I.26.2), arcsin (I.26.2, I.30.5), ln (I.44.4), exp needing a log (I.40.1).
SUBSET = ["I.10.7", "I.12.1", "I.18.12", "I.26.2", "I.30.5", "I.44.4", "I.40.1", "II.37.1", "I.6.2a"]


@pytest.fixture(scope="module")
def feynman_csv(request: pytest.FixtureRequest) -> Path:
    path = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "feynman" / "FeynmanEquations.csv"
    if not path.is_file():
        pytest.skip(f"the AI-Feynman table is not present at {path}")
    return path


@pytest.fixture(scope="module")
def transform_report(feynman_csv: Path):
    # Nine equations have no distribution to match: the complexity match is for whole sets.
    return generate_transform(
        feynman_csv, seed=3, n_train=60, n_test=30, equations=SUBSET, match_complexity=False
    )


def assert_same_problems(a: list[Problem], b: list[Problem]) -> None:
    """Same problems, data equal within one stored bit: regenerated data are compared with a
    tolerance, never bit for bit (data/precision.py: CPUs differ in the last bits)."""
    assert [p.metadata() for p in a] == [p.metadata() for p in b]
    one_stored_bit = 2.0 ** -(STORED_BITS - 1)
    for x, y in zip(a, b, strict=True):
        for split in SPLITS:
            u, v = getattr(x, split), getattr(y, split)
            assert (u is None) == (v is None)
            if u is not None:
                np.testing.assert_allclose(u, v, rtol=one_stored_bit, atol=0.0)


def _nmse_of_truth(p: Problem, split: str) -> float:
    gt = p.ground_truth()
    assert gt is not None
    X, y = p.columns(split)
    pred = gt.evaluate(X)
    return float(np.mean((pred - y) ** 2) / max(np.var(y), 1e-300))


def test_feynman_table_quirks(feynman_csv: Path) -> None:
    table = {eq.name: eq for eq in read_feynman_csv(feynman_csv)}
    assert len(table) == 100
    assert table["I.18.12"].declared_count == 2 and table["I.18.12"].names == ["r", "F", "theta"]
    assert table["II.37.1"].declared_count == 6 and len(table["II.37.1"].names) == 3
    assert table["I.18.12"].variables[2].low == 0.0
    assert table["I.26.2"].program().n_params == 0  # arcsin parses, no free names


def test_transform_problems_are_named_solved_and_consistent(transform_report) -> None:
    rep = transform_report
    names = [p.name for p in rep.problems]
    assert len(names) == len(set(names)) >= 8
    for p in rep.problems:
        assert p.name.startswith(GENERATED_PREFIX)
        eq, pivot_index, sol_index = p.name.removeprefix(GENERATED_PREFIX).rsplit("_", 2)
        assert eq in SUBSET and pivot_index.isdigit() and sol_index.isdigit()
        assert p.problem_set == "lsr_transform" and p.ood_test is None
        assert p.train.shape[0] == 60 and p.test.shape[0] == 30
        assert _nmse_of_truth(p, "train") < 1e-12 and _nmse_of_truth(p, "test") < 1e-12
        gt = p.ground_truth()
        assert gt is not None and rep.node_count_range[0] <= gt.node_count <= rep.node_count_range[1]
        assert p.inputs[0] in gt.used_variables  # the original output is now an input
    by_name = {p.name: p for p in rep.problems}
    # m_0 = m*sqrt(1 - v**2/c**2) from m = m_0/sqrt(1-v**2/c**2): the pivot comes back in range
    m0 = by_name["gen-I.10.7_0_0"]
    assert m0.symbols[:2] == ["m_0", "m"]
    assert (m0.train[:, 0] >= 1.0 - 1e-9).all() and (m0.train[:, 0] <= 5.0 + 1e-9).all()
    # theta2 = arcsin(theta1/n)-style inversion from I.26.2 exists
    assert any(n.startswith("gen-I.26.2_1_") for n in by_name)
    assert rep.summary()["problems"] == len(rep.problems)


def test_transform_is_deterministic(feynman_csv: Path, transform_report, tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    kwargs = {
        "seed": 3,
        "n_train": 60,
        "n_test": 30,
        "equations": SUBSET,
        "cache_path": cache,
        "match_complexity": False,
    }
    again = generate_transform(feynman_csv, **kwargs)
    cached = generate_transform(feynman_csv, **kwargs)
    assert_same_problems(again.problems, transform_report.problems)
    assert_same_problems(cached.problems, transform_report.problems)
    other = generate_transform(
        feynman_csv, seed=4, n_train=60, n_test=30, equations=SUBSET[:2], cache_path=cache
    )
    first = next(p for p in transform_report.problems if p.name == other.problems[0].name)
    assert not np.allclose(other.problems[0].train, first.train)  # another seed, other samples


@pytest.mark.parametrize("domain", ["chem_react", "bio_pop_growth", "phys_osc"])
def test_ode_domains_follow_their_trajectories(domain: str) -> None:
    rep = generate_synth(domain, count=3, seed=1, n_train=300, n_test=100, n_ood=150)
    assert len(rep.problems) == 3
    for p in rep.problems:
        assert p.domain == domain and p.problem_set == "lsr_synth" and p.ood_test is not None
        assert _nmse_of_truth(p, "test") < 1e-20 and _nmse_of_truth(p, "ood_test") < 1e-20
        t_col = p.inputs.index("t") + 1
        # The rate column is the time derivative of the state along one trajectory.
        table = np.concatenate([p.train, p.test, p.ood_test])
        table = table[np.argsort(table[:, t_col])]
        state_col = len(p.symbols) - (2 if domain == "phys_osc" else 1)
        state = table[:, state_col] if domain != "phys_osc" else table[:, -1]  # v for the oscillator
        slope = np.gradient(state, table[:, t_col])
        assert np.corrcoef(slope, table[:, 0])[0, 1] > 0.99


def test_material_science_ood_is_hotter_and_more_strained() -> None:
    rep = generate_synth("matsci", count=4, seed=0, n_train=50, n_test=20, n_ood=20)
    for p in rep.problems:
        eps, temp = p.inputs.index("epsilon") + 1, p.inputs.index("T") + 1
        assert p.ood_test is not None
        assert p.ood_test[:, temp].min() >= p.train[:, temp].max()
        assert p.ood_test[:, eps].min() >= p.train[:, eps].max()
        assert _nmse_of_truth(p, "ood_test") < 1e-20


def test_synth_is_deterministic_and_seed_dependent() -> None:
    a = generate_synth("chem_react", count=4, seed=5, n_train=40, n_test=10, n_ood=10)
    b = generate_synth("chem_react", count=4, seed=5, n_train=40, n_test=10, n_ood=10)
    c = generate_synth("chem_react", count=4, seed=6, n_train=40, n_test=10, n_ood=10)
    assert_same_problems(a.problems, b.problems)
    assert [p.expression for p in a.problems] != [p.expression for p in c.problems]
    assert [p.name for p in a.problems] == ["gen-CRK0", "gen-CRK1", "gen-CRK2", "gen-CRK3"]


def test_generate_problems_writes_a_loadable_index(tmp_path: Path, feynman_csv: Path) -> None:
    report = generate_problems(
        tmp_path / "out",
        feynman_csv=feynman_csv,
        seed=0,
        n_train=30,
        n_test=10,
        n_ood=10,
        synth_counts={"chem_react": 1, "bio_pop_growth": 1, "phys_osc": 1, "matsci": 1},
        equations=["I.10.7"],
    )
    problems = load_problems(tmp_path / "out" / "index.jsonl")
    assert report["problems"] == len(problems) == 3 + 4  # I.10.7 for m_0, v and c
    import json

    from pytest_lsrb.srbench.generate.model_free import SOLVED_NMSE
    from pytest_lsrb.srbench.generate.synth import MIN_OOD_SPREAD

    filters = json.loads((tmp_path / "out" / "manifest.json").read_text("utf-8"))["settings"]["filters"]
    assert filters["lsr_synth"]["min_ood_spread"] == MIN_OOD_SPREAD  # the thresholds travel with the set
    assert f"{SOLVED_NMSE:g}" in filters["lsr_transform"]["model_free"]
    assert {p.group for p in problems} == {
        "lsr_transform",
        "lsr_synth_chem_react",
        "lsr_synth_bio_pop_growth",
        "lsr_synth_phys_osc",
        "lsr_synth_matsci",
    }


def test_generate_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "--out",
            str(tmp_path / "o"),
            "--family",
            "synth",
            "--domain",
            "matsci",
            "--count",
            "2",
            "--n-train",
            "20",
            "--n-test",
            "5",
            "--n-ood",
            "5",
        ]
    )
    assert code == 0
    assert '"problems": 2' in capsys.readouterr().out
    assert len(load_problems(tmp_path / "o" / "index.jsonl")) == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(tmp_path / "p"), "--family", "transform"])
    assert exit_info.value.code == 2


def test_feynman_family_is_the_original_equations_on_their_ranges(feynman_csv: Path) -> None:
    from pytest_lsrb.srbench.generate.feynman_set import FEYNMAN_SET, generate_feynman

    problems = generate_feynman(feynman_csv, seed=1, n_train=40, n_test=20, equations=SUBSET)
    assert {p.name for p in problems} == {f"gen-{name}_feynman" for name in SUBSET}
    again = generate_feynman(feynman_csv, seed=1, n_train=40, n_test=20, equations=SUBSET)
    assert_same_problems(again, problems)
    for p in problems:
        assert p.problem_set == FEYNMAN_SET and p.ood_test is None
        assert p.train.shape[0] == 40 and p.test.shape[0] == 20
        assert _nmse_of_truth(p, "train") < 1e-20 and _nmse_of_truth(p, "test") < 1e-20


def test_the_command_line_turns_the_transform_filters_off(
    tmp_path: Path, feynman_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    def count(*flags: str) -> int:
        out = tmp_path / f"o{len(flags)}"
        common = ["--out", str(out), "--family", "transform", "--feynman", str(feynman_csv)]
        assert main([*common, "--equation", "I.12.2", "--n-train", "20", "--n-test", "5", *flags]) == 0
        report = json.loads(capsys.readouterr().out)
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
        on = manifest["settings"]["transform_filters_on"]
        assert on["dedupe"] is ("--keep-symmetric" not in flags)
        assert on["drop_model_free"] is ("--keep-model-free" not in flags)
        return int(report["problems"])

    # q1*q2*r/(4*pi*epsilon*r**3): every rearrangement is a power law, and q2 renames q1.
    assert count() == 0
    kept_power_laws = count("--keep-model-free")
    assert kept_power_laws >= 3
    assert count("--keep-model-free", "--keep-symmetric") == kept_power_laws + 1
