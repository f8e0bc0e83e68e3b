"""When to send a failed model call again: capped, jittered exponential backoff for a total time.

A transient failure (connection refused or reset, 502/503/504, 429, a timeout) is retried until
`RetryPolicy.total_s` seconds have passed since the call's first failure, long enough by default
(two minutes) for a model server to restart, so a run rides through an outage with no user action.
A server's `Retry-After` (or `retry-after-ms`) is honoured: never sooner than it asks, and when it
asks for more than the time left, the call gives up instead of retrying early. `next_wait` is the
whole rule, pure, so its laws are tested with hypothesis (tests/adapters/test_http_retry.py).

While calls wait, `WAITING` knows it; the progress line reads it ("waiting for the server (retry
5, 40 s)"), so a run that is riding out an outage says so instead of looking hung.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

DEFAULT_TOTAL_S = 120.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 100
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    # A server may ask for a long pause; we honour it up to this, then retry anyway.
    max_retry_after_s: float = 60.0
    # Seconds after a call's first failure in which it keeps retrying (its waits and requests).
    total_s: float = DEFAULT_TOTAL_S

    def delay(self, retry_index: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number `retry_index` (0-based), time left aside.

        Without a server hint: "equal jitter" over a capped exponential, so clients spread out but
        never retry immediately. With `Retry-After`: that long (capped) plus up to 10% jitter.
        """
        ceiling = min(self.max_delay_s, self.base_delay_s * (2.0**retry_index))
        if retry_after_s is None:
            return ceiling / 2 + rng.uniform(0.0, ceiling / 2)
        wait = self.asked(retry_after_s)
        return wait + rng.uniform(0.0, 0.1 * wait)

    def asked(self, retry_after_s: float) -> float:
        """The pause a `Retry-After` hint makes us take at least."""
        return min(max(retry_after_s, 0.0), self.max_retry_after_s)

    def next_wait(
        self, retry_index: int, spent_s: float, retry_after_s: float | None, rng: random.Random
    ) -> float | None:
        """Seconds to wait before retry `retry_index`, `spent_s` seconds after the first failure;
        None: give up (the count or the time is used up, or the server asks for longer than is left)."""
        if retry_index >= self.max_retries:
            return None
        left = self.total_s - max(0.0, spent_s)
        if left <= 0:
            return None
        wait = self.delay(retry_index, retry_after_s, rng)
        if retry_after_s is not None and self.asked(retry_after_s) > left:
            return None  # retrying sooner than the server asked would only be refused again
        return min(wait, left)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `Retry-After` (seconds or date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
        return seconds if seconds >= 0 else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


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
