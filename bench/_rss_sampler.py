"""A pytest plugin for the benches: the process's current RSS every LSRB_BENCH_RSS_EVERY tests.

Loaded with `-p _rss_sampler` (bench/ on PYTHONPATH); writes one line per sample to
LSRB_BENCH_RSS_OUT: `<tests finished> <RSS MB>`. RSS is read from /proc/self/statm (Linux), so
a sample costs one small read. Tells whether memory grows as tests run, not just its peak.
"""

from __future__ import annotations

import os

_EVERY = int(os.environ.get("LSRB_BENCH_RSS_EVERY", "0"))
_OUT = os.environ.get("LSRB_BENCH_RSS_OUT", "")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_done = 0
_lines: list[str] = []


def _rss_mb() -> float:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * _PAGE / 2**20


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    global _done
    _done += 1
    if _EVERY and _done % _EVERY == 0:
        _lines.append(f"{_done} {_rss_mb():.1f}\n")


def pytest_unconfigure(config: object) -> None:
    if _OUT and _lines and not hasattr(config, "workerinput"):
        with open(_OUT, "w", encoding="utf-8") as fh:
            fh.writelines(_lines)
