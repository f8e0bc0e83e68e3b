"""Problem files in, validated `Problem`s out. Every mistake names the file and the field.

Accepted layouts (`load_problems` picks by what the path is):

- an index `*.jsonl`: one problem per line, its metadata plus `"data": "<path>"` relative to the
  index, pointing at an `.npz` (arrays `train`, `test`, `ood_test`) or a CSV problem folder;
- the official LLM-SRBench release folder (or its `lsr_bench_data.hdf5`): groups
  `/lsr_transform/<name>` and `/lsr_synth/<domain>/<name>` holding `train`, `test`, `ood_test`
  (older releases: `train_data`, `id_test_data`, `ood_test_data`), with the metadata rows in
  `data/<split>-*.parquet` (as published) or `<split>.jsonl` (`srbench.data.release`);
- self-contained parquet files (a file, or a folder of `<split>-*.parquet`): each row holds the
  metadata and the data, `train_input`/`train_output`, `test_input`/`test_output`,
  `ood_test_input`/`ood_test_output` (`srbench.data.release`);
- a CSV problem folder (or its `metadata.json` / `train.csv`): `train.csv`, `test_id.csv`,
  optional `test_ood.csv`, a header row, the target in the last column, and an optional
  `metadata.json` with the problem's fields.
"""

from __future__ import annotations

import csv
import json
import math
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.paths import file_name_problem, inside, relative_path_problem
from pytest_lsrb.core.rows import iter_jsonl
from pytest_lsrb.core.textfiles import loads_json
from pytest_lsrb.srbench.data.bounds import DataBudget, contained
from pytest_lsrb.srbench.data.problem import SPLITS, Problem
from pytest_lsrb.srbench.data.problem_rows import (
    META_FIELDS,
    SPLIT_ALIASES,
    build_problem,
    check_unique,
    pick_splits,
)
from pytest_lsrb.srbench.data.release import RELEASE_FILE, load_parquet, load_release

CSV_FILES: Final[dict[str, tuple[str, ...]]] = {
    "train": ("train.csv",),
    "test": ("test_id.csv", "test.csv"),
    "ood_test": ("test_ood.csv", "ood_test.csv"),
}
METADATA_FILE: Final = "metadata.json"
CSV_LINE_MAX: Final = 1024 * 1024  # characters of one CSV line (a row of numbers is far shorter)
CSV_BLOCK: Final = 65536  # CSV numbers parsed before they become part of the float64 table

# LLM-SR's published problems (deep-symbolic-mathematics/LLM-SR data/<name>/*.csv), for CSV
# folders without metadata: each variable's description as LLM-SR's specification
# (specs/specification_<name>_numpy.txt) gives it, keyed by the CSV header's names. No problem
# description: the reference's prompt has none.
KNOWN_CSV_PROBLEMS: Final[dict[str, dict[str, Any]]] = {
    "oscillator1": {
        "symbol_descs": {
            "a": "acceleration in a damped nonlinear oscillator system with driving force",
            "x": "current position",
            "v": "velocity",
        },
        "domain": "phys_osc",
    },
    "oscillator2": {
        "symbol_descs": {
            "a": "acceleration in a damped nonlinear oscillator system with driving force",
            "t": "time",
            "x": "current position",
            "v": "velocity",
        },
        "domain": "phys_osc",
    },
    "bactgrow": {
        "symbol_descs": {
            "db": "E. Coli bacterial growth rate",
            "b": "population density of the bacterial species",
            "s": "substrate concentration",
            "temp": "temperature",
            "pH": "pH level",
        },
        "domain": "bio_pop_growth",
    },
    "stressstrain": {
        "symbol_descs": {"stress": "stress in Aluminium rod", "strain": "strain", "temp": "temperature"},
        "domain": "matsci",
    },
}


