"""What a problem file may make the run read: only what lies inside the folder or file the user
named, and no more numbers than the limits allow, checked before anything is materialised.

Problem files come from strangers (a downloaded release, a colleague's index). A few kilobytes
can describe gigabytes (an HDF5 dataset of fill values, a parquet column of repeated values, a
zip bomb inside an .npz), and an HDF5 link, a symlink or a `data` path can point at any file on
the machine. So every loader asks here first:

- `contained(root, path, where, field)`: `path` resolves inside `root` (symlinks followed);
- `DataBudget.take(shape, dtype, where, field)`: a table's shape and type, read from the file's
  own header (HDF5 dataset, .npy header, parquet metadata, CSV rows as they stream), fit the
  limits: at most `table_mb` per table and `total_mb` for everything one load keeps, counted as
  the float64 arrays the run holds.

The limits are the environment's `LSRB_DATA_TABLE_MB` (default 64) and `LSRB_DATA_TOTAL_MB`
(default 1024); LLM-SRBench's largest published table is well under 1 MB.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError

TABLE_ENV: Final = "LSRB_DATA_TABLE_MB"
TOTAL_ENV: Final = "LSRB_DATA_TOTAL_MB"
TABLE_MB: Final = 64.0
TOTAL_MB: Final = 1024.0
MB: Final = 1024 * 1024
NUMBER_KINDS: Final = "biuf"  # bool, int, unsigned, float: what becomes a float64 table


def _env_mb(environ: Mapping[str, str], name: str, default: float) -> float:
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise LsrbUsageError(f"{name} must be a positive number of megabytes (got {text!r}).")
    return value


@dataclass
class DataBudget:
    """The limits of one load, and what it has kept so far."""

    table_mb: float = TABLE_MB
    total_mb: float = TOTAL_MB
    kept_bytes: int = field(default=0)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DataBudget:
        env = os.environ if environ is None else environ
        return cls(table_mb=_env_mb(env, TABLE_ENV, TABLE_MB), total_mb=_env_mb(env, TOTAL_ENV, TOTAL_MB))

    @property
    def table_bytes(self) -> int:
        return int(self.table_mb * MB)

    def take(self, shape: tuple[int, ...], kind: str, where: str, name: str) -> None:
        """Count a table of `shape` (numpy dtype kind `kind`) before it is read, or refuse it."""
        if kind not in NUMBER_KINDS:
            raise LsrbUsageError(f"{where}: field '{name}': not a table of numbers (stored as {kind!r}).")
        if len(shape) > 2:
            dims = len(shape)
            raise LsrbUsageError(f"{where}: field '{name}': a {dims}-dimensional array, not a 2-D table.")
        self.take_bytes(math.prod(shape) * 8, where, name, f"a table of shape {tuple(shape)}")

    def take_bytes(self, size: int, where: str, name: str, what: str) -> None:
        if size > self.table_bytes:
            raise LsrbUsageError(
                f"{where}: field '{name}': {what} holds {size / MB:.1f} MB, over the {self.table_mb:g} MB "
                f"limit per table (set {TABLE_ENV} to allow more)."
            )
        if self.kept_bytes + size > self.total_mb * MB:
            raise LsrbUsageError(
                f"{where}: field '{name}': {what} takes the data loaded past the {self.total_mb:g} MB "
                f"limit (set {TOTAL_ENV} to allow more)."
            )
        self.kept_bytes += size


def contained(root: Path, path: Path, where: str, name: str) -> Path:
    """`path` when it resolves inside `root` (symlinks followed), else one sentence naming it."""
    base = root.resolve()
    target = path.resolve()
    if target != base and base not in target.parents:
        raise LsrbUsageError(
            f"{where}: field '{name}': {path} leads outside {base} (problem data is read only from "
            "inside the folder or file named)."
        )
    return path


def text_size(obj: Any) -> int:
    """About how many bytes the strings and numbers in a parsed metadata value hold."""
    if isinstance(obj, str | bytes):
        return len(obj)
    if isinstance(obj, Mapping):
        return sum(text_size(k) + text_size(v) for k, v in obj.items())
    if isinstance(obj, list | tuple):
        return sum(text_size(v) for v in obj) + 8 * len(obj)
    return 8
