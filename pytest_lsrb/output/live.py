"""The attempts in flight beside a run: one small file per process that runs attempts.

`<run>/.lsrb-live-<who>.json` holds that process's `engine.watch.Watches` (each attempt's item,
calls made of its budget, tokens, the search's best score so far, when it began), rewritten about
once a second while anything in it changed, and removed when the process ends its session. The
controller's progress line and `lsrb view` read every process's file (`read_live`); a file whose
process is gone, or that has not moved for a while, is left out (a crash leaves one behind).

Written through a temp file and a rename (never through a link: `files.write_atomic`); read
bounded, leniently (a file being replaced, damaged or hostile is skipped, never fatal).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.processes import process_start
from pytest_lsrb.engine.watch import Watches
from pytest_lsrb.output.files import write_json_atomic

LIVE_PREFIX: Final = ".lsrb-live-"
PUBLISH_EVERY_S: Final = 1.0
STALE_AFTER_S: Final = 120.0  # a file not rewritten for this long while it lists attempts: gone
MAX_LIVE_BYTES: Final = 1 << 20


def live_path(run_dir: Path, who: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in who)[:64] or "main"
    return run_dir / f"{LIVE_PREFIX}{safe}.json"


class LivePublisher:
    """Keeps one process's live file up to date from a daemon thread (`start`/`stop`): the
    attempts' own threads only count, they never write."""

    def __init__(self, run_dir: Path, who: str, watches: Watches, every_s: float = PUBLISH_EVERY_S) -> None:
        self.path = live_path(run_dir, who)
        self.watches = watches
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: list[dict[str, Any]] = []  # (nothing in flight yet: no file to write)
        self._written = 0.0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="lsrb-live", daemon=True)
            self._thread.start()

    def publish(self) -> None:
        """Write the file if what it says changed (or, with attempts in flight, every few
        seconds anyway: readers tell a live process from a dead one by its `updated`)."""
        now = time.time()
        snapshot = self.watches.snapshot()
        if snapshot == self._last and not (snapshot and now - self._written > 10 * self.every_s):
            return
        with contextlib.suppress(OSError):  # a full disk: the run's own writes say so, not this
            write_json_atomic(self.path, {"pid": os.getpid(), "updated": round(now, 3), "attempts": snapshot})
            self._last, self._written = snapshot, now

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.publish()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)


def read_live(run_dir: Path, now: float | None = None) -> list[dict[str, Any]]:
    """Every attempt in flight in the run (oldest first), from the live files of processes that
    are still there. Fields as `engine.watch.Watch.as_json`, each checked for its type."""
    now = time.time() if now is None else now
    found: list[dict[str, Any]] = []
    try:
        names = sorted(p for p in run_dir.iterdir() if p.name.startswith(LIVE_PREFIX) and p.suffix == ".json")
    except OSError:
        return []
    for path in names[:256]:
        data = _read(path)
        if data is None:
            continue
        updated, pid = data.get("updated"), data.get("pid")
        if not isinstance(updated, (int, float)) or now - float(updated) > STALE_AFTER_S:
            continue
        if isinstance(pid, int) and not isinstance(pid, bool) and process_start(pid) is None:  # gone
            continue
        attempts = data.get("attempts")
        for entry in attempts if isinstance(attempts, list) else []:
            shown = _checked(entry)
            if shown is not None:
                found.append(shown)
    return sorted(found, key=lambda a: a["started"])


def _read(path: Path) -> dict[str, Any] | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_LIVE_BYTES:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _checked(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    item, started = entry.get("item_id"), entry.get("started")
    if not isinstance(item, str) or not isinstance(started, (int, float)) or isinstance(started, bool):
        return None
    out: dict[str, Any] = {"item_id": item[:500], "started": float(started)}
    for key in ("sample_index", "calls", "budget", "failed_calls", "prompt_tokens", "completion_tokens"):
        value = entry.get(key)
        out[key] = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
    last = entry.get("last_call")
    out["last_call"] = float(last) if isinstance(last, (int, float)) and not isinstance(last, bool) else None
    label, best = entry.get("best_label"), entry.get("best")
    if isinstance(label, str) and isinstance(best, (int, float)) and not isinstance(best, bool):
        out["best_label"], out["best"] = (label[:40], float(best)) if best == best else (None, None)
    else:
        out["best_label"], out["best"] = None, None
    return out
