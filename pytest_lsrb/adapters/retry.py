"""When to send a failed model call again: capped, jittered exponential backoff for a total time.

A transient failure (connection refused or reset, 502/503/504, 429, a timeout) is retried until
`RetryPolicy.total_s` seconds have passed since the call's first failure, so a run rides through a
server's restart with no user action (the run as a whole gives up sooner, once every call has
failed for that long: `adapters.outage`).

The backoff is a floor (issue #46): each wait is at least the capped, jittered exponential
(`RetryPolicy.floor`: 0.25-0.5 s, then 0.5-1 s, ... up to 10-20 s). A server's hint
(`Retry-After` in seconds or as an HTTP date, `retry-after-ms`) may only lengthen a wait, up to
`max_retry_after_s` and never past the retry time; when it asks for more than the time left, the
call gives up instead of retrying early. A hint of 0, a negative or non-finite number, a date in
the past or text that is no hint at all leaves the floor as it is: a server saying "now" cannot
turn the backoff off. The one wait shorter than the floor is the last one, which ends exactly where
the retry time ends (one last request, then the call gives up). `next_wait` is the whole rule,
pure, so its laws are tested with hypothesis (tests/adapters/test_http_retry.py).

While calls wait, `WAITING` knows it; the progress line reads it ("waiting for the server (retry
5, 40 s)"), so a run that is riding out an outage says so instead of looking hung.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

DEFAULT_TOTAL_S = 120.0
# A refused connection (nothing listens: a server restarting) costs the server nothing, so it is
# tried again at least this often: a server back is found within this, not up to `max_delay_s`.
REFUSED_MAX_DELAY_S = 2.0
HINT_JITTER = 0.1  # a hinted wait gets up to this fraction more, so clients told alike spread out


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 100
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    # A server may ask for a long pause; we honour it up to this, then retry anyway.
    max_retry_after_s: float = 60.0
    # Seconds after a call's first failure in which it keeps retrying (its waits and requests).
    total_s: float = DEFAULT_TOTAL_S

    def floor(self, retry_index: int, rng: random.Random, refused: bool = False) -> float:
        """The least wait before retry number `retry_index` (0-based): "equal jitter" over a
        capped exponential, so clients spread out but never retry at once (capped lower after a
        refused connection: `REFUSED_MAX_DELAY_S`)."""
        cap = min(self.max_delay_s, REFUSED_MAX_DELAY_S) if refused else self.max_delay_s
        ceiling = min(cap, self.base_delay_s * (2.0 ** min(retry_index, 64)))
        return ceiling / 2 + rng.uniform(0.0, ceiling / 2)

    def asked(self, retry_after_s: float | None) -> float | None:
        """The pause a server's hint asks for, capped at `max_retry_after_s`; None when there is
        no hint or it is no usable number (NaN, negative)."""
        if retry_after_s is None or math.isnan(retry_after_s) or retry_after_s < 0:
            return None
        return min(retry_after_s, self.max_retry_after_s)

    def delay(
        self, retry_index: int, retry_after_s: float | None, rng: random.Random, refused: bool = False
    ) -> float:
        """Seconds to wait before retry `retry_index`, time left aside: the floor, lengthened
        (never shortened) by the server's hint plus up to `HINT_JITTER` of it."""
        least = self.floor(retry_index, rng, refused)
        asked = self.asked(retry_after_s)
        if asked is None or asked <= least:
            return least
        return max(least, min(self.max_retry_after_s, asked + rng.uniform(0.0, HINT_JITTER * asked)))

    def next_wait(
        self,
        retry_index: int,
        spent_s: float,
        retry_after_s: float | None,
        rng: random.Random,
        refused: bool = False,
    ) -> float | None:
        """Seconds to wait before retry `retry_index`, `spent_s` seconds after the first failure;
        None: give up (the count or the time is used up, or the server asks for longer than is left).
        At least the floor, except a last wait that ends where the retry time ends."""
        if retry_index >= self.max_retries:
            return None
        spent = spent_s if math.isfinite(spent_s) else self.total_s
        left = self.total_s - max(0.0, spent)
        if not left > 0:
            return None
        asked = self.asked(retry_after_s)
        if asked is not None and asked > left:
            return None  # retrying sooner than the server asked would only be refused again
        return min(self.delay(retry_index, retry_after_s, rng, refused), left)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `Retry-After` (seconds or an
    HTTP date); None when neither holds a usable hint. Whatever it says, `RetryPolicy` only lets it
    lengthen the backoff: this only reads it (a past date reads as 0, inf stays inf)."""
    ms = _number(headers.get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(raw.strip())
        stamp = when.timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError, AttributeError):
        return None
    current = time.time() if now is None else now
    return max(0.0, stamp - current)


def _number(raw: str | None) -> float | None:
    """A header's value as a number of seconds >= 0 (inf allowed); None for anything else."""
    if raw is None or len(raw) > 64:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if value >= 0 else None  # (NaN >= 0 is False)


class Waiting:
    """The calls of this process now waiting to retry: how many retries in, since when."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._calls: dict[int, tuple[int, float]] = {}
        self._listeners: list[Callable[[], None]] = []

    def waiting(self, token: int, retry: int, since: float) -> None:
        with self._lock:
            self._calls[token] = (retry, since)
            listeners = list(self._listeners)
        for listener in listeners:  # e.g. the progress line, which has nothing else to print on
            listener()

    def done(self, token: int) -> None:
        with self._lock:
            self._calls.pop(token, None)

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` whenever a call starts waiting; returns what removes it."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def note(self) -> str | None:
        """`waiting for the server (retry 5, 40 s)`: the furthest retry and the longest wait so far."""
        with self._lock:
            calls = list(self._calls.values())
        if not calls:
            return None
        retry = max(r for r, _ in calls)
        waited = self.clock() - min(since for _, since in calls)
        return f"waiting for the server (retry {retry}, {max(0, round(waited))} s)"


WAITING = Waiting()
