"""Problem data stays inside what the user named, and a small file cannot make the run hold
gigabytes: HDF5 links and external storage, symlinks and `data` paths leading out are refused
in one sentence; HDF5, parquet, npz and CSV tables are checked against the limits
(`srbench.data.bounds`) before they are read. The bombs are real files of a few kilobytes, loaded in
a child process whose peak RSS is measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_kit import assert_one_sentence, outcome

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.data.bounds import TABLE_ENV, DataBudget
from pytest_lsrb.srbench.data.loaders import load_problems

h5py = pytest.importorskip("h5py")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

META = {
    "name": "osc",
    "symbols": ["a", "x", "v"],
    "symbol_descs": ["acc", "pos", "vel"],
    "symbol_properties": ["O", "V", "V"],
    "expression": "-x - 0.5*v",
    "problem_set": "custom",
}
ROW = {**{k: v for k, v in META.items() if k != "problem_set"}}
RSS_LIMIT_MB = 300  # issue #27: every bomb refused under 300 MB RSS
SECRET = b"secret,1,2\n1.0,2.0,3.0\n"


def table(rows: int = 6) -> np.ndarray:
    return np.random.default_rng(rows).uniform(1.0, 2.0, size=(rows, 3))


def outside_file(tmp_path: Path) -> Path:
    """A file the run must never read: outside the folder the user names."""
    secret = tmp_path / "secret.csv"
    secret.write_bytes(SECRET)
    return secret


def refused(target: Path, *words: str, names: Path | None = None) -> str:
    """The one sentence refusing `target`; it names `names` (default: `target`) and `words`."""
    problems, message = outcome(lambda: load_problems(target))
    assert message is not None, f"loaded {problems!r}"
    assert_one_sentence(message, names or target)
    for word in words:
        assert word in message, message
    return message


# -- paths and links leading out ----------------------------------------------------------------


def index_with(root: Path, data: str) -> Path:
    root.mkdir(exist_ok=True)
    index = root / "problems.jsonl"
    index.write_text(json.dumps({**META, "data": data}) + "\n", encoding="utf-8")
    return index


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink_file", "symlink_dir"])
def test_an_index_data_path_leading_out_is_refused(tmp_path: Path, how: str) -> None:
    np.savez(tmp_path / "out.npz", train=table(), test=table(4))
    csv_dir = tmp_path / "outcsv"
    csv_dir.mkdir()
    (csv_dir / "train.csv").write_text("x,v,a\n1,2,3\n")
    (csv_dir / "test_id.csv").write_text("x,v,a\n1,2,3\n")
    root = tmp_path / "named"
    root.mkdir()
    data = {
        "absolute": str(tmp_path / "out.npz"),
        "dotdot": "../out.npz",
        "symlink_file": "p.npz",
        "symlink_dir": "p",
    }[how]
    if how == "symlink_file":
        (root / "p.npz").symlink_to(tmp_path / "out.npz")
    if how == "symlink_dir":
        (root / "p").symlink_to(csv_dir)
    index = index_with(root, data)
    message = refused(index, f"{index}:1", "field 'data'")
    assert "absolute" in message or "'..'" in message or "outside" in message


def test_a_csv_folder_file_linked_out_is_refused(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    index = index_with(tmp_path / "named", "osc")
    folder = tmp_path / "named" / "osc"
    folder.mkdir()
    (folder / "train.csv").write_text("x,v,a\n1,2,3\n")
    (folder / "test_id.csv").symlink_to(secret)
    refused(folder, "field 'test'", "outside", names=folder / "test_id.csv")
    refused(index, "field 'test'", "outside", names=folder / "test_id.csv")


def release(root: Path, build: Any, metadata_row: dict[str, Any] | None = None) -> Path:
    """A release folder whose one problem's group `build(h5, group_path)` writes."""
    root.mkdir(exist_ok=True)
    h5_path = root / "lsr_bench_data.hdf5"
    with h5py.File(h5_path, "w") as h5:
        build(h5, "/lsr_transform/osc")
    (root / "lsr_transform.jsonl").write_text(json.dumps(metadata_row or ROW) + "\n")
    return h5_path


def plain(h5: Any, group: str) -> None:
    g = h5.create_group(group)
    g["train"], g["test"] = table(), table(4)


def test_a_plain_release_loads(tmp_path: Path) -> None:
    h5_path = release(tmp_path / "r", plain)
    (problem,) = load_problems(h5_path)
    assert problem.train.shape == (6, 3)


def test_hdf5_external_link_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as h5:
        plain(h5, "/osc")

    def build(h5: Any, group: str) -> None:
        h5.create_group("/lsr_transform")
        h5[group] = h5py.ExternalLink(str(other), "/osc")

    h5_path = release(tmp_path / "r", build)
    refused(h5_path, "external link", "field 'osc'")


