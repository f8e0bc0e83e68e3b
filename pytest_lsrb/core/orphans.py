"""A child process that ends with its parent, however the parent ends.

`lsrb run` with several models runs each model's pytest in a child. A parent killed with SIGKILL
cannot stop its children, and a child left running goes on sending (and paying for) requests for a
run nobody owns any more. On Linux the child asks the kernel for a signal when its parent dies
(`prctl(PR_SET_PDEATHSIG)`), set between fork and exec; SIGTERM, so the child's pytest saves what
it has and stops its own xdist workers. A parent that died before that call is seen by the pid
the child's parent has (`os.getppid`), here and later in the child's session (`output.owner`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _prctl() -> Any:
    """libc's prctl, looked up before any fork (a lookup in the forked child could take a lock
    another thread held at the fork)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A `preexec_fn` for subprocess: the child leads a process group of its own (a signal to the
    group reaches its xdist workers too), gets `sig` when this process (the thread that starts
    it) dies, and exits at once when this process died before the child could ask.

    It calls no Python code that takes a lock (no import, no allocation of note): safe to run
    in a child forked while other threads run."""
    prctl = _prctl()
    parent = os.getpid()

    def preexec() -> None:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(128 + int(sig))

    return preexec


class Children:
    """The child processes a command runs (from any thread), each dying with it (`die_with_parent`)
    and each in its own process group, so `stop` reaches a child's own children too."""

    def __init__(self) -> None:
        self._live: dict[int, subprocess.Popen[Any]] = {}
        self._lock = threading.Lock()
        self.stopped_by: int | None = None  # the signal `stop` passed on, once it has

    def run(self, command: Sequence[str], **popen: Any) -> int | None:
        """Run `command` to its end and return its exit status; None when the command is
        stopping and the child was not started."""
        with self._lock:
            if self.stopped_by is not None:
                return None
            proc = subprocess.Popen(list(command), preexec_fn=die_with_parent(), **popen)
            self._live[proc.pid] = proc
        try:
            return proc.wait()
        finally:
            with self._lock:
                self._live.pop(proc.pid, None)

    def stop(self, sig: int) -> None:
        """Pass `sig` on to every running child's process group; start no more children."""
        with self._lock:
            self.stopped_by = sig
            live = list(self._live)
        for pid in live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)


class NotedSignals:
    """Ctrl-C and SIGTERM noted while a command waits on its children, for the waiting loop to
    pass on (`Children.stop`). The handler only notes the signal: one that raised
    KeyboardInterrupt could land between two statements of the loop, outside the `try` meant to
    catch it, and the stop was lost (the children ran on to the end and the command said 0).
    Installed from the main thread only, where Python runs signal handlers."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.pending: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> NotedSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, signum: int, frame: Any) -> None:
        self.pending.append(signum)

    def take(self) -> int | None:
        """The oldest signal not yet passed on (one `pop`: a signal noted meanwhile stays)."""
        return self.pending.pop(0) if self.pending else None

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()
