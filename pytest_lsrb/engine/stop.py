"""A run-wide stop, shared by the controller and every xdist worker.

When an endpoint refuses with quota or auth, every later call would fail the same way. The process
that sees it writes one sentence to a small file in the run's output directory; every process's
runner looks for that file before starting more attempts, so the whole run stops early, not just
the worker that met the refusal. The controller clears the file when a run starts and ends.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from pytest_lsrb.core.nofollow import create_nofollow

STOP_FILE = ".lsrb-stop"


class StopSignal:
    def __init__(self, output_dir: Path) -> None:
        self.path = output_dir / STOP_FILE
        self._seen: str | None = None

    def raise_stop(self, message: str) -> None:
        """Ask every process of the run to stop (first writer wins; later ones change nothing)."""
        self._seen = self._seen or message
        tmp = self.path.with_name(f"{STOP_FILE}.{os.getpid()}.{threading.get_ident()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            create_nofollow(tmp, message.encode("utf-8"))
            # link() is atomic and refuses to replace: readers never see a half-written sentence.
            os.link(tmp, self.path)
        except OSError:
            pass  # another process stopped the run first, or a read-only dir: this one still stops
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)

    def message(self) -> str | None:
        """The stop sentence, if any process of this run has raised one."""
        if self._seen is not None:
            return self._seen
        if not os.access(self.path, os.F_OK):  # asked before every attempt: no exception per ask
            return None
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        self._seen = text or "stopping the run: another process of this run met a fatal error."
        return self._seen

    def clear(self) -> None:
        self._seen = None
        self.path.unlink(missing_ok=True)
