"""The official LLM-SRBench data: the published release (HDF5 + metadata rows) and the
self-contained parquet layout, read as the reference reads them (`bench/datamodules.py`).

- Release: `lsr_bench_data.hdf5` with groups `/lsr_transform/<name>` and
  `/lsr_synth/<domain>/<name>` holding the splits (column 0 the output, then the input
  variables), and metadata rows (`name`, `symbols`, `symbol_descs`, `symbol_properties`,
  `expression`) in the hub's `data/<split>-*.parquet` or `<split>.jsonl`, split names
  `lsr_transform` and `lsr_synth_<domain>`.
- Self-contained parquet: the same metadata per row plus the data as `train_input` (rows of
  inputs) and `train_output`, likewise `test_*` (or `id_test_*`) and optional `ood_test_*`.

As in the reference, the inputs are the symbols whose property holds `V` (the others, constants,
have no data column) and names are cleaned its way (`$`, `\\` and "text" dropped, spaces to `_`).
The ground truth is normalised as its helpers do (`^` to `**`, π, ε, `·`); names in it that are not
inputs are template parameters (`F0*sin(t) - omega0**2*x`), so symbolic accuracy compares forms up
to them. A ground truth that still does not parse never stops the run: the problem loads without
one (symbolic accuracy not applicable) and a warning names it. No description is invented: the
reference's rows have none and its prompts show none.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any, Final

import numpy as np

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import iter_jsonl
from pytest_lsrb.equations import EquationError, parse_expression
from pytest_lsrb.srbench.data.bounds import MB, DataBudget, contained, text_size
from pytest_lsrb.srbench.data.problem import SYNTH_SET, TRANSFORM_SET, Problem
from pytest_lsrb.srbench.data.problem_rows import META_FIELDS, build_problem, check_unique, pick_splits

RELEASE_FILE: Final = "lsr_bench_data.hdf5"
ROW_TEXT_MAX: Final = MB  # bytes of metadata (names, descriptions, symbols) one parquet row may hold
RELEASE_SPLITS: Final = (
    "lsr_transform",
    "lsr_synth_chem_react",
    "lsr_synth_bio_pop_growth",
    "lsr_synth_phys_osc",
    "lsr_synth_matsci",
)
PARQUET_SPLITS: Final[dict[str, tuple[str, ...]]] = {
    "train": ("train",),
    "test": ("test", "id_test"),
    "ood_test": ("ood_test",),
}
# The reference's strexpression2sympy/evaluate_expression rewrites.
_TRUTH_REWRITES: Final = (("^", "**"), ("π", "pi"), ("ε", "epsilon"), ("·", "*"), ("$", ""), ("\\", ""))


# Problems per release split in the paper (LLM-SRBench, Table 1's groups; the text counts 239 with
# 43 physics problems, the published release holds 240).
PAPER_COUNTS: Final[dict[str, int]] = {
    "lsr_transform": 111,
    "lsr_synth_chem_react": 36,
    "lsr_synth_bio_pop_growth": 24,
    "lsr_synth_phys_osc": 44,
    "lsr_synth_matsci": 25,
}
PARTIAL_FLAG: Final = "--lsrb-sr-partial-release"


class GroundTruthWarning(UserWarning):
    """A problem's ground truth could not be read: it loads without one."""


class ReleaseWarning(UserWarning):
    """The release loaded differs from the paper's: other counts per group, or (with
    --lsrb-sr-partial-release) parts missing."""


def _split_counts(problems: list[Problem]) -> dict[str, int]:
    counts = dict.fromkeys(PAPER_COUNTS, 0)
    for p in problems:
        split = p.problem_set if p.domain is None else f"{p.problem_set}_{p.domain}"
        counts[split] = counts.get(split, 0) + 1
    return counts


