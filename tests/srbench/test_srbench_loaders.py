"""Problem loading: the official HDF5 layout (written here in exactly that layout), CSV problem
folders (the real LLM-SR data), and the index + .npz format; bad files name file and field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.data.loaders import load_problems, write_problem_files
from pytest_lsrb.srbench.data.problem import Problem

RNG = np.random.default_rng(7)


def _table(n: int, cols: int) -> np.ndarray:
    return RNG.uniform(1.0, 2.0, size=(n, cols))


TRANSFORM_ROW = {
    "name": "I.10.7_2_0",
    "symbols": ["c", "m_0", "v", "m"],
    "symbol_descs": ["speed of light", "rest mass", "velocity", "mass"],
    "symbol_properties": ["O", "V", "V", "V"],
    "expression": "v*m/sqrt(m**2 - m_0**2)",
}
SYNTH_ROW = {
    "name": "CRK0",
    "symbols": ["dA_dt", "t", "A"],
    "symbol_descs": ["rate of change of concentration", "time", "concentration at time t"],
    "symbol_properties": ["O", "V", "V"],
    "expression": "-0.1*A + 0.05*A**2*exp(-0.2*t)",
    "input_symbol_ranges": [[0.0, 10.0], [0.1, 1.0]],  # extra columns of the newer release
}


def _write_release(root: Path, old_names: bool = False, metadata: str = "parquet") -> Path:
    h5py = pytest.importorskip("h5py")  # the `srbench` extra
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    names = ("train_data", "id_test_data", "ood_test_data") if old_names else ("train", "test", "ood_test")
    h5_path = root / "lsr_bench_data.hdf5"
    with h5py.File(h5_path, "w") as h5:
        g = h5.create_group("/lsr_transform/I.10.7_2_0")
        g[names[0]], g[names[1]] = _table(20, 4), _table(10, 4)
        s = h5.create_group("/lsr_synth/chem_react/CRK0")
        s[names[0]], s[names[1]], s[names[2]] = _table(30, 3), _table(10, 3), _table(5, 3)
    data = root / "data"
    data.mkdir()
    for split, row in (("lsr_transform", TRANSFORM_ROW), ("lsr_synth_chem_react", SYNTH_ROW)):
        if metadata == "parquet":
            pq.write_table(pa.Table.from_pylist([row]), data / f"{split}-00000-of-00001.parquet")
        else:
            (data / f"{split}.jsonl").write_text(json.dumps(row) + "\n")
    return h5_path


@pytest.mark.parametrize(("old_names", "metadata"), [(False, "parquet"), (True, "parquet"), (False, "jsonl")])
def test_official_release_layout(tmp_path: Path, old_names: bool, metadata: str) -> None:
    h5_path = _write_release(tmp_path, old_names, metadata)
    for target in (h5_path, tmp_path):
        problems = {p.name: p for p in load_problems(target)}
        assert set(problems) == {"I.10.7_2_0", "CRK0"}
        tr, syn = problems["I.10.7_2_0"], problems["CRK0"]
        assert (tr.problem_set, tr.domain, tr.group) == ("lsr_transform", None, "lsr_transform")
        assert (syn.problem_set, syn.domain, syn.group) == ("lsr_synth", "chem_react", "lsr_synth_chem_react")
        assert tr.train.shape == (20, 4) and tr.ood_test is None
        assert syn.ood_test is not None and syn.ood_test.shape == (5, 3)
        assert syn.inputs == ["t", "A"] and syn.output == "dA_dt"
        assert syn.ground_truth() is not None
        assert tr.desc == "" and syn.desc == ""  # no invented description: the rows hold none


def test_release_missing_group_names_it(tmp_path: Path) -> None:
    h5_path = _write_release(tmp_path)
    h5py = pytest.importorskip("h5py")
    with h5py.File(h5_path, "a") as h5:
        del h5["/lsr_synth/chem_react/CRK0"]
    with pytest.raises(LsrbUsageError, match=r"group '/lsr_synth/chem_react/CRK0'"):
        load_problems(h5_path)


def test_release_bad_metadata_names_file_row_and_field(tmp_path: Path) -> None:
    h5_path = _write_release(tmp_path)
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bad = dict(SYNTH_ROW, symbol_properties=["V", "V", "O"])
    target = tmp_path / "data" / "lsr_synth_chem_react-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist([bad]), target)
    with pytest.raises(LsrbUsageError) as err:
        load_problems(h5_path)
    msg = str(err.value)
    assert "lsr_synth_chem_react-00000-of-00001.parquet: row 1" in msg
    assert "field 'symbol_properties'" in msg


def test_release_without_metadata(tmp_path: Path) -> None:
    h5_path = _write_release(tmp_path)
    for f in (tmp_path / "data").iterdir():
        f.unlink()
    with pytest.raises(LsrbUsageError, match="no metadata rows"):
        load_problems(h5_path)


def test_real_llmsr_csv_folders(shared_data: Path) -> None:
    osc = load_problems(shared_data / "llmsr" / "oscillator1")[0]
    assert osc.symbols == ["a", "x", "v"]  # target (last CSV column) first
    assert osc.train.shape == (10000, 3) and osc.ood_test is not None
    assert osc.expression is None and not osc.has_ground_truth
    assert "oscillator" in osc.symbol_descs[0] and osc.desc == ""  # LLM-SR's own words, no more
    raw = np.loadtxt(shared_data / "llmsr" / "oscillator1" / "train.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(osc.train[:, 0], raw[:, 2])
    ss = load_problems(shared_data / "llmsr" / "stressstrain" / "train.csv")[0]
    assert ss.symbols == ["stress", "strain", "temp"] and ss.domain == "matsci"
    assert ss.ood_test is not None and ss.ood_test.shape[0] == 738


def _csv_folder(root: Path, meta: dict[str, object] | None = None) -> Path:
    folder = root / "prob"
    folder.mkdir()
    for name, n in (("train.csv", 8), ("test_id.csv", 4)):
        rows = _table(n, 3)
        text = "t,A,dA_dt\n" + "\n".join(",".join(repr(float(v)) for v in r) for r in rows) + "\n"
        (folder / name).write_text(text)
    if meta is not None:
        (folder / "metadata.json").write_text(json.dumps(meta))
    return folder


def test_csv_folder_with_metadata_reorders_columns(tmp_path: Path) -> None:
    folder = _csv_folder(
        tmp_path,
        {
            "name": "mine",
            "symbols": ["dA_dt", "A", "t"],
            "expression": "-0.5*A",
            "problem_set": "lsr_synth",
            "domain": "chem_react",
        },
    )
    p = load_problems(folder / "metadata.json")[0]
    raw = np.loadtxt(folder / "train.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(p.train, raw[:, [2, 1, 0]])
    assert p.ood_test is None and p.name == "mine" and p.group == "lsr_synth_chem_react"


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"symbols": ["dA_dt", "A", "q"]}, "symbols"),
        ({"expression": "__import__('os')"}, "expression"),
        ({"expression": "-A*("}, "expression"),  # (unknown names are template parameters)
        ({"symbol_descs": ["only one"]}, "symbol_descs"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_csv_folder_bad_metadata(tmp_path: Path, meta: dict[str, object], field: str) -> None:
    folder = _csv_folder(tmp_path, meta)
    with pytest.raises(LsrbUsageError) as err:
        load_problems(folder)
    assert "metadata.json" in str(err.value) and f"field '{field}'" in str(err.value)


def test_csv_bad_number_names_line(tmp_path: Path) -> None:
    folder = _csv_folder(tmp_path)
    (folder / "test_id.csv").write_text("t,A,dA_dt\n1,2,3\n1,oops,3\n")
    with pytest.raises(LsrbUsageError, match=r"test_id\.csv:3: not a row of numbers"):
        load_problems(folder)


def _problem(name: str = "p1") -> Problem:
    return Problem(
        name=name,
        symbols=["y", "x"],
        symbol_descs=["out", "in"],
        symbol_properties=["O", "V"],
        expression="2*x",
        problem_set="lsr_transform",
        train=_table(6, 2),
        test=_table(3, 2),
    )


def test_index_round_trip(tmp_path: Path) -> None:
    index = write_problem_files([_problem("a"), _problem("b")], tmp_path / "index.jsonl")
    loaded = load_problems(index)
    assert [p.name for p in loaded] == ["a", "b"]
    again = load_problems(index)
    assert [p.content_hash() for p in again] == [p.content_hash() for p in loaded]
    np.testing.assert_array_equal(loaded[0].train, np.load(tmp_path / "data" / "a.npz")["train"])


def test_content_hash_tracks_data_and_metadata() -> None:
    base = _problem()
    assert base.content_hash() == Problem.model_validate(base.model_dump()).content_hash()
    changed = base.model_copy(update={"desc": "other"})
    assert changed.content_hash() != base.content_hash()
    data = base.train.copy()
    data[0, 0] += 1e-9
    assert Problem.model_validate({**base.model_dump(), "train": data}).content_hash() != base.content_hash()


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (
            {
                "symbols": ["y", "x"],
                "symbol_descs": ["o", "i"],
                "symbol_properties": ["O", "V"],
                "problem_set": "s",
                "data": "data/p.npz",
            },
            "name",
        ),
        (
            {
                "name": "p",
                "symbols": ["y", "x"],
                "symbol_descs": ["o", "i"],
                "symbol_properties": ["O", "V"],
                "problem_set": "s",
            },
            "data",
        ),
        (
            {
                "name": "p",
                "symbols": ["y", "x"],
                "symbol_descs": ["o", "i"],
                "symbol_properties": ["O", "V"],
                "problem_set": "s",
                "data": "data/missing.npz",
            },
            "data",
        ),
        (
            {
                "name": "p",
                "symbols": ["y", "x", "z"],
                "symbol_descs": ["o", "i", "j"],
                "symbol_properties": ["O", "V", "V"],
                "problem_set": "s",
                "data": "data/p.npz",
            },
            "train",
        ),
        (
            {
                "name": "p",
                "symbols": ["y", "params"],
                "symbol_descs": ["o", "i"],
                "symbol_properties": ["O", "V"],
                "problem_set": "s",
                "data": "data/p.npz",
            },
            "symbols",
        ),
    ],
)
def test_index_errors_name_line_and_field(tmp_path: Path, line: dict[str, object], field: str) -> None:
    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "p.npz", train=_table(4, 2), test=_table(2, 2))
    index = tmp_path / "index.jsonl"
    index.write_text(json.dumps(line) + "\n")
    with pytest.raises(LsrbUsageError) as err:
        load_problems(index)
    assert f"{index}:1" in str(err.value) and f"field '{field}'" in str(err.value)


def test_non_finite_data_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    bad = _table(4, 2)
    bad[1, 1] = np.nan
    np.savez(tmp_path / "data" / "p.npz", train=bad, test=_table(2, 2))
    line = {
        "name": "p",
        "symbols": ["y", "x"],
        "symbol_descs": ["o", "i"],
        "symbol_properties": ["O", "V"],
        "problem_set": "s",
        "data": "data/p.npz",
    }
    (tmp_path / "index.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(LsrbUsageError, match=r"field 'train': .*non-finite"):
        load_problems(tmp_path / "index.jsonl")


OFFICIAL_QUIRKS = [
    # (name, symbols, properties, expression as published, columns): the reference's spellings
    ("PO_template", ["dv_dt", "x", "t", "v"], ["O", "V", "V", "V"], "F0*sin(t) - omega0**2*x", 4),
    ("caret", ["P", "v", "r"], ["O", "V", "V"], "r*v^2", 3),
    ("latex", ["$E$", "$m$", "$c$"], ["O", "V", "V"], "$m$*$c$^2", 3),
    ("pi", ["A", "r"], ["O", "V"], "π*r^2", 2),
    ("constant", ["F", "q", "k"], ["O", "V", "C"], "k*q^2", 2),  # k has no data column
    ("broken", ["y", "x"], ["O", "V"], "x**(", 2),  # does not parse at all
]


def _write_quirky_release(root: Path) -> None:
    h5py = pytest.importorskip("h5py")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = []
    with h5py.File(root / "lsr_bench_data.hdf5", "w") as h5:
        for name, symbols, props, expression, cols in OFFICIAL_QUIRKS:
            g = h5.create_group(f"/lsr_synth/phys_osc/{name}")
            g["train"], g["test"], g["ood_test"] = _table(30, cols), _table(10, cols), _table(5, cols)
            descs = [f"description of {s}" for s in symbols]
            rows.append(
                {
                    "name": name,
                    "symbols": symbols,
                    "symbol_descs": descs,
                    "symbol_properties": props,
                    "expression": expression,
                }
            )
    (root / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), root / "data" / "lsr_synth_phys_osc-00000-of-00001.parquet")


def test_a_release_folder_loads_every_problem_whatever_its_ground_truth(tmp_path: Path) -> None:
    from pytest_lsrb.srbench.data.release import GroundTruthWarning

    _write_quirky_release(tmp_path)
    with pytest.warns(GroundTruthWarning, match="problem broken: its ground truth 'x\\*\\*\\('"):
        problems = {p.name: p for p in load_problems(tmp_path)}
    assert set(problems) == {q[0] for q in OFFICIAL_QUIRKS}
    assert problems["broken"].expression is None  # loaded; symbolic accuracy not applicable
    assert problems["caret"].expression == "r*v**2"
    assert problems["latex"].symbols == ["E", "m", "c"] and problems["latex"].expression == "m*c**2"
    assert problems["pi"].expression == "pi*r**2"
    truth = problems["constant"].ground_truth()
    assert problems["constant"].inputs == ["q"] and truth is not None and truth.n_params == 1
    template = problems["PO_template"].ground_truth()
    assert template is not None and template.n_params == 2  # F0 and omega0
    assert all(p.desc == "" for p in problems.values())


def test_a_release_folder_runs_every_problem_through_the_suite(tmp_path: Path, run_suite) -> None:
    (tmp_path / "release").mkdir()
    _write_quirky_release(tmp_path / "release")
    suite = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"
    result = run_suite(
        f"--lsrb-index={tmp_path / 'release'}",
        "--lsrb-sr-budget=2",
        "--lsrb-outcome=record",
        suite=suite,
        out=tmp_path / "out",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    records = {r["item_id"]: r for r in result.attempts()}
    assert set(records) == {q[0] for q in OFFICIAL_QUIRKS}
    assert records["broken"]["symbolic_method"] == "not_applicable"
    # A template truth is decided like any other (the paper's rule: its named parameters are
    # placeholder constants), never left undecided.
    assert records["PO_template"]["symbolic_method"] in ("identity", "family", "no_match", "no_proposal")
    assert records["PO_template"]["symbolic_match"] is not None


def test_self_contained_parquet_rows_load(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    row = dict(SYNTH_ROW)
    row.pop("input_symbol_ranges")
    train, test = _table(20, 3), _table(8, 3)
    row.update(
        train_input=train[:, 1:].tolist(),
        train_output=train[:, 0].tolist(),
        test_input=test[:, 1:].tolist(),
        test_output=test[:, 0].tolist(),
    )
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "lsr_synth_chem_react-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist([row]), target)
    for path in (target, tmp_path):
        [problem] = load_problems(path)
        assert (problem.name, problem.group) == ("CRK0", "lsr_synth_chem_react")
        np.testing.assert_array_equal(problem.train, train)
        assert problem.ood_test is None and problem.ground_truth() is not None


def test_llmsr_csv_headers_keep_their_variable_descriptions(tmp_path: Path) -> None:
    folder = tmp_path / "bactgrow"  # LLM-SR's bactgrow header: b,s,temp,pH,db
    folder.mkdir()
    for name in ("train.csv", "test_id.csv"):
        rows = "\n".join(",".join(str(v) for v in r) for r in _table(6, 5))
        (folder / name).write_text("b,s,temp,pH,db\n" + rows + "\n")
    [problem] = load_problems(folder)
    assert problem.symbols == ["db", "b", "s", "temp", "pH"]
    assert problem.symbol_descs == [
        "E. Coli bacterial growth rate",
        "population density of the bacterial species",
        "substrate concentration",
        "temperature",
        "pH level",
    ]
    assert problem.desc == ""
