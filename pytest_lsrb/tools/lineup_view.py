"""What the terminal shows while several models run at once (`lsrb run` with models on different
servers, `tools.lineup`): each run writes its whole output to `<group>/<label>.log`, named once at
the start; the terminal gets each model's latest progress line, labelled, whenever it changes, so
the command never sits silent while its runs work.

    lsrb: 2 models at once, one per server; each run's output: group/<label>.log
      smollm2-135m  lsrb 12/40 (30%) · 1.10/s · ETA 25s
      qwen-hot      lsrb 9/40 (22%) · 0.80/s · ETA 38s · errors: timeout 1
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

# The progress line `session.progress` prints (`lsrb 12/40 (30%) · ...`).
PROGRESS_LINE: Final = re.compile(r"^lsrb \d+/\d+.*$", re.MULTILINE)
TAIL_BYTES: Final = 16 * 1024  # the last progress line is near the end of a log
CHILD_PROGRESS_S: Final = 5.0  # how often each run prints its line when the user did not say


def last_progress(text: str) -> str | None:
    """The latest progress line in a run's output."""
    found = PROGRESS_LINE.findall(text)
    return found[-1].strip() if found else None


def read_tail(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


class LineupView:
    """Prints the runs' progress while they go; `watch` until `stop` is set."""

    def __init__(
        self,
        group: Path,
        labels: Sequence[str],
        *,
        interval_s: float,
        write: Callable[[str], None] | None = None,
    ) -> None:
        self.group = group
        self.labels = list(labels)
        self.interval_s = interval_s
        self.write = write or (lambda line: print(line, flush=True))
        self.shown: dict[str, str | None] = dict.fromkeys(self.labels)
        self.width = max((len(label) for label in self.labels), default=0)
        self.done: set[str] = set()
        self._lock = threading.Lock()

    def log(self, label: str) -> Path:
        return self.group / f"{label}.log"

    def intro(self) -> None:
        self.write(
            f"lsrb: {len(self.labels)} models at once, one per server; each run's output: "
            f"{self.group}/<label>.log"
        )

    def tick(self) -> None:
        """Each running model's progress line, when it changed since the last look."""
        with self._lock:
            for label in self.labels:
                if label in self.done:
                    continue
                line = last_progress(read_tail(self.log(label)))
                if line is not None and line != self.shown[label]:
                    self.shown[label] = line
                    self.write(f"  {label:<{self.width}}  {line}")

    def finished(self, label: str, out: Path, status: int) -> None:
        """A model's run ended: its folder and exit status, and the last lines of its log."""
        self.tick()
        with self._lock:
            self.done.add(label)
            lines = [line for line in read_tail(self.log(label)).splitlines() if line.strip()]
            self.write(f"lsrb: model {label} -> {out} (exit {status})")
            for line in lines[-3:]:
                self.write(f"  {line}")

    def watch(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval_s):
            self.tick()


def child_progress_args(shared: Sequence[str]) -> list[str]:
    """`--lsrb-progress` for each run when the user gave none: its log is no terminal, where the
    default would be one line per 30 s, too rare to watch."""
    if any(word == "--lsrb-progress" or word.startswith("--lsrb-progress=") for word in shared):
        return []
    return [f"--lsrb-progress={CHILD_PROGRESS_S:g}"]