def test_hdf5_external_link_to_a_dataset_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as h5:
        h5["t"] = table()

    def build(h5: Any, group: str) -> None:
        g = h5.create_group(group)
        g["train"] = h5py.ExternalLink(str(other), "/t")
        g["test"] = table(4)

    refused(release(tmp_path / "r", build), "external link", "field 'train'")


def test_hdf5_soft_link_is_refused(tmp_path: Path) -> None:
    def build(h5: Any, group: str) -> None:
        plain(h5, "/elsewhere")
        h5.create_group("/lsr_transform")
        h5[group] = h5py.SoftLink("/elsewhere")

    refused(release(tmp_path / "r", build), "soft link")


def test_hdf5_external_raw_storage_is_refused(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)

    def build(h5: Any, group: str) -> None:
        g = h5.create_group(group)
        g.create_dataset("train", shape=(len(SECRET),), dtype="u1", external=[(str(secret), 0, len(SECRET))])
        g["test"] = table(4)

    message = refused(release(tmp_path / "r", build), "field 'train'", "external storage")
    assert "secret" not in message.split("field")[1]


def test_hdf5_virtual_dataset_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as h5:
        h5["t"] = table()

    def build(h5: Any, group: str) -> None:
        layout = h5py.VirtualLayout(shape=(6, 3), dtype="f8")
        layout[:] = h5py.VirtualSource(str(other), "t", shape=(6, 3))
        g = h5.create_group(group)
        g.create_virtual_dataset("train", layout)
        g["test"] = table(4)

    refused(release(tmp_path / "r", build), "field 'train'", "virtual dataset")


def test_release_metadata_linked_out_is_refused(tmp_path: Path) -> None:
    h5_path = release(tmp_path / "r", plain)
    outside = tmp_path / "rows.jsonl"
    (tmp_path / "r" / "lsr_transform.jsonl").rename(outside)
    (tmp_path / "r" / "lsr_transform.jsonl").symlink_to(outside)
    refused(h5_path, "outside", names=tmp_path / "r" / "lsr_transform.jsonl")


# -- bombs ---------------------------------------------------------------------------------------

# Peak RSS from VmHWM: ru_maxrss would carry the forking pytest process's peak across exec.
CHILD = """
import sys
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.data.loaders import load_problems
try:
    load_problems(sys.argv[1])
    print("LOADED")
except LsrbUsageError as exc:
    print(exc)
status = open("/proc/self/status").read()
print(int(status.split("VmHWM:")[1].split()[0]) // 1024)
"""


