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
wait would run down each request's timeout. Under xdist (`-n N`) the N workers share those slots
(`slot_share`), so the whole run, not each worker, keeps about that many in flight. Once the
server has said how many it serves, a timeout is a slow answer, not an overloaded server: the
limit stays at the slot count (429 and 5xx still halve it).

A free permit goes to the waiting request that comes first in test order, not to whichever thread
wakes first: each attempt carries a `Ticket` (set by the runner in `CURRENT` for the thread that
runs it) whose `order` is its test's place in line. On a one-slot server the attempt the running
test needs is served first, then its successors, so tests finish as answers arrive. Requests
without a ticket (or with equal orders) are served in arrival order. The ticket also adds up the
time its attempt waited for permits (`queue_ms` in the record): queue time, apart from latency.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol

# Failure kinds that mean "the server is overloaded": back off.
OVERLOAD_KINDS: Final = frozenset({"rate_limit", "server_error", "timeout"})
DECREASE: Final = 0.5
NOT_SENT: Final = "not_sent"  # a permit handed back unused: the limit neither grows nor shrinks


class Admission(Protocol):
    """A budget's say on each request a call sends (`engine.budget.Admission`)."""

    def enter(self, lease_s: float | None = None) -> bool | None:
        """Reserve (True: send), not now (None: `pause`, then ask again), or never (False)."""
        ...

    def pause(self, stop: threading.Event | None = None) -> None:
        """Wait a moment for the requests in flight to settle (holding no permit)."""
        ...

    def leave(self, usage: Any) -> None:
        """The request sent ended: its `usage` (an answer) or None (no answer)."""
        ...


# The budget of the `generate` call running on this thread (None: the run has no budget).
ADMISSION: ContextVar[Admission | None] = ContextVar("lsrb_admission", default=None)


def slot_share(slots: int, workers: int, index: int) -> int:
    """The server's slots one of `workers` processes keeps in flight: `slots // workers`, one more
    for the first `slots % workers` workers, never below 1 (so the workers together keep
    `max(slots, workers)`: each needs a request in flight to make progress at all)."""
    workers = max(1, workers)
    base, extra = divmod(max(1, slots), workers)
    return max(1, base + (1 if index % workers < extra else 0))


def xdist_place(environ: Mapping[str, str] = os.environ) -> tuple[int, int]:
    """(workers, this worker's index) from the variables pytest-xdist sets in each worker
    (`PYTEST_XDIST_WORKER_COUNT`, `PYTEST_XDIST_WORKER` = gw0, gw1, ...); (1, 0) outside xdist."""
    count = environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    worker = environ.get("PYTEST_XDIST_WORKER", "")
    number = worker.removeprefix("gw")
    if not (count.isdigit() and int(count) > 0 and worker.startswith("gw") and number.isdigit()):
        return 1, 0
    return int(count), int(number)


@dataclass(eq=False)
class Ticket:
    """One attempt's place in line for a permit (lower goes first; the runner numbers attempts in
    test order, and moves the one a waiting test needs to the front), and what it waited."""

    order: float = math.inf
    queued_s: float = 0.0
    permits: int = 0  # requests it sent through a limit
    line: Line | None = None  # the attempts started ahead with it (None: it competes alone)


class Line:
    """The runner's attempts in flight, in test order, until each has sent its first request.

    A free permit is not given to a ticket while one before it in this line has yet to ask for
    one: that one's thread may simply not have reached the limit yet (threads start in test order
    but run in any order), and it must not lose its turn for it."""

    def __init__(self) -> None:
        self._tickets: dict[Ticket, None] = {}
        self._limits: dict[AdaptiveLimit, None] = {}  # where tickets of this line wait

    def join(self, ticket: Ticket) -> Ticket:
        ticket.line = self
        self._tickets[ticket] = None
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """`ticket` asked for its first permit, or finished or was cancelled without one."""
        if self._tickets.pop(ticket, 0) is None:
            for limit in list(self._limits):
                limit.wake()

    def before(self, ticket: Ticket) -> int:
        """How many of the line come before `ticket` and have not asked for a permit yet."""
        order = ticket.order
        return sum(1 for other in list(self._tickets) if other.order < order)

    def to_front(self, ticket: Ticket) -> None:
        """A test waits for `ticket`'s attempt: once it waits for a permit, it goes first. Not
        while it is still in this line: its job may not have started, and moving it ahead of
        the threads that would start it could leave them all waiting for it."""
        if ticket not in self._tickets:
            ticket.order = -1.0

    def watch(self, limit: AdaptiveLimit) -> None:
        self._limits[limit] = None


