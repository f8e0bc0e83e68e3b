"""Contamination checks for frozen splits: what could make a split's score optimistic.

- duplicate goals across splits, exact (same text) and normalised (`normalise_goal`);
- repositories with items in more than one split (`normalise_repo` names one repository however
  its remote is spelled);
- files with items in more than one split (only there can one declaration's sorries straddle
  splits; `--group-by file` empties it, and `leakage.py` names the declarations themselves);
- items from published benchmarks (miniF2F, PutnamBench, ...: `tactic.quality`), per split;
- items first public before a model's training cutoff (`blame_date`, else `inclusion_date`).
  That dates the question; whether the answer landed upstream, and when, is `leakage.py`'s.

Pure functions over rows and a split assignment; `splits.make_split` writes the report.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.quality import is_benchmark_source

# -- repositories ------------------------------------------------------------------------------


def normalise_repo(remote: str) -> str:
    """`https://github.com/Owner/Name.git/` and `github.com/owner/name` name one repository."""
    text = remote.strip().rstrip("/").removesuffix(".git").lower()
    return re.sub(r"^(?:[a-z+]+://)?(?:[^@/]+@)?", "", text).replace(":", "/")


# -- goal normalisation (pure) -----------------------------------------------------------------

_IDENT_CHARS = r"\w'!?✝⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"
_CASE_LINE = re.compile(r"^case\s+\S.*$", re.M)


def normalise_goal(goal_text: str) -> str:
    """A goal with its incidental spelling removed, so that renamed copies compare equal.

    Unicode NFC; `case tag` lines dropped; hypothesis names (`x y : Nat`, `inst✝¹ : Foo α`)
    renamed `_h1`, `_h2`, ... in order of appearance everywhere in the goal; whitespace runs
    collapsed to one space. Types, the target and bound variables inside them are kept as written.
    """
    text = unicodedata.normalize("NFC", goal_text).replace("\r\n", "\n")
    text = _CASE_LINE.sub("", text)
    names: list[str] = []
    for line in text.split("\n"):
        if line.startswith("⊢"):
            break
        if line[:1].isspace() or " : " not in line:
            continue
        for name in line.split(" : ", 1)[0].split():
            if name not in names:
                names.append(name)
    # Placeholders first, names second: a name is never rewritten inside an earlier replacement.
    for i, name in sorted(enumerate(names, start=1), key=lambda p: -len(p[1])):
        # `h.1` and `x.succ` use the hypothesis; `Nat.x` does not.
        pattern = rf"(?<![{_IDENT_CHARS}.]){re.escape(name)}(?![{_IDENT_CHARS}])"
        text = re.sub(pattern, f"\x00{i}\x00", text)
    text = re.sub(r"\x00(\d+)\x00", r"_h\1", text)
    return " ".join(text.split())


# -- dates -------------------------------------------------------------------------------------


def parse_date(text: str) -> datetime:
    """ISO 8601 date or date-time; naive values are UTC. Raises ValueError."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def parse_cutoff(text: str) -> datetime:
    try:
        return parse_date(text)
    except ValueError:
        raise LsrbUsageError(
            f"--cutoff: '{text}' is not an ISO date (e.g. 2024-06-01 or 2024-06-01T00:00:00Z)."
        ) from None


def row_date(row: Any) -> tuple[str, datetime] | None:
    """(field, date) a row was first public: `blame_date`, else `inclusion_date`; None if undated."""
    for field in ("blame_date", "inclusion_date"):
        raw = getattr(row, field, None)
        if raw:
            try:
                return field, parse_date(str(raw))
            except ValueError:
                continue
    return None


# -- contamination report (pure) ---------------------------------------------------------------


def _cross_split_groups(
    keyed: Iterable[tuple[str, str, str]],
) -> list[dict[str, Any]]:
    """Groups of (key, split, item_id) whose key occurs in more than one split."""
    by_key: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for key, split, item_id in keyed:
        by_key[key][split].append(item_id)
    entries: list[dict[str, Any]] = []
    for key, splits in by_key.items():
        if len(splits) > 1:
            entries.append({"key": key, "splits": {s: sorted(ids) for s, ids in sorted(splits.items())}})
    entries.sort(key=lambda e: min(i for ids in e["splits"].values() for i in ids))
    return entries


def _section(entries: list[dict[str, Any]], key_name: str) -> dict[str, Any]:
    items = sorted({i for e in entries for ids in e["splits"].values() for i in ids})
    for entry in entries:
        entry[key_name] = entry.pop("key")
    return {"groups": len(entries), "items": len(items), "item_ids": items, "entries": entries}


def cross_split_section(keyed: Iterable[tuple[str, str, str]], key_name: str) -> dict[str, Any]:
    """Groups, items and entries of the (key, split, item_id) keys found in more than one split."""
    return _section(_cross_split_groups(keyed), key_name)