def load_problems(
    path: Path, budget: DataBudget | None = None, *, partial_release: bool = False
) -> list[Problem]:
    """Every problem behind `path` (see the module docstring for the layouts), read only from
    inside `path` (or, for a file, its folder) and within `budget` (`srbench.data.bounds`);
    `partial_release` lets an official release that lacks parts load the rest
    (`release.load_release`)."""
    path = Path(path)
    budget = DataBudget.from_env() if budget is None else budget
    if path.is_dir():
        if (path / RELEASE_FILE).is_file():
            return load_release(path / RELEASE_FILE, budget, root=path, partial=partial_release)
        if (path / "train.csv").is_file():
            return [load_csv_problem(path, budget=budget, root=path)]
        if sorted(path.glob("*.parquet")) or sorted(path.glob("data/*.parquet")):
            return load_parquet(path, budget)
        raise LsrbUsageError(
            f"{path}: holds neither {RELEASE_FILE}, parquet files nor train.csv (not an LLM-SRBench "
            "release or a CSV problem folder)."
        )
    if not path.is_file():
        raise LsrbUsageError(f"{path}: does not exist.")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return load_index(path, budget)
    if suffix in (".hdf5", ".h5"):
        return load_release(path, budget, partial=partial_release)
    if suffix == ".parquet":
        return load_parquet(path, budget)
    if path.name in (METADATA_FILE, "train.csv"):
        return [load_csv_problem(path.parent, budget=budget, root=path.parent)]
    raise LsrbUsageError(
        f"{path}: not a problem file (expected an index .jsonl, {RELEASE_FILE}, or a CSV problem "
        f"folder's {METADATA_FILE}/train.csv)."
    )


# -- index (.jsonl) ------------------------------------------------------------------------------


def load_index(path: Path, budget: DataBudget | None = None) -> list[Problem]:
    """An index's problems; each `data` path is relative and stays inside the index's folder."""
    budget = DataBudget.from_env() if budget is None else budget
    root = path.parent
    problems: list[Problem] = []
    for lineno, obj in iter_jsonl(path):
        where = f"{path}:{lineno}"
        if not isinstance(obj, dict):
            raise LsrbUsageError(f"{where}: expected a JSON object per line, got {type(obj).__name__}.")
        data = obj.get("data")
        if not isinstance(data, str) or not data or "\x00" in data:
            raise LsrbUsageError(
                f"{where}: field 'data' is missing or not a path (an .npz file or a CSV folder)."
            )
        unknown = set(obj) - set(META_FIELDS) - {"data", "data_sha256"}
        if unknown:
            raise LsrbUsageError(f"{where}: field '{sorted(unknown)[0]}' is not a problem field.")
        problem = relative_path_problem(data)
        if problem is not None:
            if data.startswith(("/", "~")):
                problem = "is absolute"
            raise LsrbUsageError(
                f"{where}: field 'data': {data[:80]!r} {problem}; data paths are relative to the "
                "index's folder and stay inside it."
            )
        target = contained(root, root / data, where, "data")
        meta = {k: v for k, v in obj.items() if k in META_FIELDS}
        if target.is_dir():
            problems.append(load_csv_problem(target, meta, where=where, budget=budget, root=root))
            continue
        if not target.is_file():
            raise LsrbUsageError(f"{where}: field 'data': {target} does not exist.")
        if target.suffix != ".npz":
            raise LsrbUsageError(
                f"{where}: field 'data': {target.name} is neither an .npz file nor a CSV folder."
            )
        arrays = read_npz(target, where, budget)
        problems.append(build_problem({**meta, **arrays}, f"{where} ({target.name})"))
    return check_unique(problems, path)


def read_npz(path: Path, where: str, budget: DataBudget | None = None) -> dict[str, np.ndarray | None]:
    """The splits of an .npz, each member's declared size and .npy header checked against
    `budget` before its data is decompressed (a zip bomb is refused, not inflated)."""
    budget = DataBudget.from_env() if budget is None else budget
    field = f"field 'data': {path}"
    if not zipfile.is_zipfile(path):
        raise LsrbUsageError(f"{where}: {field} is not an .npz file (not a zip archive).")
    wanted = {name for names in SPLIT_ALIASES.values() for name in names}
    stored: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename.removesuffix(".npy")
                if name not in wanted or name in stored:
                    continue
                stored[name] = _npz_member(archive, info, f"{where} ({path.name})", name, budget)
    except LsrbUsageError:
        raise
    except Exception as exc:  # a corrupt archive fails as BadZipFile, zlib.error, EOFError, ValueError...
        raise LsrbUsageError(f"{where}: {field} is not a readable .npz file ({exc}).") from None
    return pick_splits(stored, f"{where} ({path.name})")