# The ticket of the attempt running on this thread (None outside an attempt: arrival order).
CURRENT: ContextVar[Ticket | None] = ContextVar("lsrb_ticket", default=None)


class AdaptiveLimit:
    """A semaphore whose size follows the server: thread-safe, never below 1."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, int(ceiling))
        self.limit = float(self.ceiling)
        self.in_flight = 0
        self.decreases = 0
        self._cond = threading.Condition()
        self._quiet = 0  # completions to ignore further overload signals for (one window)
        self.slots_known = False  # the server said how many it serves (cap)
        # Requests waiting for a permit: (ticket, arrival number); served lowest (order, arrival) first.
        self._waiting: list[tuple[Ticket, int]] = []
        self._arrivals = itertools.count()

    def cap(self, slots: int) -> None:
        """The server serves at most `slots` at once: never keep more in flight than that."""
        with self._cond:
            self.ceiling = max(1, min(self.ceiling, int(slots)))
            self.limit = min(self.limit, float(self.ceiling))
            self.slots_known = True

    def fit(self, slots: int) -> None:
        """No ceiling was asked for: keep exactly the server's `slots` in flight (up or down)."""
        with self._cond:
            self.ceiling = max(1, int(slots))
            self.limit = float(self.ceiling)
            self.slots_known = True
            self._cond.notify_all()

    def acquire(self, stop: threading.Event | None = None, ticket: Ticket | None = None) -> bool:
        """Wait for a permit, behind every waiting request that comes before `ticket` in test
        order; False when `stop` was set while waiting (send nothing then)."""
        mine = (ticket or Ticket(), next(self._arrivals))
        line = mine[0].line
        if line is not None:
            line.watch(self)
            line.leave(mine[0])  # in the queue now: the order among waiters covers it
        with self._cond:
            if not self._waiting and self._my_turn(mine):
                return self._take(stop, mine[0], 0.0)
            started = time.perf_counter()
            self._waiting.append(mine)
            try:
                while not self._my_turn(mine):
                    if stop is not None and stop.is_set():
                        return False
                    self._cond.wait(timeout=0.2)
            finally:
                self._waiting.remove(mine)
            return self._take(stop, mine[0], time.perf_counter() - started)

    def _my_turn(self, mine: tuple[Ticket, int]) -> bool:
        """A permit is free for `mine`: fewer waiters come before it than permits are free
        (orders are read now: a ticket moved to the front overtakes at the next release)."""
        free = int(self.limit) - self.in_flight
        if free <= 0:
            return False
        key = (mine[0].order, mine[1])
        ahead = sum(1 for ticket, arrival in self._waiting if (ticket.order, arrival) < key)
        line = mine[0].line
        if line is not None:
            ahead += line.before(mine[0])
        return ahead < free

    def wake(self) -> None:
        """Let waiters look again (a ticket before them left its line without a permit)."""
        with self._cond:
            self._cond.notify_all()

    def _take(self, stop: threading.Event | None, ticket: Ticket, waited_s: float) -> bool:
        if stop is not None and stop.is_set():
            return False  # the permit came free because the run stopped
        self.in_flight += 1
        ticket.queued_s += waited_s
        ticket.permits += 1
        if self._waiting:
            self._cond.notify_all()  # the next in line may fit too (more than one permit free)
        return True

    def release(self, failure_kind: str | None) -> None:
        """Hand the permit back, with what the request met (None: an answer)."""
        with self._cond:
            self.in_flight -= 1
            if failure_kind == NOT_SENT:  # nothing was asked of the server: nothing learnt
                self._cond.notify_all()
                return
            if failure_kind in OVERLOAD_KINDS and not (self.slots_known and failure_kind == "timeout"):
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
