"""An official release cannot silently shrink (issue #30, item 5): a split whose metadata file is
gone, or a metadata row without data, stops the load with one sentence naming it; with
`partial_release` the rest loads and every problem's `release_note` says what is missing; the
counts per split are compared with the paper's, with a warning when they differ."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.data.loaders import load_problems
from pytest_lsrb.srbench.data.release import PAPER_COUNTS, ReleaseWarning, release_counts_line

RNG = np.random.default_rng(5)


def _release(root: Path, data: dict[str, list[str]], meta: dict[str, list[str]]) -> Path:
    """data/meta: split -> problem names (an HDF5 group / a metadata row each)."""
    h5py = pytest.importorskip("h5py")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    with h5py.File(root / "lsr_bench_data.hdf5", "w") as h5:
        for split, names in data.items():
            base = (
                "/lsr_transform"
                if split == "lsr_transform"
                else f"/lsr_synth/{split.removeprefix('lsr_synth_')}"
            )
            for name in names:
                g = h5.create_group(f"{base}/{name}")
                g["train"], g["test"] = RNG.uniform(1, 2, (20, 3)), RNG.uniform(1, 2, (10, 3))
    (root / "data").mkdir()
    for split, names in meta.items():
        rows = [
            {
                "name": n,
                "symbols": ["y", "a", "b"],
                "symbol_descs": ["y", "a", "b"],
                "symbol_properties": ["O", "V", "V"],
                "expression": "a*b",
            }
            for n in names
        ]
        pq.write_table(pa.Table.from_pylist(rows), root / "data" / f"{split}-00000-of-00001.parquet")
    return root


def test_a_split_whose_metadata_is_missing_is_named(tmp_path: Path) -> None:
    root = _release(
        tmp_path,
        data={"lsr_transform": ["T1", "T2"], "lsr_synth_matsci": ["MS1"]},
        meta={"lsr_transform": ["T1", "T2"]},
    )
    with pytest.raises(LsrbUsageError) as info:
        load_problems(root)
    message = str(info.value)
    assert "split lsr_synth_matsci: 1 problems' data in lsr_bench_data.hdf5 but no metadata rows" in message
    assert "--lsrb-sr-partial-release" in message and message.count(".") >= 1
    with pytest.warns(ReleaseWarning, match="PARTIAL release"):
        problems = load_problems(root, partial_release=True)
    assert [p.name for p in problems] == ["T1", "T2"]
    assert all(
        p.release_note and p.release_note.startswith("PARTIAL release (split lsr_synth_matsci")
        for p in problems
    )


def test_a_metadata_row_without_data_is_named(tmp_path: Path) -> None:
    root = _release(tmp_path, data={"lsr_transform": ["T1"]}, meta={"lsr_transform": ["T1", "T9"]})
    with pytest.raises(
        LsrbUsageError, match=r"problem 'T9' \(.*row 2\) has no data: group '/lsr_transform/T9'"
    ):
        load_problems(root)
    with pytest.warns(ReleaseWarning):
        problems = load_problems(root, partial_release=True)
    assert [p.name for p in problems] == ["T1"] and "problem T9" in str(problems[0].release_note)


def test_counts_are_compared_with_the_papers(tmp_path: Path) -> None:
    root = _release(tmp_path, data={"lsr_transform": ["T1"]}, meta={"lsr_transform": ["T1"]})
    with pytest.warns(ReleaseWarning, match=r"lsr_transform 1/111, lsr_synth_chem_react 0/36"):
        [problem] = load_problems(root)
    assert problem.release_note == release_counts_line([problem], [])
    assert problem.content_hash() == problem.model_copy(update={"release_note": None}).content_hash()
    assert sum(PAPER_COUNTS.values()) == 240
