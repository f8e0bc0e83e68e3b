"""Timestamps for records: the wall clock as ISO 8601 text, cheap enough to take per attempt."""

from __future__ import annotations

import time
from datetime import datetime, timezone

# (whole seconds since the epoch, their "YYYY-MM-DDTHH:MM:SS" in UTC): attempts finish many to a
# second, so the date and time of day are spelled once per second. One tuple, replaced whole, so
# threads never see a second paired with another second's text.
_last_second: tuple[int, str] = (-1, "")


def utc_millis(ns: int) -> str:
    """`ns` nanoseconds since the epoch as `datetime.isoformat(timespec="milliseconds")` spells
    that instant in UTC (`2026-11-24T08:01:21.475+00:00`): the milliseconds are truncated, as
    `datetime.now` truncates the clock to microseconds and isoformat those to milliseconds."""
    global _last_second
    second, rest = divmod(ns, 1_000_000_000)
    cached, text = _last_second
    if cached != second:
        text = datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        _last_second = (second, text)
    return f"{text}.{rest // 1_000_000:03d}+00:00"


def utc_now_millis() -> str:
    """Now, as `datetime.now(timezone.utc).isoformat(timespec="milliseconds")` spells it."""
    return utc_millis(time.time_ns())
