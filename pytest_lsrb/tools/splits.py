"""Frozen splits: `lsrb split INDEX --out DIR` and the `manifest:PATH#SPLIT` split policy.

A split manifest pins which items belong to which split, once, so that every later run (on any
machine, after any change to the splitting code) evaluates exactly the same items:

    split_manifest.json        the source index's SHA-256, the split config, and each split's
                               item ids with the content hash of each row
    contamination_report.json  duplicate goals (exact and normalised), repositories and files
                               shared across splits, published benchmark items, and items dated
                               before a model's training cutoff (`contamination.py`); with
                               `--upstream DIR`, sorries filled upstream and when, and
                               declarations shared across splits (`leakage.py`)

Assignment is a pure function of the item ids, the group keys, the seed and the fractions: groups
(an item alone, all items of a repository with `--group-by repo`, of one file with `--group-by
file`, or of one declaration with `--group-by declaration`, read from clones) are ordered by a stable hash
of (seed, group) and laid end to end; each group goes to the split whose share of the line holds
the group's midpoint. Split sizes are therefore within one group of their targets.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.core.selection import split_predicate
from pytest_lsrb.output.files import read_json, write_json_atomic

MANIFEST_FILE: Final = "split_manifest.json"
CONTAMINATION_FILE: Final = "contamination_report.json"
MANIFEST_SCHEMA_VERSION: Final = 1
MANIFEST_KIND: Final = "lsrb_split_manifest"
# `--lsrb-split-policy manifest:PATH#SPLIT` selects one split of a frozen manifest.
MANIFEST_POLICY_PREFIX: Final = "manifest:"
DEFAULT_FRACTIONS: Final = "dev=0.2,test=0.8"
# `--group-by` shorthands: the row field they read.
GROUP_FIELDS: Final[dict[str, str]] = {"repo": "repo_remote"}
_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


# -- config ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplitConfig:
    """Everything that decides an assignment; recorded in full in the manifest."""

    fractions: tuple[tuple[str, float], ...]
    seed: int = 0
    group_by: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "fractions": dict(self.fractions),
            "seed": self.seed,
            "group_by": self.group_by,
            "method": "stable-hash order, midpoint allocation (pytest_lsrb.tools.splits.assign_splits)",
        }


def parse_fractions(text: str) -> tuple[tuple[str, float], ...]:
    """`dev=0.2,test=0.8` -> (("dev", 0.2), ("test", 0.8)); fractions are positive and sum to 1."""
    out: list[tuple[str, float]] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not _SPLIT_NAME.match(name):
            raise LsrbUsageError(
                f"--splits: '{part}' should read NAME=FRACTION (NAME of letters, digits, _ or -)."
            )
        try:
            frac = float(value)
        except ValueError:
            raise LsrbUsageError(f"--splits: '{value}' in '{part}' is not a number.") from None
        if not 0.0 < frac <= 1.0:
            raise LsrbUsageError(f"--splits: the fraction of '{name}' must be in (0, 1] (got {frac}).")
        if name in dict(out):
            raise LsrbUsageError(f"--splits: the split '{name}' is named twice.")
        out.append((name, frac))
    if not out:
        raise LsrbUsageError("--splits: name at least one split, e.g. dev=0.2,test=0.8.")
    total = sum(f for _, f in out)
    if abs(total - 1.0) > 1e-6:
        raise LsrbUsageError(f"--splits: the fractions must sum to 1 (they sum to {total:g}).")
    return tuple(out)


# -- assignment (pure) -------------------------------------------------------------------------


def assign_splits(units: Iterable[tuple[str, str]], config: SplitConfig) -> dict[str, list[str]]:
    """Each split's sorted item ids, from (item_id, group_key) pairs.

    Every item lands in exactly one split and a group never straddles two. The result depends on
    the set of pairs, the seed and the fractions, never on input order.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for item_id, group in units:
        groups[group].append(item_id)
    total = sum(len(ids) for ids in groups.values())
    order = sorted(groups, key=lambda g: (stable_hash("split", config.seed, g), g))
    bounds: list[float] = []
    acc = 0.0
    for _, frac in config.fractions:
        acc += frac
        bounds.append(acc)
    bounds[-1] = float("inf")  # rounding in the sum must never leave a group unassigned
    out: dict[str, list[str]] = {name: [] for name, _ in config.fractions}
    names = [name for name, _ in config.fractions]
    placed = 0
    for group in order:
        size = len(groups[group])
        midpoint = (placed + size / 2.0) / total
        idx = next(i for i, bound in enumerate(bounds) if midpoint < bound)
        out[names[idx]].extend(groups[group])
        placed += size
    return {name: sorted(ids) for name, ids in out.items()}


