"""Paths that come from files and models: the one place that decides whether they stay inside.

Index rows, problem tables and model answers name files (`path` of a sorry, a problem's name, an
item id). A stranger wrote them, so a value becomes part of a path on disk only through here:

- `relative_path_problem(text)`: why `text` is not a plain relative path (absolute, `..`, empty
  parts, backslashes, control characters), or None;
- `file_name_problem(text)`: the same for a single file name (no `/` at all);
- `inside(base, rel)`: `base / rel`, refused unless it resolves inside `base` with symlinks
  followed. Callers check when they read a value and again right before they use the path, since a
  checkout can hold a symlink that points out of it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NAME_MAX: Final = 200  # characters of one path part; file systems allow 255 bytes


class OutsideError(ValueError):
    """A path from a file or a model would land outside the directory it must stay in."""


def relative_path_problem(text: str) -> str | None:
    """Why `text` is not a normalised relative POSIX path that stays below its base, or None."""
    if not text:
        return "is empty"
    if _CONTROL.search(text):
        return "holds a control character"
    if "\\" in text:
        return "holds a backslash (use / between folders)"
    if text.startswith("/") or text.startswith("~"):
        return "is absolute (expected a path relative to the repository)"
    parts = text.split("/")
    if any(part == ".." for part in parts):
        return "climbs out with '..'"
    if any(part in ("", ".") for part in parts):
        return "is not normalised (empty or '.' parts)"
    if any(len(part) > NAME_MAX for part in parts):
        return f"has a part longer than {NAME_MAX} characters"
    # What passes here is its own PurePosixPath (no empty, '.' or '..' parts, not absolute):
    # tests/core/test_paths_laws.py holds that law, so the check runs there, not once per row.
    return None


def file_name_problem(text: str) -> str | None:
    """Why `text` cannot be one file name inside a folder (`a/b`, `..`, `.x`, controls), or None."""
    if not text:
        return "is empty"
    if "/" in text or "\\" in text:
        return "holds a path separator"
    if text.startswith("."):
        return "starts with '.'"
    if _CONTROL.search(text):
        return "holds a control character"
    if len(text) > NAME_MAX:
        return f"is longer than {NAME_MAX} characters"
    return None


def inside(base: Path, rel: str | os.PathLike[str]) -> Path:
    """`base / rel` when it resolves inside `base` (symlinks followed), else `OutsideError`.

    The result is the unresolved join, so a caller keeps the names it expects (the resolved form
    is only used for the check).
    """
    rel_text = os.fspath(rel)
    problem = relative_path_problem(rel_text)
    if problem is not None:
        raise OutsideError(f"'{rel_text}' {problem}")
    joined = base / rel_text
    root = base.resolve()
    target = joined.resolve()
    if target != root and root not in target.parents:
        raise OutsideError(f"'{rel_text}' resolves to {target}, outside {root}")
    return joined