def _npz_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, name: str, budget: DataBudget
) -> np.ndarray:
    budget_bytes = budget.table_bytes + 64 * 1024  # the .npy header on top of the numbers
    if info.file_size > budget_bytes:
        budget.take_bytes(info.file_size, where, name, "the archive member")
    with archive.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise LsrbUsageError(f"{where}: field '{name}': .npy format version {version} is not supported.")
    budget.take(tuple(shape), dtype.kind, where, name)
    if math.prod(shape) * dtype.itemsize > info.file_size:
        raise LsrbUsageError(f"{where}: field '{name}': the array is shorter than its header says.")
    with archive.open(info) as fh:
        return np.array(np.lib.format.read_array(fh, allow_pickle=False), dtype=np.float64)


def write_problem_files(problems: Iterable[Problem], index_path: Path, data_dir: str = "data") -> Path:
    """Write an index .jsonl plus one compressed .npz per problem (the built-in suite's format).

    Data are stored at the precision data/precision.py states, so regenerating a set on
    another CPU gives the same files up to the last stored bit."""
    from pytest_lsrb.srbench.data.precision import stored_split

    index_path = Path(index_path)
    folder = index_path.parent / data_dir
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for p in problems:
        problem = file_name_problem(p.name)
        if problem is not None:  # names come from tables (Feynman's `Filename`): stay in `folder`
            raise LsrbUsageError(f"problem name {p.name!r} {problem}; it cannot name a data file.")
        truth = p.ground_truth()
        arrays: dict[str, Any] = {
            s: stored_split(getattr(p, s), truth) for s in SPLITS if getattr(p, s) is not None
        }
        rel = f"{data_dir}/{p.name}.npz"
        np.savez_compressed(inside(index_path.parent, rel), **arrays)
        lines.append(json.dumps({**p.metadata(), "data": rel}, ensure_ascii=False))
    index_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return index_path


# -- CSV problem folders -------------------------------------------------------------------------


def _bounded_lines(fh: Any, path: Path) -> Iterator[str]:
    """The file's lines, refusing one longer than CSV_LINE_MAX before it is held whole."""
    lineno = 0
    while True:
        line = fh.readline(CSV_LINE_MAX + 1)
        if not line:
            return
        lineno += 1
        if len(line) > CSV_LINE_MAX:
            raise LsrbUsageError(f"{path}:{lineno}: a line longer than {CSV_LINE_MAX} characters.")
        yield line


