"""A pytest plugin for bench_server.py: when each test finished, by the wall clock.

Loaded with `-p _timeline` (bench/ on PYTHONPATH); the controller (not an xdist worker) writes
one line per test to LSRB_BENCH_TIMELINE: `<time.time()> <nodeid>`, in the order tests finished.
"""

from __future__ import annotations

import os
import time

_OUT = os.environ.get("LSRB_BENCH_TIMELINE", "")
_lines: list[str] = []


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    _lines.append(f"{time.time():.6f} {nodeid}\n")


def pytest_unconfigure(config: object) -> None:
    if _OUT and not hasattr(config, "workerinput"):
        with open(_OUT, "w", encoding="utf-8") as fh:
            fh.writelines(_lines)
