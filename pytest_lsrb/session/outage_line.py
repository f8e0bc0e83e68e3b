"""The terminal's line while the model's server is down (issue #50 item 2): `lsrb: server down
since 14:02:11, waiting (95 s left)`, every `EVERY_S` seconds while the run's outage lasts
(`adapters.outage`), whatever the progress line's interval, and whichever process's calls are
waiting (under `-n` the controller makes none: it reads the run's `.lsrb-outage`). Nothing is
printed while the server answers, nor with `--lsrb-progress 0`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from pytest_lsrb.adapters.outage import is_over, read_state, waiting_sentence

EVERY_S: Final = 5.0  # seconds between two lines while the server is down
LOOK_S: Final = 1.0  # how often the run's outage state is read


def outage_note(run_dir: Path) -> str | None:
    """The progress line's part while the server is down (None while it answers)."""
    state = read_state(run_dir)
    if state is None or is_over(state.since, state.last, state.window):
        return None  # up, or over: the run is stopping and says so once
    return waiting_sentence(state, time.time())


class OutageLine:
    """A daemon thread of the controller that says so while the server is down."""

    def __init__(self, run_dir: Path, say: Callable[[str], None], every_s: float = EVERY_S) -> None:
        self.run_dir = run_dir
        self.say = say
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="lsrb-outage-line", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        last_said = 0.0
        while not self._stop.wait(LOOK_S):
            sentence = outage_note(self.run_dir)
            now = time.monotonic()
            if sentence is None:
                last_said = 0.0
            elif now - last_said >= self.every_s:
                last_said = now
                self.say(f"lsrb: {sentence}")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