def group_key(row: Any, group_by: str | None) -> str:
    """The unit a row is assigned with: its own id, or the value of the grouping field."""
    if group_by is None:
        return "item\x1f" + str(row.item_id)
    from pytest_lsrb.tools.contamination import normalise_repo

    if group_by == "file":  # every sorry of one file: a declaration's sorries never straddle splits
        remote, path = getattr(row, "repo_remote", None), getattr(row, "path", None)
        if remote is None or path is None:
            raise LsrbUsageError(f"--group-by file: row '{row.item_id}' has no repo_remote/path to group by.")
        return "file\x1f" + normalise_repo(str(remote)) + "\x1f" + str(path)
    field = GROUP_FIELDS.get(group_by, group_by)
    value = getattr(row, field, None)
    if value is None:
        raise LsrbUsageError(
            f"--group-by {group_by}: row '{row.item_id}' has no field '{field}' to group by."
        )
    if field == "repo_remote":
        value = normalise_repo(str(value))
    return "group\x1f" + str(value)


# -- manifest ----------------------------------------------------------------------------------


def source_sha256(path: Path) -> str:
    """SHA-256 of an index file, or of a folder's files (relative path and content, sorted)."""
    if path.is_file():
        return _file_sha256(path)
    digest = hashlib.sha256()
    for child in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{child.relative_to(path).as_posix()}\x1f{_file_sha256(child)}\n".encode())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def build_manifest(
    rows: Sequence[Any],
    assignment: Mapping[str, Sequence[str]],
    config: SplitConfig,
    *,
    source: Path,
    source_hash: str,
    suite: str,
) -> dict[str, Any]:
    hashes = {str(row.item_id): row.content_hash() for row in rows}
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "kind": MANIFEST_KIND,
        "suite": suite,
        "source_index": str(source),
        "source_index_sha256": source_hash,
        "source_rows": len(rows),
        "config": config.as_json(),
        "splits": {
            name: {"count": len(ids), "items": {i: hashes[i] for i in ids}}
            for name, ids in assignment.items()
        },
    }


@dataclass(frozen=True)
class SplitResult:
    manifest: dict[str, Any]
    report: dict[str, Any]
    manifest_path: Path
    report_path: Path


def make_split(
    rows: Sequence[Any],
    config: SplitConfig,
    *,
    source: Path,
    suite: str,
    out_dir: Path,
    cutoff: datetime | None = None,
    upstream: Path | None = None,
) -> SplitResult:
    """Assign, write split_manifest.json and contamination_report.json into `out_dir`.

    `upstream`: a folder of repository clones with history (see `leakage.py`); `--group-by
    declaration` reads each sorry's declaration there."""
    # Imported here: a run imports this module for its split policy and needs none of them.
    from pytest_lsrb.tools.contamination import contamination_report
    from pytest_lsrb.tools.leakage import declaration_groups, leakage_report, row_fates

    fates = None
    if upstream is not None:
        if not upstream.is_dir():
            raise LsrbUsageError(f"--upstream: {upstream} is not a folder of repository clones.")
        fates = row_fates(rows, upstream)
    if config.group_by == "declaration":
        if fates is None:
            raise LsrbUsageError(
                "--group-by declaration needs --upstream CLONES: the declaration around each sorry is "
                "read from the repository at the row's commit."
            )
        groups = declaration_groups(rows, fates)
        units = [(str(row.item_id), groups[str(row.item_id)]) for row in rows]
    else:
        units = [(str(row.item_id), group_key(row, config.group_by)) for row in rows]
    assignment = assign_splits(units, config)
    source_hash = source_sha256(source)
    manifest = build_manifest(rows, assignment, config, source=source, source_hash=source_hash, suite=suite)
    report = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "source_index_sha256": source_hash,
        "config": config.as_json(),
        **contamination_report(rows, assignment, cutoff),
    }
    if upstream is not None and fates is not None:
        report.update(leakage_report(rows, assignment, fates, cutoff, upstream))
    manifest_path, report_path = out_dir / MANIFEST_FILE, out_dir / CONTAMINATION_FILE
    write_json_atomic(manifest_path, manifest)
    write_json_atomic(report_path, report)
    return SplitResult(manifest, report, manifest_path, report_path)


