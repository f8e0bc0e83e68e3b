"""An outage is a run-level state (issue #46 item 5): once every call to the model's server has
failed for `--lsrb-retry-time`, the whole run stops what is left, at once, as infrastructure
(recorded, resumable), instead of each attempt waiting out its own window (20 attempts with
`--lsrb-retry-time 4` took 44 s; with the defaults 709 attempts would have taken about 3 hours).

What is shared: `<run dir>/.lsrb-outage`, a small JSON file every process of the run (the serial
run, each `-n` worker, the controller that prints the status line) reads and writes under an
exclusive `flock`:

    {"url": ..., "window": 120.0, "since": 1700000000.5, "last": 1700000040.1, "cleared": ...}

- a transient failure (refused, reset, a timeout, 5xx, 429, a body that is no answer) of a request
  *sent* after the last answer (`cleared`) starts the outage (`since`, when none is on) or extends
  it (`last`); one sent before that answer came says nothing new (the server has answered since);
- any answer from the server (a success, or an error it chose to send: 400, 401, 404) ends it;
- it is **over** once the failures span the window: `last - since >= window`. Each call waiting
  to retry wakes by the window's end and tries once more, so the last request confirms that the
  server is still down; every process then finds the run over (`Outage.over`, asked before each
  attempt and by each waiting call) and stops.

Without a run directory (a call outside a run, the judge's endpoint) the same state lives in this
process only. The law is pure (`is_over`, `time_left`) and tested with hypothesis
(tests/adapters/test_outage.py); the state machine with real processes in
tests/integration/test_outage_runs.py.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.nofollow import open_nofollow

OUTAGE_FILE: Final = ".lsrb-outage"
MAX_BYTES: Final = 4096
SLACK_S: Final = 1e-3  # clocks read as floats: a failure at the window's very end ends it


@dataclass(frozen=True)
class Down:
    """The outage state of one server (what the file holds)."""

    url: str = ""
    window: float = 0.0  # seconds of failures that make it a run-level outage (--lsrb-retry-time)
    since: float | None = None  # time.time() of the first failure with no answer since (None: up)
    last: float | None = None  # the latest failure
    cleared: float = 0.0  # when the server last answered

    @classmethod
    def from_json(cls, data: Any) -> Down:
        """The state read back; anything malformed (a damaged or hostile file) reads as up."""
        if not isinstance(data, dict):
            return cls()

        def number(key: str) -> float | None:
            value = data.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return float(value)
            return None

        url = data.get("url")
        since, last = number("since"), number("last")
        if since is None or last is None or last < since:
            since = last = None
        return cls(
            str(url)[:300] if isinstance(url, str) else "",
            max(0.0, number("window") or 0.0),
            since,
            last,
            number("cleared") or 0.0,
        )


def is_over(since: float | None, last: float | None, window_s: float) -> bool:
    """The law: an outage is over (the run stops) once its failures span the whole window."""
    return since is not None and last is not None and last - since >= window_s - SLACK_S


def time_left(since: float | None, now: float, window_s: float) -> float:
    """Seconds until the window of an outage that began at `since` ends (the whole window when
    none is on; 0 once it has passed)."""
    if since is None:
        return window_s
    return max(0.0, since + window_s - now)


def after_failure(state: Down, sent_at: float, failed_at: float) -> Down:
    """The state once a request sent at `sent_at` failed at `failed_at` (pure)."""
    if state.since is None:
        if sent_at < state.cleared:
            return state  # the server answered after this was sent: no news
        return replace(state, since=failed_at, last=failed_at)
    return replace(state, last=max(state.last or failed_at, failed_at))


def after_answer(state: Down, answered_at: float) -> Down:
    """The state once the server answered at `answered_at` (pure)."""
    return replace(state, since=None, last=None, cleared=max(state.cleared, answered_at))


def clock_time(stamp: float) -> str:
    """`14:02:11`, in this machine's local time (what a person at the terminal reads)."""
    return datetime.fromtimestamp(stamp).strftime("%H:%M:%S")


def down_sentence(state: Down) -> str:
    """The one line of a run stopped by an outage."""
    since = clock_time(state.since) if state.since is not None else "?"
    return (
        f"stopping the run: the server at {state.url or 'the model endpoint'} has been down since "
        f"{since} (every call failed for {state.window:g} s, --lsrb-retry-time); the attempts left "
        "are not run: when it is back, the resume command below finishes the run."
    )


