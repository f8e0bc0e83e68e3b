"""Files in a run directory are opened without following a symbolic link.

A run directory is often a shared results folder. A link planted there under the name of a file
lsrb writes (`attempts.jsonl`, `.lsrb-budget.json`, a log) would make the run append to, pad or
truncate whatever the link points at, outside the run. Every writer of a run's file opens it here:
`O_NOFOLLOW` makes the kernel refuse a link as the last part of the path (ELOOP), which also
closes the gap between a check and the open. Files replaced by rename (`files.write_atomic`) need
nothing: a rename replaces the link itself, never its target.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Final

NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)  # (0 on Windows, where links need privileges)
LINK_REFUSED: Final = "it is a symbolic link, and lsrb never writes a run's file through one (remove it)"


def open_nofollow(path: Path, flags: int, mode: int = 0o666) -> int:
    """`os.open(path, flags | O_NOFOLLOW, mode)`; a link there is an OSError whose message says
    so in words (not the kernel's "Too many levels of symbolic links")."""
    try:
        return os.open(path, flags | NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(errno.ELOOP, LINK_REFUSED, str(path)) from None
        raise


def create_nofollow(path: Path, data: bytes = b"", *, exclusive: bool = False) -> None:
    """Create (or, unless `exclusive`, truncate) `path` and write `data`, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = open_nofollow(path, flags)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def linked_names(folder: Path, names: tuple[str, ...], prefix: str) -> list[str]:
    """The entries of `folder` that are symbolic links and are named like a file lsrb writes there
    (one of `names`, or starting with `prefix`), sorted."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    return sorted(
        entry.name
        for entry in entries
        if (entry.name in names or entry.name.startswith(prefix)) and entry.is_symlink()
    )
