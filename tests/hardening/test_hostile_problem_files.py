"""Hostile equation-discovery problem files: CSV folders, their metadata.json, index + .npz files
and the official HDF5 release layout. Broken ones end in one sentence naming the file (and the
line or field); every problem that loads can be hashed, shown to a model and evaluated."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_kit import assert_one_sentence, byte_mutations, hostile_text, json_values, outcome
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_lsrb.srbench.data.loaders import load_problems
from pytest_lsrb.srbench.data.problem import Problem

FUZZ = settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
META = {
    "name": "osc",
    "symbols": ["a", "x", "v"],
    "symbol_descs": ["acc", "pos", "vel"],
    "symbol_properties": ["O", "V", "V"],
    "expression": "-x - 0.5*v",
    "desc": "an oscillator",
    "problem_set": "custom",
}


def table(rows: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(rows, 3))


def csv_bytes(data: np.ndarray) -> bytes:
    out = io.StringIO()
    out.write("x,v,a\n")
    for x, v, a in data:
        out.write(f"{float(x)!r},{float(v)!r},{float(a)!r}\n")
    return out.getvalue().encode()


def csv_folder(root: Path) -> Path:
    folder = root / "osc"
    folder.mkdir(exist_ok=True)
    (folder / "train.csv").write_bytes(csv_bytes(table(6, 1)))
    (folder / "test_id.csv").write_bytes(csv_bytes(table(4, 2)))
    (folder / "metadata.json").write_text(json.dumps(META), encoding="utf-8")
    return folder


def usable(problems: list[Problem]) -> None:
    """What a run does with a problem before and after the model answers."""
    for p in problems:
        p.content_hash()
        json.dumps(p.context(), ensure_ascii=False).encode("utf-8")
        p.columns("train")
        p.ground_truth()


@FUZZ
@given(data=st.data(), name=st.sampled_from(["train.csv", "test_id.csv", "metadata.json"]))
def test_byte_damage_to_a_csv_folder_ends_in_one_sentence(
    tmp_path: Path, data: st.DataObject, name: str
) -> None:
    folder = csv_folder(tmp_path)
    target = folder / name
    target.write_bytes(data.draw(byte_mutations(target.read_bytes())))
    problems, message = outcome(lambda: load_problems(folder))
    if message is None:
        usable(problems)
    else:
        assert_one_sentence(message, folder)


@FUZZ
@given(field=st.sampled_from([*META, "data", "unknown"]), value=json_values | hostile_text)
@example(field="desc", value="\ud800")  # found by hypothesis: crashed content_hash (issue #13)
def test_a_metadata_field_with_any_value_loads_or_is_named(tmp_path: Path, field: str, value: Any) -> None:
    folder = csv_folder(tmp_path)
    (folder / "metadata.json").write_text(json.dumps({**META, field: value}), encoding="utf-8")
    problems, message = outcome(lambda: load_problems(folder))
    if message is None:
        usable(problems)
    else:
        assert_one_sentence(message, folder / "metadata.json")
        assert "field '" in message, message


def npz_index(root: Path, **arrays: Any) -> Path:
    np.savez(root / "p.npz", **(arrays or {"train": table(6, 1), "test": table(4, 2)}))
    index = root / "problems.jsonl"
    index.write_text(json.dumps({**META, "data": "p.npz"}) + "\n", encoding="utf-8")
    return index


@FUZZ
@given(field=st.sampled_from([*META, "data", "data_sha256", "unknown"]), value=json_values | hostile_text)
@example(field="desc", value="\ud800")  # found by hypothesis: crashed content_hash (issue #13)
def test_an_index_field_with_any_value_loads_or_is_named(tmp_path: Path, field: str, value: Any) -> None:
    index = npz_index(tmp_path)
    index.write_text(json.dumps({**META, "data": "p.npz", field: value}) + "\n", encoding="utf-8")
    problems, message = outcome(lambda: load_problems(index))
    if message is None:
        usable(problems)
    else:
        assert_one_sentence(message, index)
        assert f"{index}:1" in message and "field '" in message, message


@FUZZ
@given(data=st.data())
def test_byte_damage_to_an_npz_ends_in_one_sentence(tmp_path: Path, data: st.DataObject) -> None:
    index = npz_index(tmp_path)
    npz = tmp_path / "p.npz"
    npz.write_bytes(data.draw(byte_mutations(npz.read_bytes())))
    problems, message = outcome(lambda: load_problems(index))
    if message is None:
        usable(problems)
    else:
        assert_one_sentence(message, index)
        assert "field 'data'" in message or "field 'train'" in message or "field 'test'" in message


@pytest.mark.parametrize(
    ("arrays", "expected"),
    [
        ({"train": np.array([{"a": 1}], dtype=object), "test": table(2, 0)}, "not a table of numbers"),
        ({"train": np.array([["a", "b", "c"]]), "test": table(2, 0)}, "field 'train'"),
        ({"train": np.full((2, 3), np.nan), "test": table(2, 0)}, "non-finite"),
        ({"train": np.zeros((2, 2, 3)), "test": table(2, 0)}, "2-D table"),
        ({"test": table(2, 0)}, "field 'train' is missing"),
    ],
)
def test_npz_contents_of_the_wrong_kind_are_named(
    tmp_path: Path, arrays: dict[str, Any], expected: str
) -> None:
    index = npz_index(tmp_path, **arrays)
    _, message = outcome(lambda: load_problems(index))
    assert message is not None
    assert_one_sentence(message, index)
    assert expected in message, message


@pytest.mark.parametrize(
    ("train", "expected"),
    [
        (b"x,v,a\n1,2,3\n4,5\n", "train.csv:3: expected 3 numbers (one per header column), got 2."),
        (b"x,v,a\n1,2,3\n\n\n4,five,6\n", "train.csv:5: not a row of numbers."),
        (b"x,v,a\n1,2,\xff\n", "train.csv: not valid UTF-8 text."),
        (b'x,v,a\n1,2,"' + b"3" * 200_000 + b'"\n', "train.csv:2: not a CSV row (field larger"),
        (b"x,v,a\n", "train.csv: expected rows of 3 numbers under the header."),
        (b"", "train.csv: is empty (expected a header row)."),
    ],
)
def test_broken_csv_tables_are_named_by_line(tmp_path: Path, train: bytes, expected: str) -> None:
    folder = csv_folder(tmp_path)
    (folder / "train.csv").write_bytes(train)
    _, message = outcome(lambda: load_problems(folder))
    assert message is not None
    assert_one_sentence(message, folder)
    assert expected in message, message


def test_a_csv_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    folder = csv_folder(tmp_path)
    (folder / "train.csv").write_bytes(b"\xef\xbb\xbf" + (folder / "train.csv").read_bytes())
    assert load_problems(folder)[0].symbols == META["symbols"]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), damage=st.sampled_from(["hdf5", "metadata"]))
def test_damage_to_the_release_layout_ends_in_one_sentence(
    tmp_path: Path, data: st.DataObject, damage: str
) -> None:
    h5py = pytest.importorskip("h5py")
    root = tmp_path / "release"
    root.mkdir(exist_ok=True)
    h5_path = root / "lsr_bench_data.hdf5"
    with h5py.File(h5_path, "w") as h5:
        group = h5.create_group("/lsr_transform/osc")
        group["train"], group["test"] = table(6, 1), table(4, 2)
    meta = root / "lsr_transform.jsonl"
    meta.write_text(json.dumps({k: v for k, v in META.items() if k != "problem_set"}) + "\n", "utf-8")
    if damage == "hdf5":
        h5_path.write_bytes(data.draw(byte_mutations(h5_path.read_bytes())))
    else:
        row, _ = data.draw(
            st.sampled_from(sorted(META)).flatmap(lambda f: st.tuples(st.just({**META, f: None}), st.just(f)))
            | st.tuples(st.fixed_dictionaries({"name": json_values | hostile_text}), st.just("name"))
        )
        meta.write_text(json.dumps(row) + "\n", "utf-8")
    problems, message = outcome(lambda: load_problems(root))
    if message is None:
        usable(problems)
    else:
        assert_one_sentence(message, root)
