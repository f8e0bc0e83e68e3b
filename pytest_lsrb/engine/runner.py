"""The runner: turns cases into attempt records, with resume and attempts kept in flight.

pytest runs tests one after another, but model calls are I/O bound. The runner keeps up to
`concurrency` upcoming attempts running in a thread pool, so by the time pytest reaches a test its
attempt is usually done. With concurrency 1 it runs each attempt inline, with no threads at all.

It looks `lookahead` (2 x concurrency) tests ahead, so a thread that finishes always finds the next
attempt queued even when pytest's own per-test work makes the main thread lag behind.

Attempts that cost microseconds run ahead too, without threads: when the adapter answers at once
and the same whenever asked (`adapters.base.runs_ahead`: the mock), the task makes one call per
attempt and no checker runs, the runner makes the next `batch` tests' records in one go when a
test needs its own. Made back to back, an attempt costs about half what it costs between two
tests (pytest's per-test work pushes its code and data out of the CPU's caches). Each record is
still written when its own test runs; a killed run makes the unwritten ones again on resume, the
same records (each `finished_at` is when it was made).

Attempts get the model's slots in test order: each prefetched attempt carries a `Ticket` numbered
in the order its test comes (`adapters.concurrency`), and the attempt a test is waiting for moves
to the front. On a server with fewer slots than attempts in flight, the running test's request is
sent first and its successors next, so tests finish as answers arrive (steady progress and ETA, and
a test's duration is its own answer's, not other attempts' queueing). The time an attempt waited
for a slot is recorded apart, as `queue_ms`, in attempts that asked an endpoint with a limit.

A quota or auth refusal stops the run: queued attempts are cancelled (the adapter itself sends
nothing more) and a `StopSignal` in the output directory tells the other xdist workers. So does an
outage of the model's server (`adapters.outage`): once every call has failed for the retry time,
the attempts in flight end as infrastructure errors (recorded) and the rest are not run. A spent
budget (`engine.budget`, asked before each request and each attempt) stops it the same way; the
attempt whose request it refused is not recorded (a resume makes it whole).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lsrb.adapters.base import Adapter, SamplingConfig, interrupt, runs_ahead
from pytest_lsrb.adapters.concurrency import CURRENT, Line, Ticket
from pytest_lsrb.adapters.outage import down_sentence, run_outage
from pytest_lsrb.core.clock import utc_now_millis
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS
from pytest_lsrb.core.selection import Case, SelectableRow
from pytest_lsrb.engine.budget import BudgetedAdapter, BudgetGuard
from pytest_lsrb.engine.calls import AttemptCalls
from pytest_lsrb.engine.options import RunConfig
from pytest_lsrb.engine.outcomes import answered, judgement
from pytest_lsrb.engine.records import RECORD_SCHEMA_VERSION, AttemptFields, AttemptRecord
from pytest_lsrb.engine.stop import StopSignal
from pytest_lsrb.engine.task import AttemptContext, Judgement, Task
from pytest_lsrb.engine.verifier import UndeclaredOutcome, Verifier
from pytest_lsrb.engine.watch import WatchedAdapter, Watches


# Not frozen: one per test, and a frozen dataclass's __init__ costs ~3x a plain one's. Tests read it.
@dataclass
class Attempt:
    """A finished attempt as a test sees it."""

    case: Case[SelectableRow]
    record: AttemptRecord | None  # None when resumed from an earlier run's record
    judgement: Judgement
    resumed: bool = False
    policy: str = "strict"  # --lsrb-outcome

    @property
    def tactic(self) -> str | None:
        tactic = None if self.record is None else self.record.get("tactic")  # a tactic record's
        return tactic if isinstance(tactic, str) else None

    def check(self) -> None:
        """Fail the calling test for a wrong answer, unless the outcome policy is `record`.

        Infrastructure errors never get here: they error the test during setup.
        """
        if self.policy != "record" and self.judgement.outcome == "fail":
            import pytest

            pytest.fail(self.judgement.message, pytrace=False)


class RunStopped(Exception):
    """The run is stopping (a quota/auth refusal or a spent budget, here or in another worker):
    skip this test."""


class Runner:
    def __init__(
        self,
        *,
        task: Task[SelectableRow],
        adapter: Adapter,
        verifier: Verifier[SelectableRow],
        config: RunConfig,
        config_hash: str,
        concurrency: int,
        finished: Mapping[tuple[str, int], Judgement] | None = None,
        task_options: Mapping[str, Any] | None = None,
        stop_signal: StopSignal | None = None,
        adapter_fields: Mapping[str, str] | None = None,
        budget: BudgetGuard | None = None,
        watches: Watches | None = None,
        outage_dir: Path | None = None,
    ) -> None:
        self.task = task
        self._outage_dir = outage_dir  # where the run's processes share the server's outage state
        self.budget = budget
        if budget is not None:  # every request asks the run's budget first
            adapter = BudgetedAdapter(adapter, budget, on_stop=self.stop)
        # attempts of several calls are watched while they run (`engine.watch`): the calls each
        # has made, counted here around the adapter, for the progress line and `lsrb view`
        self.watches = watches
        self._calls_each = task.calls_per_attempt(task_options or {}) if watches is not None else 1
        if watches is not None:
            adapter = WatchedAdapter(adapter)
        self.adapter = adapter
        self.verifier = verifier
        self.config = config
        self.config_hash = config_hash
        self.concurrency = max(1, concurrency)
        self.finished = dict(finished or {})
        self.task_options = dict(task_options or {})
        # The most model calls one attempt may make: the harness refuses more (`engine.calls`).
        self.call_limit = task.calls_per_attempt(self.task_options)
        temperature = config["temperature"]  # None: a task asked for the provider's default
        self.sampling = SamplingConfig(
            temperature=None if temperature is None else float(temperature),
            max_tokens=config.max_tokens,
        )
        # The identity fields every record of this run shares, after its item, sample and seed.
        self._suite, self._adapter, self._model = config.suite.name, adapter.name, adapter.model
        # a user's own adapter: its class and a hash of its settings, in every record
        self._adapter_fields: AttemptFields = (
            {
                "adapter_class": adapter_fields["adapter_class"],
                "adapter_settings_sha256": adapter_fields["adapter_settings_sha256"],
            }
            if adapter_fields
            else {}
        )
        # How many upcoming tests to start early (0: run each attempt inline).
        self.lookahead = 2 * self.concurrency if self.concurrency > 1 else 0
        self._fatal: str | None = None
        self._stop_signal = stop_signal
        self._futures: dict[tuple[str, int], Future[AttemptRecord | None]] = {}
        # Each prefetched attempt's place in line for a model slot: test order (see the module doc).
        self._tickets: dict[tuple[str, int], Ticket] = {}
        self._order = itertools.count()
        self._line = Line()
        # Attempts made ahead on this thread (see the module's doc), by case, until their test.
        cheap = runs_ahead(adapter) if self.concurrency == 1 and verifier.mode == "none" else 0
        self.batch = cheap if cheap > 1 and self.call_limit == 1 else 0
        if budget is not None:  # a budget is asked before each attempt: none are made ahead in bulk
            self.batch = 0
        self._ready: dict[tuple[str, int], AttemptRecord] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = (
            ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="lsrb-attempt")
            if self.concurrency > 1
            else None
        )

    # -- running -----------------------------------------------------------------------------

    def build_record(self, case: Case[SelectableRow], ticket: Ticket | None = None) -> AttemptRecord:
        """Run one attempt and assemble its full record. Never raises for model/tool failures.
        `ticket`: its place in line for a model slot (None: the running test's, at the front)."""
        ticket = ticket or Ticket(order=-1.0)
        token = CURRENT.set(ticket)
        calls = AttemptCalls(self.adapter, self.call_limit)  # counts and limits its calls
        ctx = AttemptContext(
            case=case,
            adapter=calls,
            verifier=self.verifier,
            sampling=self.sampling,
            suite=self.config.suite,
            options=self.task_options,
        )
        fields: AttemptFields
        if self.budget is not None:
            self.budget.begin_attempt()
        try:
            if self.watches is not None:
                with self.watches.watching(case.item_id, case.sample_index, self._calls_each):
                    fields = self.task.run_attempt(ctx)
            else:
                fields = self.task.run_attempt(ctx)
        except UndeclaredOutcome as exc:  # never guessed: the run stops, saying which outcome
            self.stop(f"stopping the run: {exc}")
            raise RunStopped(f"stopping the run: {exc}") from None
        except Exception as exc:  # a harness bug must not take the run down
            fields = {
                "generation_error_kind": "harness",
                "generation_error_domain": "harness",
                "generation_error_message": f"{type(exc).__name__}: {exc}",
            }
        finally:
            CURRENT.reset(token)
            if ticket.line is not None:
                ticket.line.leave(ticket)  # (if it sent nothing, the ones behind it go on)
        if self.budget is not None and self.budget.refused_in_attempt():
            # the budget refused one of its requests: the attempt is not whole, so not recorded
            raise RunStopped(self.fatal or "stopping the run: its budget is spent.")
        fields = calls.record(fields, self.verifier.mode)  # the calls as the harness counted them
        if ticket.permits:  # it asked an endpoint that queues for slots: what it waited there
            fields["queue_ms"] = round(ticket.queued_s * 1000.0, 3)
        record: AttemptRecord = {
            "record_schema_version": RECORD_SCHEMA_VERSION,
            "item_id": case.item_id,
            "sample_index": case.sample_index,
            "attempt_seed": case.attempt_seed,
            "suite": self._suite,
            "adapter": self._adapter,
            "model": self._model,
            "config_hash": self.config_hash,
            **self._adapter_fields,
            **fields,
            "finished_at": utc_now_millis(),
        }
        kind = record.get("generation_error_kind")
        if kind in FATAL_GENERATION_KINDS and self._fatal is None:
            self.stop(
                f"stopping the run: the endpoint refused with '{kind}' "
                f"({record.get('generation_error_message') or 'no detail'}); "
                "every later call would fail the same way."
            )
        return record

    # -- stopping ------------------------------------------------------------------------------

    @property
    def fatal(self) -> str | None:
        """Why the run must stop (this process's refusal or another worker's, or the server's
        outage), else None."""
        if self._fatal is None and self._stop_signal is not None:
            message = self._stop_signal.message()
            if message is not None:
                self._fatal = message
                self._cancel_queued()
        if self._fatal is None and self._outage_dir is not None:
            down = run_outage(self._outage_dir)  # one access(2) while the server is up
            if down is not None:
                self.stop(down_sentence(down))
        return self._fatal

    def out_of_budget(self) -> bool:
        """Whether the run's budget is spent (then the run stops, as for a refusal)."""
        stop = self.budget.exhausted() if self.budget is not None else None
        if stop is not None:
            self.stop(stop.sentence())
        return stop is not None

    def stop(self, message: str, *, everywhere: bool = True) -> None:
        """Stop this run: no new attempts here, and (`everywhere`) tell the other workers (not
        when this process no longer owns the run: the stop would be another command's)."""
        with self._lock:
            if self._fatal is not None:
                return
            self._fatal = message
        self._cancel_queued()
        if everywhere and self._stop_signal is not None:
            self._stop_signal.raise_stop(message)

    def _cancel_queued(self) -> None:
        """Cancel attempts not yet started (running ones finish; the adapter sends nothing new)."""
        with self._lock:
            for key in [k for k, fut in self._futures.items() if fut.cancel()]:
                del self._futures[key]
                ticket = self._tickets.pop(key, None)
                if ticket is not None:
                    self._line.leave(ticket)

    def prefetch(self, cases: Iterable[Case[SelectableRow]]) -> None:
        """Start attempts for upcoming cases (no-op without a pool or once the run is stopping)."""
        if self._pool is None or self.fatal:
            return
        with self._lock:
            for case in cases:
                if case.key in self.finished or case.key in self._futures:
                    continue
                if len(self._futures) >= self.lookahead + self.concurrency:
                    break
                ticket = self._line.join(Ticket(order=float(next(self._order))))
                self._tickets[case.key] = ticket
                self._futures[case.key] = self._pool.submit(self._prefetched, case, ticket)

    def ahead(self, case: Case[SelectableRow]) -> int:
        """How many of the tests after `case`'s `attempt` can use (`upcoming`)."""
        if self.batch:
            return 0 if case.key in self._ready else self.batch - 1
        return self.lookahead

    def attempt(self, case: Case[SelectableRow], upcoming: Iterable[Case[SelectableRow]] = ()) -> Attempt:
        """The attempt for `case`: resumed, prefetched, or run now."""
        policy = self.config.outcome
        done = self.finished.get(case.key) if self.finished else None  # (a fresh run: none)
        if done is not None:
            self._ready.pop(case.key, None)
            return Attempt(case=case, record=None, judgement=done, resumed=True, policy=policy)
        record: AttemptRecord | None = None
        if self.batch:
            record = self._ready.pop(case.key, None)
            if record is None and not self.fatal:
                record = self.build_record(case)
                for other in upcoming:
                    if other.key not in self.finished and other.key not in self._ready:
                        self._ready[other.key] = self.build_record(other)
        elif self._pool is not None:
            # the case itself first: its request must not queue behind its successors'
            self.prefetch(itertools.chain((case,), upcoming))
            with self._lock:
                future = self._futures.pop(case.key, None)
                ticket = self._tickets.pop(case.key, None)
            if ticket is not None:
                self._line.to_front(ticket)  # this test waits for it: its request goes next
            # None: never started, or not run because the run is stopping.
            record = self._result(future) if future is not None else None
        if record is None:
            if self.fatal or (self.budget is not None and self.out_of_budget()):
                raise RunStopped(self.fatal or "stopping the run: its budget is spent.")
            record = self.build_record(case)
        return Attempt(case=case, record=record, judgement=judgement(self.task, record), policy=policy)

    def _prefetched(self, case: Case[SelectableRow], ticket: Ticket) -> AttemptRecord | None:
        """A pool job: the attempt's record, or None when the run stopped before it started."""
        if self.fatal:  # also notices a stop raised by another xdist worker
            return None
        if self.budget is not None and self.out_of_budget():
            return None
        return self.build_record(case, ticket)

    def untaken_answers(self) -> list[AttemptRecord]:
        """Records of attempts run ahead whose tests never took them (the run stopped, or pytest
        ended early) and that hold the model's answer. The provider has billed those answers:
        they are recorded, so a resume does not ask for them again. After a quota/auth stop it
        waits for attempts still running (their requests are out; each ends within the adapter's
        timeout); otherwise (Ctrl-C, -x) it takes only finished ones. Not started: cancelled.
        Attempts made ahead in a batch cost nothing and are made again if asked: not recorded."""
        self._ready.clear()
        with self._lock:
            futures = list(self._futures.values())
            self._futures.clear()
            for ticket in self._tickets.values():  # nobody waits for these in line any more
                self._line.leave(ticket)
            self._tickets.clear()
        wait = self.fatal is not None
        records = []
        for future in futures:
            if future.cancel() or not (wait or future.done()):
                continue
            record = self._result(future)
            if record is not None and answered(record):
                records.append(record)
        return records

    @staticmethod
    def _result(future: Future[AttemptRecord | None]) -> AttemptRecord | None:
        try:
            return future.result()
        except (CancelledError, RunStopped):  # RunStopped: the budget refused part of it
            return None

    def close(self) -> None:
        """Stop the attempts in flight. The adapter and the verifier are not the runner's to
        close: whoever made them does (the `lsrb_adapter`/`lsrb_verifier` fixtures, or a user's
        override of them), once."""
        if self._pool is not None:
            self._cancel_queued()
            # Interrupting the adapter first wakes attempts sleeping before a retry; their records
            # are never written (no test is left to take them), so nothing half-done is recorded.
            interrupt(self.adapter)
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
