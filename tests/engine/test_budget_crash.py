"""The budget law across crashes and the printed resume (issue #46 item 3): what the server bills a
run over all its sessions never passes its budget, whatever dies when.

Before, a resumed session opened the ledger with nothing in flight: a request whose process had
been SIGKILLed (its reservation not yet expired when the resume read the ledger) was forgotten
instead of counted at its worst case, and one still running (an `-n` worker outliving its
SIGKILLed controller) settled as 0 when its answer came: 14,000 tokens billed for a 12,000 budget.

The law is checked on the real ledger file, the real `BudgetGuard` and the real `decide`, with the
processes of a run played by stand-ins: each has its own pid (beyond any real one), its liveness is
what the machine says, and the server is the machine's own account of what it billed. A request is
billed when it reaches the server (the most pessimistic moment), whether or not anyone reads its
answer; a failed one is not billed. The slow end-to-end version, with real pytest runs and real
SIGKILLs, is tests/hardening/test_budget_crash_runs.py.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from pytest_lsrb.engine.budget import BudgetGuard, Limits, Worst
from pytest_lsrb.engine.ledger import Ledger, Reservation

FAKE_PIDS = itertools.count(1 << 23)  # above any pid_max: never a real process here


@dataclass
class Sent:
    reservation: Reservation
    prompt: int  # what the server bills for it (at most its worst case)
    completion: int


@dataclass
class Process:
    """A stand-in for one process of a run (a controller or an `-n` worker)."""

    guard: BudgetGuard
    sent: list[Sent] = field(default_factory=list)


class CrashingRun(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.alive: set[int] = set()
        self.ledger = Ledger(Path(self.tmp.name), alive=lambda pid: pid in self.alive)
        self.limit = 0
        self.processes: dict[int, Process] = {}
        self.billed = 0  # what the server billed, over every session
        self.recorded = [0, 0]  # prompt, completion tokens of the answers settled (the records)

    def teardown(self) -> None:
        self.tmp.cleanup()

    @rule(limit=st.integers(100, 5_000), workers=st.integers(1, 3))
    @precondition(lambda self: not self.limit)
    def start(self, limit: int, workers: int) -> None:
        self.limit = limit
        self.ledger.open_session(time.time())
        self.spawn(workers)

    def spawn(self, workers: int) -> None:
        for _ in range(workers):
            pid = next(FAKE_PIDS)
            self.alive.add(pid)
            guard = BudgetGuard(Limits(max_total_tokens=self.limit), self.ledger, pid=pid)
            self.processes[pid] = Process(guard)

    def live(self) -> list[int]:
        return sorted(pid for pid in self.processes if pid in self.alive)

    @precondition(lambda self: bool(self.limit))
    @rule(
        which=st.integers(0, 10),
        prompt=st.integers(1, 600),
        completion=st.integers(0, 600),
        share=st.floats(0, 1),
        expired_lease=st.booleans(),
    )
    def send(self, which: int, prompt: int, completion: int, share: float, expired_lease: bool) -> None:
        """A live process asks to send a request; when admitted, the server bills it."""
        live = self.live()
        if not live:
            return
        process = self.processes[live[which % len(live)]]
        # a lease shorter than the answer takes (the whole-response deadline passed): it expires
        # at the next change of the ledger, while its process still waits for the answer
        held = process.guard.reserve(Worst(prompt, completion), 1e-6 if expired_lease else 3600.0)
        if isinstance(held, Reservation):
            sent = Sent(held, round(prompt * share), round(completion * share))
            process.sent.append(sent)
            self.billed += sent.prompt + sent.completion

    @precondition(lambda self: bool(self.limit))
    @rule(which=st.integers(0, 10), index=st.integers(0, 10), unbilled=st.booleans())
    def answer(self, which: int, index: int, unbilled: bool) -> None:
        """A live process reads one of its answers (or its failure, which the server bills not)."""
        live = [pid for pid in self.live() if self.processes[pid].sent]
        if not live:
            return
        process = self.processes[live[which % len(live)]]
        sent = process.sent.pop(index % len(process.sent))
        if unbilled:
            self.billed -= sent.prompt + sent.completion
            process.guard.settle(sent.reservation, None)
            return
        process.guard.settle(
            sent.reservation, {"prompt_tokens": sent.prompt, "completion_tokens": sent.completion}
        )
        self.recorded[0] += sent.prompt
        self.recorded[1] += sent.completion

    @precondition(lambda self: bool(self.limit))
    @rule(which=st.integers(0, 10))
    def kill_one(self, which: int) -> None:
        """SIGKILL of one process: its requests in flight stay billed, and nobody reads them."""
        live = self.live()
        if live:
            self.alive.discard(live[which % len(live)])

    @precondition(lambda self: bool(self.limit))
    @rule(controller_only=st.booleans(), workers=st.integers(1, 3))
    def crash_and_resume(self, controller_only: bool, workers: int) -> None:
        """SIGKILL of the controller (its workers live on, finishing what is in flight) or of the
        whole group, then the printed `--lsrb-resume` at once: a new session's processes."""
        if not controller_only:
            self.alive.clear()
        for process in self.processes.values():
            process.guard.stop = None if process.guard.pid not in self.alive else process.guard.stop
        self.ledger.open_session(time.time(), at_least=(self.recorded[0], self.recorded[1]))
        self.spawn(workers)

    @invariant()
    def the_server_never_bills_past_the_budget(self) -> None:
        assert self.billed <= max(self.limit, 0), (self.billed, self.limit)

    @invariant()
    def what_is_counted_covers_what_was_billed(self) -> None:
        """Settled spend plus the worst case of everything still in flight covers the bill."""
        if not self.limit:
            return
        spent = self.ledger.read()
        in_flight = sum(r.prompt + r.completion for r in spent.reservations)
        assert spent.total_tokens + in_flight >= self.billed


CrashingRun.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_spend_over_every_session_stays_within_the_budget = CrashingRun.TestCase