def load_in_child(target: Path, env: dict[str, str] | None = None) -> tuple[str, int]:
    """(message, peak RSS in MB) of loading `target` in a fresh interpreter."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("peak RSS is read from /proc/self/status (Linux)")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LSRB_DATA_")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**clean, **(env or {})},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    message, rss = done.stdout.strip().rsplit("\n", 1)
    return message, int(rss)


def assert_bomb_refused(target: Path, bytes_on_disk: int, *words: str) -> None:
    message, rss_mb = load_in_child(target)
    assert message != "LOADED"
    assert_one_sentence(message, target)
    for word in words:
        assert word in message, message
    print(f"{target.name}: {bytes_on_disk} bytes refused at peak RSS {rss_mb} MB")
    assert rss_mb < RSS_LIMIT_MB, f"peak RSS {rss_mb} MB refusing a {bytes_on_disk}-byte bomb: {message}"


def test_hdf5_fill_value_bomb_is_refused_before_reading(tmp_path: Path) -> None:
    """A few KB: a chunked dataset never written, 4.8 GB of fill value when read."""

    def build(h5: Any, group: str) -> None:
        g = h5.create_group(group)
        g.create_dataset("train", shape=(200_000_000, 3), dtype="f8", chunks=(65536, 3), compression="gzip")
        g["test"] = table(4)

    h5_path = release(tmp_path / "r", build)
    size = h5_path.stat().st_size
    assert size < 64 * 1024
    assert_bomb_refused(h5_path, size, "field 'train'", "4577.6 MB", TABLE_ENV)


def test_parquet_bomb_is_refused_before_reading(tmp_path: Path) -> None:
    """A self-contained parquet row whose `train_input` decodes to 12M numbers (dictionary and
    run-length encoded: a few KB on disk; as Python lists, as it was read before, gigabytes)."""
    n = 12_000_000
    offsets = pa.array(np.arange(n + 1, dtype=np.int32))
    inner = pa.ListArray.from_arrays(offsets, pa.array(np.zeros(n)))
    row = {k: [v] for k, v in ROW.items()}
    columns = {
        **{k: pa.array(v) for k, v in row.items()},
        "train_input": pa.ListArray.from_arrays(pa.array([0, n], pa.int32()), inner),
        "train_output": pa.array([[0.0]]),
        "test_input": pa.array([[[1.0, 2.0]]]),
        "test_output": pa.array([[1.0]]),
    }
    target = tmp_path / "lsr_transform-00000-of-00001.parquet"
    pq.write_table(pa.table(columns), target, compression="zstd")
    del inner, offsets, columns
    size = target.stat().st_size
    assert size < 512 * 1024
    assert_bomb_refused(target, size, "row group 1", "field 'train_input'", TABLE_ENV)


def write_npz_bomb(path: Path, rows: int) -> None:
    """An honest zip bomb: a float64 zeros array of `rows`x3, deflated, written in pieces."""
    header = {"descr": "<f8", "fortran_order": False, "shape": (rows, 3)}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("train.npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            block = bytes(8 * 3 * 65536)
            for _ in range(rows // 65536):
                fh.write(block)
        np.lib.format.write_array(zf.open("test.npy", "w"), table(4))


def test_npz_zip_bomb_is_refused_before_inflating(tmp_path: Path) -> None:
    root = tmp_path / "named"
    root.mkdir()
    write_npz_bomb(root / "p.npz", 65536 * 64)  # 96 MB of zeros, a few hundred KB deflated
    index = index_with(root, "p.npz")
    size = (root / "p.npz").stat().st_size
    assert size < 1024 * 1024
    assert_bomb_refused(index, size, "field 'train'", TABLE_ENV)


def test_npz_header_claiming_a_huge_shape_is_refused(tmp_path: Path) -> None:
    """A member whose .npy header says 1.8 GB though the archive holds a few bytes."""
    root = tmp_path / "named"
    root.mkdir()
    with zipfile.ZipFile(root / "p.npz", "w") as zf:
        with zf.open("train.npy", "w") as fh:
            np.lib.format.write_array_header_1_0(
                fh, {"descr": "<f8", "fortran_order": False, "shape": (75_000_000, 3)}
            )
        np.lib.format.write_array(zf.open("test.npy", "w"), table(4))
    index = index_with(root, "p.npz")
    assert_bomb_refused(index, (root / "p.npz").stat().st_size, "field 'train'", "shape (75000000, 3)")


def test_a_csv_past_the_table_limit_is_refused_at_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "osc"
    folder.mkdir()
    rows = "".join(f"{i}.5,{i}.25,{i}.125\n" for i in range(60_000))
    (folder / "train.csv").write_text("x,v,a\n" + rows)
    (folder / "test_id.csv").write_text("x,v,a\n1,2,3\n")
    with pytest.raises(LsrbUsageError) as err:
        load_problems(folder, DataBudget(table_mb=1.0))
    message = str(err.value)
    assert_one_sentence(message, folder / "train.csv")
    assert f"{folder / 'train.csv'}:" in message and "1 MB limit per table" in message, message
    (problem,) = load_problems(folder)  # the default limit holds it
    assert problem.train.shape == (60_000, 3)


def test_a_csv_line_without_end_is_refused_unread(tmp_path: Path) -> None:
    folder = tmp_path / "osc"
    folder.mkdir()
    (folder / "train.csv").write_text("x,v,a\n" + "1," * 600_000 + "\n")
    (folder / "test_id.csv").write_text("x,v,a\n1,2,3\n")
    refused(folder, f"{folder / 'train.csv'}:2", "a line longer than")


def test_the_limits_are_overridden_by_the_environment(tmp_path: Path) -> None:
    root = tmp_path / "named"
    root.mkdir()
    np.savez(root / "p.npz", train=table(50_000), test=table(4))  # 1.1 MB as float64
    index = index_with(root, "p.npz")
    message, _ = load_in_child(index, {TABLE_ENV: "1"})
    assert "over the 1 MB limit per table" in message, message
    message, _ = load_in_child(index, {TABLE_ENV: "2"})
    assert message == "LOADED"
    with pytest.raises(LsrbUsageError, match=f"{TABLE_ENV} must be a positive number"):
        DataBudget.from_env({TABLE_ENV: "-1"})
    with pytest.raises(LsrbUsageError, match="LSRB_DATA_TOTAL_MB must be a positive number"):
        DataBudget.from_env({"LSRB_DATA_TOTAL_MB": "inf"})


def test_the_total_limit_counts_every_table_of_a_load(tmp_path: Path) -> None:
    root = tmp_path / "named"
    (root / "data").mkdir(parents=True)
    lines = []
    for i in range(4):
        np.savez(root / "data" / f"p{i}.npz", train=table(20_000), test=table(4))  # 0.46 MB each
        lines.append(json.dumps({**META, "name": f"p{i}", "data": f"data/p{i}.npz"}))
    index = root / "problems.jsonl"
    index.write_text("\n".join(lines) + "\n")
    with pytest.raises(LsrbUsageError, match=r"problems.jsonl:4 .*past the 1.5 MB limit"):
        load_problems(index, DataBudget(total_mb=1.5))
    assert len(load_problems(index, DataBudget(total_mb=2.0))) == 4
