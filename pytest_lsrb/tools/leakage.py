"""Answer leakage: was a row's sorry filled upstream, and when (`lsrb split --upstream DIR`).

The date rule of `contamination.py` dates the question (when the sorry was written or included).
This check dates the answer: in a clone of each repository with its history, it follows the
sorry's declaration from the row's commit (`tactic.lean.upstream.sorry_fate`) and reports

- `answers_upstream`: per fate (filled, declaration_gone, file_gone, open, unchecked) the items,
  each filled one with the commit and committer date of the fill; with a cutoff, the items whose
  answer was public before it (`filled_before_cutoff`: a model trained until then may have seen
  the proof); and, against each row's `inclusion_date`, the items filled after they were
  included (`filled_after_inclusion`: the benchmark's answer is now public) or before (the item
  was already solved when it was included);
- `shared_declarations`: declarations with sorries in more than one split (their proofs share
  context), keyed by repository, path and declaration name.

Clones live in DIR under the checkout cache's folder names (`github.com__owner__name`, see
`tactic.lean.checkout.repo_slug`): `git clone https://github.com/owner/name DIR/github.com__owner__name`.
A repository without a clone is `unchecked`, never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pytest_lsrb.tactic.lean.checkout import repo_slug
from pytest_lsrb.tactic.lean.history import RepoHistory
from pytest_lsrb.tactic.lean.upstream import Fate, sorry_fate
from pytest_lsrb.tools.contamination import cross_split_section, normalise_repo, parse_date

FATES = ("filled", "declaration_gone", "file_gone", "open", "unchecked")


def clone_dir(repos_dir: Path, remote: str) -> Path:
    return repos_dir / repo_slug(remote)


def row_fates(rows: Sequence[Any], repos_dir: Path, *, git_command: str = "git") -> dict[str, Fate]:
    """Each row's fate upstream, from the clones in `repos_dir` (one RepoHistory per clone)."""
    histories: dict[Path, RepoHistory] = {}
    fates: dict[str, Fate] = {}
    for row in rows:
        clone = clone_dir(repos_dir, str(row.repo_remote))
        if not (clone / ".git").exists():
            fates[str(row.item_id)] = Fate(
                "unchecked", f"no clone of {row.repo_remote} at {clone}", reason="no_clone"
            )
            continue
        history = histories.setdefault(clone, RepoHistory(clone, git_command))
        fates[str(row.item_id)] = sorry_fate(
            history, str(row.repo_commit), str(row.path), int(row.start_line), int(row.start_column)
        )
    return fates


def declaration_groups(rows: Sequence[Any], fates: Mapping[str, Fate]) -> dict[str, str]:
    """`--group-by declaration`: each row's group is its sorry's declaration (repository, path,
    declaration name); a file with a row whose declaration could not be read stays whole, so no
    declaration of it can straddle splits."""

    def file_of(row: Any) -> str:
        return normalise_repo(str(row.repo_remote)) + "\x1f" + str(row.path)

    unread = {file_of(row) for row in rows if fates[str(row.item_id)].declaration is None}
    groups = {}
    for row in rows:
        where, name = file_of(row), fates[str(row.item_id)].declaration
        whole = where in unread or name is None
        groups[str(row.item_id)] = (
            "file\x1f" + where if whole else "declaration\x1f" + where + "\x1f" + str(name)
        )
    return groups


def _before(date: str | None, other: Any) -> bool | None:
    if not date or not other:
        return None
    try:
        return parse_date(date) < (other if isinstance(other, datetime) else parse_date(str(other)))
    except ValueError:
        return None


def leakage_report(
    rows: Sequence[Any],
    assignment: Mapping[str, Sequence[str]],
    fates: Mapping[str, Fate],
    cutoff: datetime | None,
    repos_dir: Path,
) -> dict[str, Any]:
    """The `answers_upstream` and `shared_declarations` sections (see the module docstring)."""
    split_of = {item_id: name for name, ids in assignment.items() for item_id in ids}
    by_status: dict[str, list[str]] = {status: [] for status in FATES}
    items: dict[str, dict[str, Any]] = {}
    before_cutoff: list[str] = []
    after_inclusion: list[str] = []
    before_inclusion: list[str] = []
    unchecked_reasons: dict[str, int] = defaultdict(int)
    for row in sorted(rows, key=lambda r: str(r.item_id)):
        item_id = str(row.item_id)
        fate = fates[item_id]
        by_status[fate.status].append(item_id)
        if fate.status == "unchecked":
            unchecked_reasons[fate.reason or "other"] += 1
            continue
        items[item_id] = {"split": split_of.get(item_id), **fate.as_json()}
        if fate.status != "filled":
            continue
        if cutoff is not None and _before(fate.date, cutoff):
            before_cutoff.append(item_id)
        included = getattr(row, "inclusion_date", None)
        earlier = _before(fate.date, included)
        if earlier is True:
            before_inclusion.append(item_id)
        elif earlier is False:
            after_inclusion.append(item_id)
    section: dict[str, Any] = {
        "repos_dir": str(repos_dir),
        "rule": (
            "filled: the first later commit where the sorry's declaration holds fewer sorries than at "
            "the row's commit (committer date); renames of the file are followed"
        ),
        "counts": {status: len(ids) for status, ids in by_status.items()},
        "item_ids": by_status,
        "unchecked_reasons": dict(sorted(unchecked_reasons.items())),
        "filled_before_cutoff": (
            None
            if cutoff is None
            else {"cutoff": cutoff.isoformat(), "count": len(before_cutoff), "item_ids": before_cutoff}
        ),
        "filled_after_inclusion": {"count": len(after_inclusion), "item_ids": after_inclusion},
        "filled_before_inclusion": {"count": len(before_inclusion), "item_ids": before_inclusion},
        "items": items,
    }
    keyed = [
        (
            "\x1f".join(
                (
                    normalise_repo(str(row.repo_remote)),
                    str(row.path),
                    str(fates[str(row.item_id)].declaration),
                )
            ),
            split_of[str(row.item_id)],
            str(row.item_id),
        )
        for row in rows
        if str(row.item_id) in split_of and fates[str(row.item_id)].declaration is not None
    ]
    shared = cross_split_section(keyed, "declaration")
    for entry in shared["entries"]:
        repo, path, name = entry["declaration"].split("\x1f")
        entry["declaration"] = {"repo": repo, "path": path, "name": name}
    return {"answers_upstream": section, "shared_declarations": shared}


def leakage_headline(report: Mapping[str, Any]) -> list[str]:
    up = report.get("answers_upstream")
    if up is None:
        return ["answers filled upstream: not checked (no --upstream)"]
    counts = ", ".join(f"{k} {v}" for k, v in up["counts"].items())
    lines = [f"sorries followed upstream: {counts}"]
    cut = up.get("filled_before_cutoff")
    if cut is not None:
        lines.append(f"answers public before the cutoff {cut['cutoff']}: {cut['count']}")
    lines.append(
        f"filled after inclusion: {up['filled_after_inclusion']['count']}, "
        f"before inclusion: {up['filled_before_inclusion']['count']}"
    )
    shared = report["shared_declarations"]
    lines.append(f"declarations shared across splits: {shared['groups']} ({shared['items']} items)")
    return lines
