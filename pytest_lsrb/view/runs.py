"""The runs under a folder, as `lsrb view` may show them: found by walking it (bounded), named
by their path relative to it, and reached only by such a name from the list just found.

A name from a request is never joined to the folder and opened: it is looked up among the runs
the walk found, so `..`, absolute paths, links out of the folder and any other path a request
makes up name nothing (404). The walk does not follow links at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_lsrb.output.files import ATTEMPTS_FILE, RUN_FILE, SUMMARY_FILE

MAX_DEPTH: Final = 5  # lsrb-out/<suite>/<run>, a group's <group>/<label>, with room to spare
MAX_RUNS: Final = 2000
MAX_ENTRIES: Final = 100_000  # directory entries looked at, whatever the tree holds


@dataclass(frozen=True)
class Found:
    name: str  # the path relative to the folder, with "/" (what a request names)
    dir: Path
    modified: float  # the newest of its files' times (the list is newest first)


def find_runs(root: Path) -> list[Found]:
    """Every run folder (run.json, attempts.jsonl or summary.json in it) under `root`, newest
    first; links are not followed, and the walk stops at `MAX_DEPTH`, `MAX_RUNS` runs and
    `MAX_ENTRIES` entries."""
    found: list[Found] = []
    seen = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack and len(found) < MAX_RUNS and seen < MAX_ENTRIES:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        seen += len(entries)
        files = {e.name: e for e in entries if e.is_file(follow_symlinks=False)}
        marks = [files[n] for n in (RUN_FILE, ATTEMPTS_FILE, SUMMARY_FILE) if n in files]
        if marks and folder != root:
            modified = max(m.stat(follow_symlinks=False).st_mtime for m in marks)
            found.append(Found(folder.relative_to(root).as_posix(), folder, modified))
        if depth < MAX_DEPTH:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                    stack.append((Path(entry.path), depth + 1))
    return sorted(found, key=lambda f: (-f.modified, f.name))


def run_named(root: Path, name: str | None) -> Found | None:
    """The run `name` names among those found under `root` (None: no such run)."""
    if not name or len(name) > 4096:
        return None
    return next((f for f in find_runs(root) if f.name == name), None)