def release_counts_line(problems: list[Problem], missing: list[str]) -> str:
    """The loaded problems per release split against the paper's (`loaded/paper`), and what a
    partial release lacks: one line for Table 1 and the warnings."""
    counts = _split_counts(problems)
    parts = ", ".join(
        f"{s} {n}/{PAPER_COUNTS[s]}" if s in PAPER_COUNTS else f"{s} {n}" for s, n in counts.items()
    )
    line = f"official release, problems per split (loaded/paper): {parts}; {len(problems)}/240"
    if missing:
        line = f"PARTIAL release ({'; '.join(missing)}); " + line
    return line


def _check_counts(problems: list[Problem], missing: list[str], where: Path) -> list[Problem]:
    """Every problem with the release's counts line; a warning when they differ from the paper's."""
    line = release_counts_line(problems, missing)
    if missing or _split_counts(problems) != PAPER_COUNTS:
        warnings.warn(f"{where}: the release differs from the paper's: {line}.", ReleaseWarning, stacklevel=3)
    return [p.model_copy(update={"release_note": line}) for p in problems]


def clean_symbol(name: str) -> str:
    """A symbol as the reference's LLMSRSearcher names it: `$`/`\\` stripped, spaces to `_`,
    "text" dropped (`$\\theta$` -> `theta`)."""
    return name.strip("$").strip("\\").replace(" ", "_").replace("text", "")


def read_ground_truth(expression: str, inputs: list[str], name: str) -> str | None:
    """The ground truth in the equation language, or None (with a warning naming the problem)
    when it does not parse even after the reference's rewrites."""
    text = expression
    for old, new in _TRUTH_REWRITES:
        text = text.replace(old, new)
    text = re.sub(r"\s+", " ", text).strip()
    try:
        parse_expression(text, inputs, free_params=True)
    except EquationError as exc:
        warnings.warn(
            f"problem {name}: its ground truth {expression!r} cannot be read ({exc}); it is loaded "
            "without one (symbolic accuracy not applicable).",
            GroundTruthWarning,
            stacklevel=2,
        )
        return None
    return text


def official_fields(row: dict[str, Any], where: str, problem_set: str, domain: str | None) -> dict[str, Any]:
    """A metadata row's Problem fields, the reference's way (see the module docstring)."""
    if not isinstance(row.get("name"), str) or not row["name"]:
        raise LsrbUsageError(f"{where}: field 'name' is missing or not a string.")
    fields = {k: row[k] for k in META_FIELDS if k in row and row[k] is not None}
    symbols = fields.get("symbols")
    if isinstance(symbols, list) and all(isinstance(s, str) for s in symbols):
        fields["symbols"] = [clean_symbol(s) for s in symbols]
    props = fields.get("symbol_properties")
    expression = fields.pop("expression", None)
    if isinstance(expression, str) and isinstance(props, list) and isinstance(fields.get("symbols"), list):
        inputs = [s for s, p in zip(fields["symbols"][1:], props[1:], strict=False) if "V" in str(p)]
        truth = read_ground_truth(expression, inputs, row["name"])
        if truth is not None:
            fields["expression"] = truth
    fields.setdefault("problem_set", problem_set)
    if domain is not None:
        fields.setdefault("domain", domain)
    return fields


def _split_of(name: str) -> tuple[str, str | None]:
    """(problem_set, domain) of a hub split name."""
    if name.startswith(f"{SYNTH_SET}_"):
        return SYNTH_SET, name.removeprefix(f"{SYNTH_SET}_")
    return TRANSFORM_SET, None


# -- the release (HDF5 + metadata rows) -----------------------------------------------------------


def _require_h5py() -> Any:
    try:
        import h5py
    except ImportError:  # pragma: no cover - h5py is in the dev extras
        raise LsrbUsageError(
            "reading the LLM-SRBench release needs h5py: pip install h5py (the srbench extra; from "
            "a clone: pip install -e '.[srbench]')."
        ) from None
    return h5py


