"""Locks that hold across processes: one clone, build or REPL build at a time per target.

A pytest run under xdist has several worker processes that may want the same checkout or the
same REPL build at once; an advisory `flock` on a file beside the target makes them take turns.
Threads of one process take turns with their own `threading.Lock` before asking for this one.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created, with its folder, when missing) while inside."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