def read_csv_table(path: Path, budget: DataBudget | None = None) -> tuple[list[str], np.ndarray]:
    """The header and the rows of numbers, parsed a block at a time and counted against `budget`
    as they stream (a huge file is refused at the row that passes the limit)."""
    budget = DataBudget.from_env() if budget is None else budget
    blocks: list[np.ndarray] = []
    rows: list[list[float]] = []
    reader: Any = None
    count = 0
    try:
        with path.open("r", encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(_bounded_lines(fh, path))
            header = next(reader, None)
            if not header:
                raise LsrbUsageError(f"{path}: is empty (expected a header row).")
            header = [h.strip() for h in header]
            for r in reader:
                line = reader.line_num
                if not r:
                    continue
                if len(r) != len(header):
                    raise LsrbUsageError(
                        f"{path}:{line}: expected {len(header)} numbers (one per header column), "
                        f"got {len(r)}."
                    )
                try:
                    rows.append([float(v) for v in r])
                except ValueError:
                    raise LsrbUsageError(f"{path}:{line}: not a row of numbers.") from None
                count += 1
                if len(rows) * len(header) >= CSV_BLOCK:
                    if count * len(header) * 8 > budget.table_bytes:  # refused with its size
                        budget.take((count, len(header)), "f", f"{path}:{line}", "rows")
                    budget.take((len(rows), len(header)), "f", f"{path}:{line}", "rows")
                    blocks.append(np.array(rows, dtype=np.float64))
                    rows = []
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise LsrbUsageError(f"{path}: not valid UTF-8 text.") from None
    except csv.Error as exc:
        at = f":{reader.line_num}" if reader is not None and reader.line_num else ""
        raise LsrbUsageError(f"{path}{at}: not a CSV row ({exc}).") from None
    if not count:
        raise LsrbUsageError(f"{path}: expected rows of {len(header)} numbers under the header.")
    if rows:
        if count * len(header) * 8 > budget.table_bytes:
            budget.take((count, len(header)), "f", str(path), "rows")
        budget.take((len(rows), len(header)), "f", str(path), "rows")
        blocks.append(np.array(rows, dtype=np.float64))
    return header, np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def load_csv_problem(
    folder: Path,
    meta: Mapping[str, Any] | None = None,
    where: str | None = None,
    budget: DataBudget | None = None,
    root: Path | None = None,
) -> Problem:
    """A CSV problem folder; each file it reads resolves inside `root` (default: the folder)."""
    folder = Path(folder)
    budget = DataBudget.from_env() if budget is None else budget
    root = folder if root is None else root
    fields: dict[str, Any] = {}
    meta_path = folder / METADATA_FILE
    if meta_path.is_file():
        contained(root, meta_path, str(meta_path), METADATA_FILE)
        budget.take_bytes(meta_path.stat().st_size, str(meta_path), METADATA_FILE, "the file")
        try:
            loaded = loads_json(meta_path.read_bytes())
        except json.JSONDecodeError as exc:
            raise LsrbUsageError(f"{meta_path}: not valid JSON ({exc.msg} at line {exc.lineno}).") from None
        if not isinstance(loaded, dict):
            raise LsrbUsageError(f"{meta_path}: expected a JSON object.")
        unknown = set(loaded) - set(META_FIELDS)
        if unknown:
            raise LsrbUsageError(f"{meta_path}: field '{sorted(unknown)[0]}' is not a problem field.")
        fields.update(loaded)
    fields.update(meta or {})
    where = where or str(meta_path if meta_path.is_file() else folder)
    tables: dict[str, Any] = {}
    header: list[str] | None = None
    for split, names in CSV_FILES.items():
        path = next((folder / n for n in names if (folder / n).is_file()), None)
        if path is None:
            if split == "ood_test":
                tables[split] = None
                continue
            raise LsrbUsageError(f"{folder}: field '{split}': none of {', '.join(names)} exists.")
        cols, data = read_csv_table(contained(root, path, str(path), split), budget)
        if header is None:
            header = cols
        elif cols != header:
            raise LsrbUsageError(f"{path}: the header {cols} differs from train.csv's {header}.")
        tables[split] = np.concatenate([data[:, -1:], data[:, :-1]], axis=1)  # output first
    assert header is not None
    header_symbols = [header[-1], *header[:-1]]
    known = KNOWN_CSV_PROBLEMS.get(folder.name, {})
    fields.setdefault("name", folder.name)
    fields.setdefault("symbols", header_symbols)
    given = fields["symbols"]
    if (
        not isinstance(given, list)
        or not all(isinstance(sym, str) for sym in given)
        or sorted(given) != sorted(header_symbols)
    ):
        raise LsrbUsageError(
            f"{where}: field 'symbols': {fields['symbols']} does not match the CSV header {header}."
        )
    symbols = list(fields["symbols"])
    if symbols != header_symbols:  # reorder the columns to the metadata's symbol order
        order = [header_symbols.index(s) for s in symbols]
        tables = {k: (None if v is None else v[:, order]) for k, v in tables.items()}
    descs = known.get("symbol_descs", {})
    fields.setdefault("symbol_descs", [descs.get(s, s) for s in symbols])
    fields.setdefault("symbol_properties", ["O"] + ["V"] * (len(symbols) - 1))
    fields.setdefault("problem_set", "llmsr" if known else "custom")
    fields.setdefault("domain", known.get("domain"))
    return build_problem({**fields, **tables}, where)
