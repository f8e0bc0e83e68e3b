"""SIGTERM: how a batch system says "stop now" (Slurm before a preemption or at the time limit,
Kubernetes before it evicts or deletes a pod), with a grace period before SIGKILL.

The controller takes SIGTERM like Ctrl-C (pytest ends the session at once and the session's end
still runs), so every attempt finished is already in attempts.jsonl, summary.json says the run is
incomplete, and the process exits with EXIT_TERMINATED: the status a shell reports for a process
SIGTERM ended, which the recipes in examples/ map to "requeue". Run again with the same command
(`--lsrb-resume-or-start`), the run goes on from there.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any, Final

EXIT_TERMINATED: Final = 128 + signal.SIGTERM  # 143


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM arrives (pytest handles it like Ctrl-C)."""


class TermHandler:
    """SIGTERM turned into `Terminated`, once, for the life of one session."""

    def __init__(self) -> None:
        self.received = False
        self.saved = False  # set once the run's files are written: a SIGTERM then has nothing to stop
        self._previous: Any = None
        self._installed = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread (pytest.main in a thread)
        self._previous = signal.signal(signal.SIGTERM, self._handle)
        self._installed = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received or self.saved:
            return  # the run is saving what it has, or has saved it: let the process end normally
        self.received = True
        raise Terminated("SIGTERM: the run stops here and keeps every finished attempt")

    def restore(self) -> None:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)
            self._installed = False