# -- the frozen split policy -------------------------------------------------------------------


def parse_manifest_policy(policy: str) -> tuple[Path, str]:
    """`manifest:PATH#SPLIT` -> (PATH, SPLIT)."""
    body = policy[len(MANIFEST_POLICY_PREFIX) :]
    path, sep, split = body.rpartition("#")
    if not sep or not path or not split:
        raise LsrbUsageError(
            f"--lsrb-split-policy: '{policy}' should read manifest:PATH#SPLIT "
            "(e.g. manifest:splits/split_manifest.json#test)."
        )
    return Path(path).expanduser(), split


def load_manifest(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise LsrbUsageError(f"--lsrb-split-policy: the split manifest {path} does not exist.")
    data = read_json(path)
    if (
        not isinstance(data, dict)
        or data.get("kind") != MANIFEST_KIND
        or not isinstance(data.get("splits"), dict)
        or not isinstance(data.get("source_index_sha256"), str)
    ):
        raise LsrbUsageError(f"{path}: not a split manifest written by `lsrb split`.")
    for name, split in data["splits"].items():
        items = split.get("items") if isinstance(split, dict) else None
        if not isinstance(items, (dict, list)) or not all(isinstance(i, str) for i in items):
            raise LsrbUsageError(
                f"{path}: field 'splits.{name}.items': expected the split's item ids "
                "(an object keyed by item id), as `lsrb split` writes."
            )
    return data


def manifest_split_ids(manifest_path: Path, split: str, index_path: Path) -> frozenset[str]:
    """The item ids of one split, after checking the manifest was made from this very index."""
    manifest = load_manifest(manifest_path)
    expected = manifest["source_index_sha256"]
    actual = source_sha256(index_path)
    if actual != expected:
        raise LsrbUsageError(
            f"--lsrb-split-policy: the split manifest {manifest_path} was made from an index with "
            f"SHA-256 {expected[:12]}… but {index_path} has SHA-256 {actual[:12]}…, so its splits "
            "may not name these rows; run `lsrb split` on this index or use the index it was made from."
        )
    splits = manifest["splits"]
    if split not in splits:
        raise LsrbUsageError(
            f"--lsrb-split-policy: the split manifest {manifest_path} has no split '{split}' "
            f"(it has: {', '.join(sorted(splits))})."
        )
    return frozenset(splits[split]["items"])


def split_policy_predicate(policy: str, index_path: Path) -> Callable[[Any], bool]:
    """`--lsrb-split-policy`: `manifest:PATH#SPLIT` (a frozen split), or all / dev / test."""
    if not policy.startswith(MANIFEST_POLICY_PREFIX):
        return split_predicate(policy)
    path, split = parse_manifest_policy(policy)
    ids = manifest_split_ids(path, split, index_path)
    return lambda row: row.item_id in ids


# -- loading an index for `lsrb split` ---------------------------------------------------------


def load_index_rows(index: Path, suite_ref: str) -> tuple[list[Any], str]:
    """Rows of `index`, validated by the task of the suite `suite_ref` (a name or a folder)."""
    from pytest_lsrb.engine.suite import builtin_suites_dir, load_suite
    from pytest_lsrb.engine.task import get_task

    root = Path(suite_ref)
    if not (root / "suite.toml").is_file():
        root = builtin_suites_dir() / suite_ref
        if not (root / "suite.toml").is_file():
            raise LsrbUsageError(f"--suite: no suite '{suite_ref}' (a built-in name or a suite folder).")
    if not index.exists():
        raise LsrbUsageError(f"{index}: the index does not exist.")
    spec = load_suite(root)
    return list(get_task(spec.task).load_rows(spec, index)), spec.name


def dumps_summary(result: SplitResult) -> str:
    from pytest_lsrb.tools.contamination import report_headline
    from pytest_lsrb.tools.leakage import leakage_headline

    counts = ", ".join(f"{k} {v['count']}" for k, v in result.manifest["splits"].items())
    lines = [f"wrote {result.manifest_path} ({counts})", f"wrote {result.report_path}"]
    lines += ["  " + line for line in report_headline(result.report)]
    if "answers_upstream" in result.report:
        lines += ["  " + line for line in leakage_headline(result.report)]
    return "\n".join(lines)
