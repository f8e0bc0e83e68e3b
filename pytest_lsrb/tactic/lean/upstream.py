"""What became of a sorry upstream: was it filled after the row's commit, and when.

A row dates its *question* (the sorry's commit, blame and inclusion dates); the risk for a model
is the *answer*: a proof that landed upstream later, public from that day on. Given a clone of
the repository with its history, the sorry's declaration is followed from the row's commit along
the commits that changed its file (through renames of the file):

- `filled`: the first commit where the declaration holds fewer sorries (or `stop`s) than at the
  row's commit; its commit and committer date are recorded. When the declaration held several,
  the count cannot say which one was filled (`holes_before` > 1 says so);
- `declaration_gone`: the declaration (by name; an `example` by its keyword line) is no longer in
  the file: renamed, moved elsewhere or deleted; the answer, if any, is not known;
- `file_gone`: the file was deleted (a rename is followed, not counted);
- `open`: the sorry is still there at the clone's HEAD;
- `unchecked`, with a `reason`: `no_clone`, `commit_missing`, `not_on_head` (the commit is not an
  ancestor of the clone's HEAD), `no_file`, `no_declaration`, `no_sorry_there` (the row's position
  holds no sorry at its commit), `refused` (a value git must not see) or `git_failed`.

A sorry filled in one commit while another is added to the same declaration keeps the count and
is not seen; lines moving, declarations added around it and edits elsewhere are not mistaken for
a fill.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from pytest_lsrb.tactic.lean.declaration import declaration_key, declarations, find_by_key, find_declaration
from pytest_lsrb.tactic.lean.history import HistoryError, RefusedValue, RepoHistory
from pytest_lsrb.tactic.lean.splice import sorry_holes

FateStatus = Literal["open", "filled", "declaration_gone", "file_gone", "unchecked"]


@dataclass(frozen=True)
class Fate:
    status: FateStatus
    detail: str
    declaration: str | None = None
    holes_before: int | None = None
    holes_after: int | None = None
    commit: str | None = None  # where the status was decided (for `open`: the clone's HEAD)
    date: str | None = None  # that commit's committer date
    path: str | None = None  # the file's path there (after renames)
    reason: str | None = None  # why `unchecked`, as a short code (no_clone, commit_missing, ...)

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def sorry_fate(history: RepoHistory, commit: str, path: str, line: int, column: int) -> Fate:
    """The fate upstream of the sorry at (line, column) of `path` at `commit` (see the module)."""
    try:
        return _fate(history, commit, path, line, column)
    except HistoryError as exc:
        return Fate(
            "unchecked", str(exc), reason="refused" if isinstance(exc, RefusedValue) else "git_failed"
        )


def _fate(history: RepoHistory, commit: str, path: str, line: int, column: int) -> Fate:
    full = history.resolve(commit)
    if full is None:
        return Fate(
            "unchecked",
            f"the clone has no commit {commit} (fetch the branch that holds it)",
            reason="commit_missing",
        )
    head = history.head()
    if not history.is_ancestor(full, head.commit):
        return Fate(
            "unchecked",
            f"commit {commit[:12]} is not an ancestor of the clone's HEAD {head.commit[:12]}",
            reason="not_on_head",
        )
    text = history.file_at(full, path)
    if text is None:
        return Fate("unchecked", f"commit {commit[:12]} has no file {path}", reason="no_file")
    decl = find_declaration(text, line)
    if decl is None:
        return Fate("unchecked", f"{path}:{line}: no declaration holds the sorry", reason="no_declaration")
    key = declaration_key(text, decl)
    ordinal = [d.keyword_line for k, d in declarations(text) if k == key].index(decl.keyword_line)
    holes = sorry_holes(text, decl.keyword_line, decl.last_line)
    if (line, column) not in holes:
        return Fate(
            "unchecked",
            f"{path}:{line}:{column} holds no sorry at commit {commit[:12]}",
            reason="no_sorry_there",
        )
    before = len(holes)
    since, current = full, path
    while True:
        for change in history.changes(since, current):
            new_text = history.file_at(change.commit, current)
            if new_text is None:
                moved = history.renamed_to(change.commit, current)
                if moved is None:
                    return Fate(
                        "file_gone",
                        f"{current} deleted",
                        key,
                        before,
                        None,
                        change.commit,
                        change.date,
                        current,
                    )
                current, since = moved, change.commit
                new_text = history.file_at(change.commit, current)
                if new_text is None:  # pragma: no cover - git reported a rename to a missing file
                    return Fate("unchecked", f"{moved} missing at {change.commit[:12]}", reason="git_failed")
                found = _judge(new_text, key, ordinal, before, change.commit, change.date, current)
                if found is not None:
                    return found
                break  # follow the new path from the rename on
            found = _judge(new_text, key, ordinal, before, change.commit, change.date, current)
            if found is not None:
                return found
        else:
            end = history.file_at(head.commit, current)
            left = find_by_key(end, key, ordinal) if end is not None else None
            after = len(sorry_holes(end, left.keyword_line, left.last_line)) if end and left else None
            return Fate("open", "still there at HEAD", key, before, after, head.commit, head.date, current)


def _judge(text: str, key: str, ordinal: int, before: int, commit: str, date: str, path: str) -> Fate | None:
    decl = find_by_key(text, key, ordinal)
    if decl is None:
        return Fate(
            "declaration_gone", f"{key} is no longer in {path}", key, before, None, commit, date, path
        )
    after = len(sorry_holes(text, decl.keyword_line, decl.last_line))
    if after < before:
        detail = f"{key} holds {after} sorr{'y' if after == 1 else 'ies'} where it held {before}"
        return Fate("filled", detail, key, before, after, commit, date, path)
    return None
