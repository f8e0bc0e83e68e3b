"""Problem files in, validated `Problem`s out. Every mistake names the file and the field.

Accepted layouts (`load_problems` picks by what the path is):

- an index `*.jsonl`: one problem per line, its metadata plus `"data": "<path>"` relative to the
  index, pointing at an `.npz` (arrays `train`, `test`, `ood_test`) or a CSV problem folder;
- the official LLM-SRBench release folder (or its `lsr_bench_data.hdf5`): groups
  `/lsr_transform/<name>` and `/lsr_synth/<domain>/<name>` holding `train`, `test`, `ood_test`
  (older releases: `train_data`, `id_test_data`, `ood_test_data`), with the metadata rows in
  `data/<split>-*.parquet` (as published) or `<split>.jsonl`;
- a CSV problem folder (or its `metadata.json` / `train.csv`): `train.csv`, `test_id.csv`,
  optional `test_ood.csv`, a header row, the target in the last column, and an optional
  `metadata.json` with the problem's fields.
"""

from __future__ import annotations

import csv
import json
import re
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
from pydantic import ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.paths import file_name_problem, inside
from pytest_lsrb.core.rows import iter_jsonl
from pytest_lsrb.core.textfiles import loads_json, refuse_lone_surrogates
from pytest_lsrb.srbench.problem import SPLITS, SYNTH_SET, TRANSFORM_SET, Problem

RELEASE_FILE: Final = "lsr_bench_data.hdf5"
# Older releases named the splits differently.
SPLIT_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "train": ("train", "train_data"),
    "test": ("test", "id_test_data", "test_data"),
    "ood_test": ("ood_test", "ood_test_data"),
}
RELEASE_SPLITS: Final = (
    "lsr_transform",
    "lsr_synth_chem_react",
    "lsr_synth_bio_pop_growth",
    "lsr_synth_phys_osc",
    "lsr_synth_matsci",
)
CSV_FILES: Final[dict[str, tuple[str, ...]]] = {
    "train": ("train.csv",),
    "test": ("test_id.csv", "test.csv"),
    "ood_test": ("test_ood.csv", "ood_test.csv"),
}
METADATA_FILE: Final = "metadata.json"
META_FIELDS: Final[tuple[str, ...]] = (
    "name",
    "symbols",
    "symbol_descs",
    "symbol_properties",
    "expression",
    "desc",
    "problem_set",
    "domain",
)

# What LLM-SR's published problems are about, for CSV folders that come without metadata.
KNOWN_CSV_PROBLEMS: Final[dict[str, dict[str, Any]]] = {
    "oscillator1": {
        "symbol_descs": {"a": "acceleration", "x": "current position", "v": "velocity"},
        "desc": "Acceleration of a damped nonlinear oscillator with a driving force, as a function "
        "of its position and velocity.",
        "domain": "phys_osc",
    },
    "oscillator2": {
        "symbol_descs": {"a": "acceleration", "t": "time", "x": "current position", "v": "velocity"},
        "desc": "Acceleration of a damped nonlinear oscillator with a driving force, as a function "
        "of time, position and velocity.",
        "domain": "phys_osc",
    },
    "bactgrow": {
        "symbol_descs": {
            "db": "population growth rate",
            "B": "population density",
            "S": "substrate concentration",
            "T": "temperature",
            "pH": "pH level",
        },
        "desc": "Growth rate of an E. coli population as a function of population density, "
        "substrate concentration, temperature and pH.",
        "domain": "bio_pop_growth",
    },
    "stressstrain": {
        "symbol_descs": {"stress": "stress", "strain": "strain", "temp": "temperature"},
        "desc": "Stress in an aluminium rod as a function of strain and temperature, across its "
        "elastic and plastic regions.",
        "domain": "matsci",
    },
}


def load_problems(path: Path) -> list[Problem]:
    """Every problem behind `path` (see the module docstring for the layouts)."""
    path = Path(path)
    if path.is_dir():
        if (path / RELEASE_FILE).is_file():
            return load_release(path / RELEASE_FILE)
        if (path / "train.csv").is_file():
            return [load_csv_problem(path)]
        raise LsrbUsageError(
            f"{path}: holds neither {RELEASE_FILE} nor train.csv (not an LLM-SRBench release or a "
            "CSV problem folder)."
        )
    if not path.is_file():
        raise LsrbUsageError(f"{path}: does not exist.")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return load_index(path)
    if suffix in (".hdf5", ".h5"):
        return load_release(path)
    if path.name in (METADATA_FILE, "train.csv"):
        return [load_csv_problem(path.parent)]
    raise LsrbUsageError(
        f"{path}: not a problem file (expected an index .jsonl, {RELEASE_FILE}, or a CSV problem "
        f"folder's {METADATA_FILE}/train.csv)."
    )