def waiting_sentence(state: Down, now: float) -> str | None:
    """`server down since 14:02:11, waiting (95 s left)`: the status line while it lasts."""
    if state.since is None:
        return None
    left = time_left(state.since, now, state.window)
    return f"server down since {clock_time(state.since)}, waiting ({math.ceil(left)} s left)"


class Outage:
    """One server's outage state: in `folder`'s `.lsrb-outage` (shared by every process of the
    run) or, without a folder, in this process only. Thread-safe."""

    def __init__(
        self,
        url: str,
        window_s: float,
        folder: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.window_s = max(0.0, window_s)
        self.path = None if folder is None else folder / OUTAGE_FILE
        self.clock = clock
        self._lock = threading.Lock()
        self._state = Down(url, self.window_s)
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file when last read up

    # -- the shared state ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _change(self) -> Iterator[list[Down]]:
        """Read the state for a change; `box[0]` on leaving is written back when it differs."""
        with self._lock:
            if self.path is None:
                box = [self._state]
                yield box
                self._state = box[0]
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # never through a link
            with os.fdopen(fd, "r+", encoding="utf-8") as handle:
                with contextlib.suppress(ImportError, OSError):
                    import fcntl

                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                read = _read(handle)
                box = [replace(read, url=read.url or self.url, window=self.window_s)]
                yield box
                if box[0] != read:
                    handle.seek(0)
                    handle.truncate()
                    handle.write(json.dumps(asdict(box[0]), sort_keys=True))
                    handle.flush()
                self._state = box[0]
                self._seen = _stamp(handle.fileno()) if box[0].since is None else None

    def state(self) -> Down:
        """The state as every process of the run sees it now."""
        if self.path is None:
            with self._lock:
                return self._state
        return read_state(self.path.parent) or Down(self.url, self.window_s)

    def failed(self, sent_at: float) -> Down:
        """A request sent at `sent_at` failed (a transient kind) just now."""
        now = self.clock()
        with self._change() as box:
            box[0] = after_failure(box[0], sent_at, now)
            return box[0]

    def answered(self) -> None:
        """The server answered. Cheap when nothing is down: one stat of the file, which is read
        and written only when it changed since this process last saw it up."""
        if self.path is not None:
            try:
                stamp = _stamp_of(self.path)
            except OSError:
                return  # no file: no outage was ever noted in this run
            if stamp == self._seen:
                return
        elif self._state.since is None:
            return
        now = self.clock()
        with self._change() as box:
            if box[0].since is not None:
                box[0] = after_answer(box[0], now)

    def over(self) -> bool:
        state = self.state()
        return is_over(state.since, state.last, state.window)

    def left(self) -> float:
        """Seconds until the window of the outage now on ends (the whole window when none is)."""
        return time_left(self.state().since, self.clock(), self.window_s)


def _read(handle: Any) -> Down:
    handle.seek(0)
    text = handle.read(MAX_BYTES)
    try:
        return Down.from_json(json.loads(text)) if text.strip() else Down()
    except ValueError:
        return Down()


def _stamp(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_mtime_ns, st.st_size


def _stamp_of(path: Path) -> tuple[int, int]:
    st = os.stat(path, follow_symlinks=False)
    return st.st_mtime_ns, st.st_size


def read_state(folder: Path) -> Down | None:
    """The outage state of the run in `folder` (None: none was ever noted). One access(2) when
    there is no file: cheap enough to ask before every attempt."""
    path = folder / OUTAGE_FILE
    if not os.access(path, os.F_OK):
        return None
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None
    with os.fdopen(fd, "r", encoding="utf-8") as handle:
        # shared: a writer truncates, then writes; read between the two, the file says "up"
        with contextlib.suppress(ImportError, OSError):
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
        return _read(handle)


def run_outage(folder: Path) -> Down | None:
    """The run's outage when it is over (the run must stop), else None."""
    state = read_state(folder)
    if state is None or not is_over(state.since, state.last, state.window):
        return None
    return state


def clear(folder: Path) -> None:
    """A session opens the run (or ends it): an earlier session's outage is not this one's."""
    (folder / OUTAGE_FILE).unlink(missing_ok=True)
