"""How many requests one process keeps in flight to an endpoint: AIMD, like TCP's congestion window.

`--lsrb-concurrency` is the ceiling. A request that meets an overloaded server (429 rate limit,
503 and other server errors, a timeout) halves the limit, at most once per window of requests
(the requests already in flight when the server pushed back say the same thing once, not once
each); every answered request adds 1/limit, so the limit grows back by about one per window of
successes: quick to back off, slow to recover.

Waiting for a permit happens before the request is sent, so that wait is queue time on our side:
it counts neither against `--lsrb-timeout` (httpx starts its clock at the send) nor in the
attempt's `latency_ms`. A server that reports how many requests it serves at once (llama.cpp's
slots) caps the limit there, so surplus attempts queue here and not inside the server, where the
wait would run down each request's timeout.
"""

from __future__ import annotations

import threading
from typing import Final

# Failure kinds that mean "the server is overloaded": back off.
OVERLOAD_KINDS: Final = frozenset({"rate_limit", "server_error", "timeout"})
DECREASE: Final = 0.5


class AdaptiveLimit:
    """A semaphore whose size follows the server: thread-safe, never below 1."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, int(ceiling))
        self.limit = float(self.ceiling)
        self.in_flight = 0
        self.decreases = 0
        self._cond = threading.Condition()
        self._quiet = 0  # completions to ignore further overload signals for (one window)

    def cap(self, slots: int) -> None:
        """The server serves at most `slots` at once: never keep more in flight than that."""
        with self._cond:
            self.ceiling = max(1, min(self.ceiling, int(slots)))
            self.limit = min(self.limit, float(self.ceiling))

    def acquire(self, stop: threading.Event | None = None) -> bool:
        """Wait for a permit; False when `stop` was set while waiting (send nothing then)."""
        with self._cond:
            while self.in_flight >= int(self.limit):
                if stop is not None and stop.is_set():
                    return False
                self._cond.wait(timeout=0.2)
            if stop is not None and stop.is_set():
                return False  # the permit came free because the run stopped
            self.in_flight += 1
            return True

    def release(self, failure_kind: str | None) -> None:
        """Hand the permit back, with what the request met (None: an answer)."""
        with self._cond:
            self.in_flight -= 1
            if failure_kind in OVERLOAD_KINDS:
                if self._quiet <= 0:
                    self.limit = max(1.0, self.limit * DECREASE)
                    self.decreases += 1
                    self._quiet = max(1, self.in_flight + 1)
            elif failure_kind is None:
                self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
            if self._quiet > 0:
                self._quiet -= 1
            self._cond.notify_all()

    @property
    def current(self) -> int:
        return int(self.limit)