def check_unique(problems: Iterable[Problem], where: Path) -> list[Problem]:
    seen: set[str] = set()
    out = list(problems)
    for p in out:
        if p.name in seen:
            raise LsrbUsageError(f"{where}: field 'name': '{p.name}' appears twice (names must be unique).")
        seen.add(p.name)
    if not out:
        raise LsrbUsageError(f"{where}: holds no problems.")
    return out


# -- validation messages -----------------------------------------------------------------------


def describe_problem_error(err: ValidationError) -> str:
    """`field 'x': what is wrong` for the first problem pydantic found."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"field '{loc}' is missing (required)"
    if not loc:
        m = re.match(r"^(\w+): (.*)$", msg, re.S)
        if m:
            return f"field '{m.group(1)}': {m.group(2)}"
        return msg
    return f"field '{loc}': {msg[0].lower() + msg[1:] if msg else msg}"


def build_problem(fields: Mapping[str, Any], where: str) -> Problem:
    # Every source (index line, CSV folder metadata, parquet row) reaches a Problem through here.
    refuse_lone_surrogates({k: v for k, v in fields.items() if k not in SPLITS}, where)
    try:
        return Problem.model_validate(dict(fields))
    except ValidationError as exc:
        raise LsrbUsageError(f"{where}: {describe_problem_error(exc)}.") from None


# -- index (.jsonl) ------------------------------------------------------------------------------


def load_index(path: Path) -> list[Problem]:
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
        target = (path.parent / data).resolve()
        meta = {k: v for k, v in obj.items() if k in META_FIELDS}
        if target.is_dir():
            problems.append(load_csv_problem(target, meta, where=where))
            continue
        if not target.is_file():
            raise LsrbUsageError(f"{where}: field 'data': {target} does not exist.")
        if target.suffix != ".npz":
            raise LsrbUsageError(
                f"{where}: field 'data': {target.name} is neither an .npz file nor a CSV folder."
            )
        arrays = read_npz(target, where)
        problems.append(build_problem({**meta, **arrays}, f"{where} ({target.name})"))
    return check_unique(problems, path)


def read_npz(path: Path, where: str) -> dict[str, np.ndarray | None]:
    if not zipfile.is_zipfile(path):
        raise LsrbUsageError(f"{where}: field 'data': {path} is not an .npz file (not a zip archive).")
    try:
        with np.load(path, allow_pickle=False) as npz:
            stored = {k: np.array(npz[k]) for k in npz.files}
    except Exception as exc:  # a corrupt archive fails as BadZipFile, zlib.error, EOFError, ValueError...
        raise LsrbUsageError(f"{where}: field 'data': {path} is not a readable .npz file ({exc}).") from None
    return _pick_splits(stored, f"{where} ({path.name})")


def _pick_splits(stored: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split, names in SPLIT_ALIASES.items():
        found = next((n for n in names if n in stored), None)
        if found is None and split != "ood_test":
            raise LsrbUsageError(f"{where}: field '{split}' is missing (looked for {', '.join(names)}).")
        out[split] = None if found is None else stored[found]
    return out


def write_problem_files(problems: Iterable[Problem], index_path: Path, data_dir: str = "data") -> Path:
    """Write an index .jsonl plus one compressed .npz per problem (the built-in suite's format).

    Data are stored at the precision generate/manifest.py states, so regenerating a set on
    another CPU gives the same files up to the last stored bit."""
    from pytest_lsrb.srbench.generate.manifest import stored_split

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


def read_csv_table(path: Path) -> tuple[list[str], np.ndarray]:
    rows: list[list[float]] = []
    reader: Any = None
    try:
        with path.open("r", encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
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
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise LsrbUsageError(f"{path}: not valid UTF-8 text.") from None
    except csv.Error as exc:
        at = f":{reader.line_num}" if reader is not None and reader.line_num else ""
        raise LsrbUsageError(f"{path}{at}: not a CSV row ({exc}).") from None
    if not rows:
        raise LsrbUsageError(f"{path}: expected rows of {len(header)} numbers under the header.")
    return header, np.array(rows, dtype=np.float64)


def load_csv_problem(
    folder: Path, meta: Mapping[str, Any] | None = None, where: str | None = None
) -> Problem:
    folder = Path(folder)
    fields: dict[str, Any] = {}
    meta_path = folder / METADATA_FILE
    if meta_path.is_file():
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
        cols, data = read_csv_table(path)
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
    fields.setdefault("desc", known.get("desc", ""))
    fields.setdefault("problem_set", "llmsr" if known else "custom")
    fields.setdefault("domain", known.get("domain"))
    return build_problem({**fields, **tables}, where)


# -- the official release (HDF5 + metadata rows) ------------------------------------------------


def _require_h5py() -> Any:
    try:
        import h5py
    except ImportError:  # pragma: no cover - h5py is in the dev extras
        raise LsrbUsageError(
            "reading the LLM-SRBench release needs h5py: pip install 'pytest-lsrb[srbench]'."
        ) from None
    return h5py


def release_metadata(root: Path) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """split name -> [(where, row)] from `data/<split>-*.parquet` or `<split>.jsonl` files."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for split in RELEASE_SPLITS:
        rows: list[tuple[str, dict[str, Any]]] = []
        for folder in (root / "data", root):
            for path in sorted(folder.glob(f"{split}-*.parquet")) + sorted(folder.glob(f"{split}.parquet")):
                rows += [(f"{path}: row {i + 1}", r) for i, r in enumerate(_read_parquet(path))]
            for path in sorted(folder.glob(f"{split}.jsonl")) + sorted(folder.glob(f"{split}-*.jsonl")):
                rows += [(f"{path}:{n}", r) for n, r in iter_jsonl(path)]
        if rows:
            out[split] = rows
    return out


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is in the dev extras
        raise LsrbUsageError(
            f"{path}: reading parquet metadata needs pyarrow: pip install 'pytest-lsrb[srbench]'."
        ) from None
    try:
        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise LsrbUsageError(f"{path}: not a readable parquet file ({exc}).") from None
    return rows


def load_release(h5_path: Path) -> list[Problem]:
    h5py = _require_h5py()
    root = h5_path.parent
    meta = release_metadata(root)
    if not meta:
        raise LsrbUsageError(
            f"{root}: no metadata rows found next to {h5_path.name} (expected data/<split>-*.parquet "
            f"or <split>.jsonl for splits {', '.join(RELEASE_SPLITS)})."
        )
    problems: list[Problem] = []
    try:
        h5 = h5py.File(h5_path, "r")
    except Exception as exc:  # OSError mostly; a damaged superblock can raise others
        raise LsrbUsageError(f"{h5_path}: not a readable HDF5 file ({exc}).") from None
    with h5:
        for split, rows in meta.items():
            domain = None if split == TRANSFORM_SET else split.removeprefix(f"{SYNTH_SET}_")
            problem_set = TRANSFORM_SET if split == TRANSFORM_SET else SYNTH_SET
            for where, row in rows:
                if not isinstance(row, dict) or not isinstance(row.get("name"), str) or not row["name"]:
                    raise LsrbUsageError(f"{where}: field 'name' is missing or not a string.")
                name = row["name"]
                group_path = f"/{TRANSFORM_SET}/{name}" if domain is None else f"/{SYNTH_SET}/{domain}/{name}"
                group = _h5_group(h5, h5py, group_path)
                if group is None:
                    raise LsrbUsageError(f"{h5_path}: group '{group_path}' (for {where}) does not exist.")
                stored = _h5_tables(group, h5py, f"{h5_path}: group '{group_path}'")
                arrays = _pick_splits(stored, f"{h5_path}: {group_path}")
                fields = {k: row[k] for k in META_FIELDS if k in row and row[k] is not None}
                fields.setdefault("problem_set", problem_set)
                if domain is not None:
                    fields.setdefault("domain", domain)
                fields.setdefault("desc", default_context(domain))
                problems.append(build_problem({**fields, **arrays}, f"{where} ({group_path})"))
    return check_unique(problems, h5_path)


def _h5_group(h5: Any, h5py: Any, path: str) -> Any:
    """The group at `path`, or None (a name from the metadata may hold `/`, `..` or NUL)."""
    try:
        node = h5.get(path)
    except Exception:  # h5py raises KeyError, ValueError, OSError or RuntimeError on a damaged file
        return None
    return node if isinstance(node, h5py.Group) else None


def _h5_tables(group: Any, h5py: Any, where: str) -> dict[str, np.ndarray]:
    stored: dict[str, np.ndarray] = {}
    try:
        keys = list(group)
    except Exception:  # a damaged file (h5py raises OSError or RuntimeError)
        raise LsrbUsageError(f"{where}: cannot be read (the HDF5 file is damaged).") from None
    for key in keys:
        try:
            node = group[key]
            if isinstance(node, h5py.Dataset):
                stored[key] = np.array(node[...], dtype=np.float64)
        except Exception:  # not numbers, or damaged (h5py raises several unrelated types)
            raise LsrbUsageError(f"{where}: field '{key}': not a readable table of numbers.") from None
    return stored


DOMAIN_CONTEXT: Final[dict[str | None, str]] = {
    None: "A physics equation from the Feynman lectures, rewritten to give a different variable.",
    "chem_react": "Chemical reaction kinetics: the rate of change of a concentration over time.",
    "bio_pop_growth": "Biological population growth: the rate of change of a population over time.",
    "phys_osc": "A nonlinear oscillator: the acceleration as a function of time, position and velocity.",
    "matsci": "Material science: stress as a function of strain and temperature.",
}


def default_context(domain: str | None) -> str:
    return DOMAIN_CONTEXT.get(domain, "")