def _goal_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def contamination_report(
    rows: Sequence[Any], assignment: Mapping[str, Sequence[str]], cutoff: datetime | None
) -> dict[str, Any]:
    """What could make a split's score optimistic, with counts and item ids.

    - duplicate goals across splits, exact (same text) and normalised (`normalise_goal`; a
      superset of the exact ones);
    - repositories with items in more than one split (empty under `--group-by repo`);
    - with a cutoff: items first public before it (`blame_date`, else `inclusion_date`), per
      split, and the items with no usable date (their exposure is unknown).
    """
    split_of = {item_id: name for name, ids in assignment.items() for item_id in ids}
    by_id = {str(row.item_id): row for row in rows}
    placed = [(split_of[i], by_id[i]) for i in sorted(split_of)]
    report: dict[str, Any] = {"splits": {name: len(ids) for name, ids in assignment.items()}}

    goals = [(s, r) for s, r in placed if getattr(r, "goal_text", None)]
    if goals:
        report["duplicate_goals_exact"] = _section(
            _cross_split_groups((_goal_digest(r.goal_text), s, r.item_id) for s, r in goals),
            "goal_sha256_16",
        )
        report["duplicate_goals_normalised"] = _section(
            _cross_split_groups((_goal_digest(normalise_goal(r.goal_text)), s, r.item_id) for s, r in goals),
            "normalised_goal_sha256_16",
        )
    else:
        report["duplicate_goals_exact"] = report["duplicate_goals_normalised"] = None

    repos = [(s, r) for s, r in placed if getattr(r, "repo_remote", None)]
    if repos:
        report["shared_repositories"] = _section(
            _cross_split_groups((normalise_repo(r.repo_remote), s, r.item_id) for s, r in repos),
            "repo",
        )
        report["shared_repositories"]["repositories"] = report["shared_repositories"].pop("groups")
    else:
        report["shared_repositories"] = None

    files = [(s, r) for s, r in repos if getattr(r, "path", None)]
    report["shared_files"] = (
        cross_split_section(
            ((f"{normalise_repo(r.repo_remote)}/{r.path}", s, r.item_id) for s, r in files), "file"
        )
        if files
        else None
    )
    if repos:
        sources: dict[str, list[str]] = {name: [] for name in assignment}
        for split, row in repos:
            tagged = "benchmark_source" in (getattr(row, "tags", None) or ())
            if tagged or is_benchmark_source(str(row.repo_remote), str(getattr(row, "path", ""))):
                sources[split].append(row.item_id)
        report["benchmark_sources"] = {
            "rule": "tagged benchmark_source, or the remote/path names a published benchmark",
            "items": sum(len(v) for v in sources.values()),
            "by_split": {name: {"count": len(ids), "item_ids": ids} for name, ids in sources.items()},
        }
    else:
        report["benchmark_sources"] = None

    if cutoff is None:
        report["before_cutoff"] = None
    else:
        before: dict[str, list[str]] = {name: [] for name in assignment}
        by_field: dict[str, int] = defaultdict(int)
        undated: list[str] = []
        for split, row in placed:
            dated = row_date(row)
            if dated is None:
                undated.append(row.item_id)
            elif dated[1] < cutoff:
                before[split].append(row.item_id)
                by_field[dated[0]] += 1
        report["before_cutoff"] = {
            "cutoff": cutoff.isoformat(),
            "rule": "blame_date, else inclusion_date, is earlier than the cutoff",
            "items": sum(len(v) for v in before.values()),
            "by_split": {name: {"count": len(ids), "item_ids": ids} for name, ids in before.items()},
            "by_date_field": dict(sorted(by_field.items())),
            "undated": {"count": len(undated), "item_ids": undated},
        }
    return report


def report_headline(report: Mapping[str, Any]) -> list[str]:
    """One line per check, for the terminal."""
    lines = []
    for key, label in (
        ("duplicate_goals_exact", "exact duplicate goals across splits"),
        ("duplicate_goals_normalised", "normalised duplicate goals across splits"),
        ("shared_repositories", "repositories shared across splits"),
        ("shared_files", "files shared across splits"),
    ):
        sec = report.get(key)
        if sec is None:
            lines.append(f"{label}: not applicable (rows have no such field)")
        else:
            groups = sec.get("groups", sec.get("repositories"))
            lines.append(f"{label}: {groups} ({sec['items']} items)")
    sources = report.get("benchmark_sources")
    if sources is not None:
        per = ", ".join(f"{k} {v['count']}" for k, v in sources["by_split"].items())
        lines.append(f"items from published benchmarks: {sources['items']} ({per})")
    cut = report.get("before_cutoff")
    if cut is None:
        lines.append("items before the training cutoff: not checked (no --cutoff)")
    else:
        per = ", ".join(f"{k} {v['count']}" for k, v in cut["by_split"].items())
        lines.append(
            f"items before the cutoff {cut['cutoff']}: {cut['items']} ({per}); "
            f"undated {cut['undated']['count']}"
        )
    return lines
