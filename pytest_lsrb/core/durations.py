"""Durations as a person reads them: `42s`, `3m07s`, `2h05m` for times a run takes; `0.04 ms`,
`412 ms`, `2.41 s`, `3m34s` for a latency. One spelling for the progress line, the terminal,
the report and `lsrb view`."""

from __future__ import annotations

import math


def duration(seconds: float) -> str:
    """`42s`, `3m07s`, `2h05m` (whole seconds: how long a run or an item takes)."""
    s = max(0, round(seconds)) if math.isfinite(seconds) else 0
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def latency(ms: float) -> str:
    """A latency in milliseconds in the unit that reads best: `0.04 ms`, `412 ms`, `2.41 s`,
    `3m34s` (a value never reads as a bare number of milliseconds in the hundreds of thousands)."""
    if not math.isfinite(ms):
        return "–"
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    if ms < 10:
        return f"{sign}{ms:.2g} ms" if ms < 1 else f"{sign}{ms:.1f} ms"
    if ms < 1000:
        return f"{sign}{ms:.0f} ms"
    if ms < 60_000:
        return f"{sign}{ms / 1000:.2f} s"
    return sign + duration(ms / 1000)