def release_metadata(root: Path, budget: DataBudget) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """split name -> [(where, row)] from `data/<split>-*.parquet` or `<split>.jsonl` files."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for split in RELEASE_SPLITS:
        rows: list[tuple[str, dict[str, Any]]] = []
        for folder in (root / "data", root):
            for path in sorted(folder.glob(f"{split}-*.parquet")) + sorted(folder.glob(f"{split}.parquet")):
                contained(root, path, str(path), "metadata")
                rows += [(f"{path}: row {i + 1}", r) for i, r in enumerate(read_parquet(path, budget))]
            for path in sorted(folder.glob(f"{split}.jsonl")) + sorted(folder.glob(f"{split}-*.jsonl")):
                contained(root, path, str(path), "metadata")
                rows += [(f"{path}:{n}", r) for n, r in iter_jsonl(path)]
        if rows:
            out[split] = rows
    return out


def _is_data_column(name: str) -> bool:
    return name.endswith(("_input", "_output"))


def read_parquet(path: Path, budget: DataBudget | None = None) -> list[dict[str, Any]]:
    """The rows of a parquet file, one at a time: the file's metadata is checked first (each
    column of each row group within the per-table limit, decoded), then each row's data columns
    become float64 arrays (`<split>_input`/`<split>_output`) and the rest plain values."""
    budget = DataBudget.from_env() if budget is None else budget
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is in the dev extras
        raise LsrbUsageError(
            f"{path}: reading parquet files needs pyarrow: pip install pyarrow (the srbench extra; "
            "from a clone: pip install -e '.[srbench]')."
        ) from None
    try:
        parquet = pq.ParquetFile(path)
        meta = parquet.metadata
        names = [meta.schema.column(c).path for c in range(meta.num_columns)]
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(meta.num_columns):
                chunk = group.column(c)
                size = max(chunk.num_values * 8, chunk.total_uncompressed_size)
                if size > budget.table_bytes:
                    at = f"{path}: row group {g + 1}"
                    budget.take_bytes(size, at, names[c].split(".")[0], "the column")
        rows: list[dict[str, Any]] = []
        for batch in parquet.iter_batches(batch_size=1):
            for r in range(batch.num_rows):
                where = f"{path}: row {len(rows) + 1}"
                row: dict[str, Any] = {}
                for name, column in zip(batch.schema.names, batch.columns, strict=True):
                    cell = column.slice(r, 1)
                    if _is_data_column(name):
                        row[name] = _arrow_numbers(cell, where, name, budget)
                    else:
                        row[name] = cell.to_pylist()[0]
                size = text_size({k: v for k, v in row.items() if not _is_data_column(k)})
                if size > ROW_TEXT_MAX:
                    raise LsrbUsageError(
                        f"{where}: its metadata holds {size / MB:.1f} MB of text, over the "
                        f"{ROW_TEXT_MAX // MB} MB a problem's names and descriptions may take."
                    )
                budget.take_bytes(size, where, "metadata", "the row")
                rows.append(row)
    except LsrbUsageError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise LsrbUsageError(f"{path}: not a readable parquet file ({exc}).") from None
    return rows


def _arrow_numbers(cell: Any, where: str, name: str, budget: DataBudget) -> np.ndarray | None:
    """One row's list (of numbers, or of equal-length lists of numbers) as a float64 array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def nested(t: Any) -> bool:
        return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))

    def numeric(t: Any) -> bool:
        return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t))

    bad = LsrbUsageError(f"{where}: field '{name}': not a table of numbers.")
    if cell.null_count:
        return None
    if not nested(cell.type):
        raise bad
    outer = cell.flatten()
    if numeric(outer.type):
        budget.take((len(outer),), "f", where, name)
        return np.asarray(outer.to_numpy(zero_copy_only=False), dtype=np.float64)
    if not nested(outer.type) or outer.null_count or not numeric(outer.type.value_type):
        raise bad
    lengths = np.asarray(pc.list_value_length(outer).to_numpy(zero_copy_only=False))
    width = int(lengths[0]) if len(lengths) else 0
    if len(lengths) and not (lengths == width).all():
        raise LsrbUsageError(f"{where}: field '{name}': rows of different lengths, not a table.")
    budget.take((len(outer), width), "f", where, name)
    values = np.asarray(outer.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
    return values.reshape(len(outer), width)


def load_release(
    h5_path: Path, budget: DataBudget | None = None, root: Path | None = None, *, partial: bool = False
) -> list[Problem]:
    """Every problem of the release: metadata rows next to the HDF5 file (inside `root`, default its
    folder), each group's tables read only when they are plain datasets in this file, within budget.
    A split whose data is in the HDF5 file but whose metadata rows are missing, or a metadata row
    whose data is missing, stops the load with one sentence naming it, unless `partial`
    (--lsrb-sr-partial-release): then the rest loads, a warning names what is missing and every
    problem's `release_note` (Table 1's header) says so."""
    budget = DataBudget.from_env() if budget is None else budget
    h5py = _require_h5py()
    root = h5_path.parent if root is None else root
    contained(root, h5_path, str(h5_path), RELEASE_FILE)
    meta = release_metadata(root, budget)
    if not meta and not partial:
        raise LsrbUsageError(
            f"{root}: no metadata rows found next to {h5_path.name} (expected data/<split>-*.parquet "
            f"or <split>.jsonl for splits {', '.join(RELEASE_SPLITS)})."
        )
    problems: list[Problem] = []
    missing: list[str] = []
    try:
        h5 = h5py.File(h5_path, "r")
    except Exception as exc:  # OSError mostly; a damaged superblock can raise others
        raise LsrbUsageError(f"{h5_path}: not a readable HDF5 file ({exc}).") from None
    with h5:
        for split in RELEASE_SPLITS:
            if split in meta:
                continue
            _, domain = _split_of(split)
            stored = _h5_group(
                h5, h5py, f"/{TRANSFORM_SET}" if domain is None else f"/{SYNTH_SET}/{domain}", h5_path
            )
            n = len(stored) if stored is not None else 0
            if n:
                missing.append(
                    f"split {split}: {n} problems' data in {h5_path.name} but no metadata rows "
                    f"(data/{split}-*.parquet or {split}.jsonl)"
                )
        for split, rows in meta.items():
            problem_set, domain = _split_of(split)
            for where, row in rows:
                if not isinstance(row, dict):
                    raise LsrbUsageError(f"{where}: expected an object of problem fields.")
                fields = official_fields(row, where, problem_set, domain)
                name = row["name"]
                group_path = f"/{TRANSFORM_SET}/{name}" if domain is None else f"/{SYNTH_SET}/{domain}/{name}"
                group = _h5_group(h5, h5py, group_path, h5_path)
                if group is None:
                    if partial:
                        missing.append(f"problem {name} ({where}): no data at '{group_path}'")
                        continue
                    raise LsrbUsageError(
                        f"{h5_path}: problem {name!r} ({where}) has no data: group '{group_path}' does "
                        f"not exist ({PARTIAL_FLAG} loads the release without it)."
                    )
                stored = _h5_tables(group, h5py, f"{h5_path}: group '{group_path}'", budget)
                arrays = pick_splits(stored, f"{h5_path}: {group_path}")
                problems.append(build_problem({**fields, **arrays}, f"{where} ({group_path})"))
    if missing and not partial:
        raise LsrbUsageError(
            f"{root}: the release is incomplete: {'; '.join(missing)} ({PARTIAL_FLAG} loads the rest)."
        )
    return _check_counts(check_unique(problems, h5_path), missing, h5_path)


def _h5_link(group: Any, h5py: Any, name: str, where: str) -> Any:
    """The member `name` of `group` when a plain link in this file leads to it, else None.

    External links open other files and soft links can lead through them, so neither is
    followed: the release's own groups and datasets are all plain (hard) links."""
    try:
        link = group.get(name, getlink=True)
    except Exception:  # h5py raises KeyError, ValueError, OSError or RuntimeError on a damaged file
        return None
    if link is None:
        return None
    if not isinstance(link, h5py.HardLink):
        kind = "an external link" if isinstance(link, h5py.ExternalLink) else "a soft link"
        raise LsrbUsageError(
            f"{where}: field '{name}': {kind}, which is not followed (problem data is read only from "
            "inside the file named)."
        )
    try:
        return group[name]
    except Exception:
        return None


def _h5_group(h5: Any, h5py: Any, path: str, h5_path: Path) -> Any:
    """The group at `path` reached through plain links only, or None (a name from the metadata
    may hold `/`, `..` or NUL, or lead nowhere)."""
    node = h5
    walked = ""
    for part in path.strip("/").split("/"):
        if part in ("", ".", ".."):
            return None
        node = _h5_link(node, h5py, part, f"{h5_path}: group '{walked or '/'}'")
        walked += "/" + part
        if not isinstance(node, h5py.Group):
            return None
    return node


def _h5_tables(group: Any, h5py: Any, where: str, budget: DataBudget) -> dict[str, np.ndarray]:
    """The group's datasets as float64 tables, each checked before its data is read: a plain
    dataset of this file (no external raw storage, no virtual sources) within `budget`."""
    stored: dict[str, np.ndarray] = {}
    try:
        keys = list(group)
    except Exception:  # a damaged file (h5py raises OSError or RuntimeError)
        raise LsrbUsageError(f"{where}: cannot be read (the HDF5 file is damaged).") from None
    for key in keys:
        node = _h5_link(group, h5py, key, where)
        if not isinstance(node, h5py.Dataset):
            continue
        try:
            external = node.external
            virtual = node.is_virtual
            shape, kind = tuple(node.shape or ()), node.dtype.kind
        except Exception:  # damaged (h5py raises several unrelated types)
            raise LsrbUsageError(f"{where}: field '{key}': not a readable table of numbers.") from None
        if external or virtual:
            how = "a virtual dataset" if virtual else "external storage"
            raise LsrbUsageError(
                f"{where}: field '{key}': its data is stored in other files ({how}), "
                "which are not read (problem data is read only from inside the file named)."
            )
        budget.take(shape, kind, where, key)
        try:
            stored[key] = np.array(node[...], dtype=np.float64)
        except Exception:  # not numbers, or damaged (h5py raises several unrelated types)
            raise LsrbUsageError(f"{where}: field '{key}': not a readable table of numbers.") from None
    return stored


# -- self-contained parquet -----------------------------------------------------------------------


def load_parquet(path: Path, budget: DataBudget | None = None) -> list[Problem]:
    """Problems from self-contained parquet rows: a file, or a folder's `<split>-*.parquet`
    (also under `data/`, inside the folder), the split name giving the problem set and domain."""
    budget = DataBudget.from_env() if budget is None else budget
    files = [path] if path.is_file() else sorted(path.glob("*.parquet")) + sorted(path.glob("data/*.parquet"))
    problems: list[Problem] = []
    for file in files:
        if file != path:
            contained(path, file, str(file), "parquet file")
        problem_set, domain = _split_of(file.name.split("-")[0].removesuffix(".parquet"))
        for i, row in enumerate(read_parquet(file, budget)):
            where = f"{file}: row {i + 1}"
            fields = official_fields(row, where, problem_set, domain)
            arrays = {
                split: _parquet_table(row, names, where, split) for split, names in PARQUET_SPLITS.items()
            }
            problems.append(build_problem({**fields, **arrays}, where))
    return check_unique(problems, path)


def _parquet_table(row: dict[str, Any], names: tuple[str, ...], where: str, split: str) -> np.ndarray | None:
    """[output | inputs] of one split from `<name>_input` and `<name>_output` (float64 arrays
    `read_parquet` made)."""
    name = next((n for n in names if row.get(f"{n}_input") is not None), None)
    if name is None:
        if split == "ood_test":
            return None
        raise LsrbUsageError(f"{where}: field '{names[0]}_input' is missing.")
    X = row[f"{name}_input"]
    y = row.get(f"{name}_output")
    if y is None:
        raise LsrbUsageError(f"{where}: field '{name}_output' is missing.")
    y = y.reshape(-1)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.shape[0] != y.shape[0]:
        raise LsrbUsageError(
            f"{where}: field '{name}_output': {y.shape[0]} values for {X.shape[0]} rows of '{name}_input'."
        )
    return np.concatenate([y[:, None], X], axis=1)
