"""Is a process still the one we knew: by pid, and by when it started (a pid is reused).

Used by the run directory's owner lock (`output.owner`) and by the budget ledger's reservations
(`engine.ledger`): both name a process that may have died, and must not take a later process
that got the same pid for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

RUNNING_UNKNOWN_START: Final = -1  # `process_start`: a process runs with that pid, its start is unknown


def process_start(pid: int) -> int | None:
    """The start of process `pid` in clock ticks after boot (Linux: field 22 of /proc/PID/stat),
    `RUNNING_UNKNOWN_START` when it runs but that cannot be read, None when no process has it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        # the command name (field 2) is in parentheses and may hold spaces and ')'
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:  # EPERM: it runs, as another user
        return RUNNING_UNKNOWN_START
    return RUNNING_UNKNOWN_START


def process_alive(pid: int) -> bool:
    """Whether `pid` runs on this host (a zombie, killed and not yet reaped, does not)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return False
    try:  # Linux: "pid (comm) S ..."; the state follows the last ')'
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return True  # no /proc: the signal said it exists


def started_elsewhen(pid: int, started: int | None) -> bool:
    """Whether the process now holding `pid` is known to have started at another time than
    `started` (so it is not the one that was noted); False whenever either start is unknown."""
    if started is None or started == RUNNING_UNKNOWN_START:
        return False
    now = process_start(pid)
    return now is not None and now != RUNNING_UNKNOWN_START and now != started


_OWN: dict[int, int | None] = {}


def own_start() -> int | None:
    """This process's start (read once per pid: a forked child reads its own)."""
    pid = os.getpid()
    if pid not in _OWN:
        _OWN[pid] = process_start(pid)
    return _OWN[pid]
