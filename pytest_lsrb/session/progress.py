"""The progress line the controller prints while a run goes (with or without xdist).

    lsrb 40/120 (33%) · closed 9/37 · 1.90/s · ETA 42s · errors: timeout 2 · tokens 3,200 in
        / 410 out · cost 0.0012 · cache hits 12   (one line in the terminal)

The score so far (`closed 9/37`: tactic answers Lean closed, or `valid` ones when nothing verifies;
llm_srbench `Acc0.1` or `SA`) counts this session's judged attempts by the one judging rule
(`engine.outcomes.verdict`); its denominator leaves out infrastructure errors and skipped rows.

Fed with each attempt's record as it is written to attempts.jsonl (under xdist, as the controller
reads the workers' records back from the file), so it counts what is really done, whichever
worker did it. Printed as whole
lines at most every `interval` seconds: a terminal gets one every few seconds, a CI log (not a
TTY) one every half minute, so a long run's log stays readable.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from pytest_lsrb.core.durations import duration
from pytest_lsrb.engine.cost import Price
from pytest_lsrb.engine.outcomes import JUDGED, UNJUDGED_VERIFICATION_DOMAINS, unreadable, verdict
from pytest_lsrb.engine.records import AttemptRecord

TTY_INTERVAL_S: Final = 5.0
LOG_INTERVAL_S: Final = 30.0
# Verification outcomes that say nothing about the model (see engine.outcomes): errors too.


def live_note(attempts: Sequence[Mapping[str, Any]], now: float) -> str | None:
    """The progress line's part for attempts of several calls in flight (`output.live`): the one
    running longest, with its calls of the budget, its search's best score so far, how long it
    has run and, once a call has come back, about how long it has left at the pace of the calls
    made so far (less the time the call now running has had):

        in flight: feynman_I_6_2#s0 3/5 calls, best train NMSE 0.0123, 1m10s, ~47s left (+1 more)
    """
    if not attempts:
        return None
    first = attempts[0]
    elapsed = max(0.0, now - float(first["started"]))
    calls, budget = int(first.get("calls") or 0), int(first.get("budget") or 0)
    parts = [f"{first['item_id']}#s{first.get('sample_index', 0)} {calls}/{budget} calls"]
    if first.get("best") is not None:
        parts.append(f"best {first.get('best_label') or 'score'} {float(first['best']):.3g}")
    parts.append(duration(elapsed))
    last = first.get("last_call")
    if calls and budget > calls and isinstance(last, (int, float)):
        pace = max(0.0, float(last) - float(first["started"])) / calls
        parts.append(f"~{duration(max(0.0, pace * (budget - calls) - (now - float(last))))} left")
    more = f" (+{len(attempts) - 1} more)" if len(attempts) > 1 else ""
    return "in flight: " + ", ".join(parts) + more


def tokens(n: int) -> str:
    return f"{n:,}" if n < 100_000 else f"{n / 1000:,.0f}k"


class Progress:
    """Counts finished attempts; says how far the run is (`line`) and when to say it (`due`)."""

    def __init__(
        self,
        total: int,
        *,
        interval_s: float,
        price: Price | None = None,
        clock: Callable[[], float] = time.monotonic,
        score_label: str | None = None,
        note: Callable[[], str | None] | None = None,
    ) -> None:
        self.total = total
        self.resumed = 0  # attempts an earlier run finished (--lsrb-resume): not in `total`
        self.interval_s = interval_s
        self.price = price
        self.clock = clock
        self.started = clock()
        self.last_shown: float | None = None
        self.done = 0
        self.errors: Counter[str] = Counter()
        self.unreadable = 0  # answers with nothing usable in them (`outcomes.unreadable`)
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.spent = [0, 0]  # tokens not answered from the cache: what the price applies to
        self.cache_hits = 0
        self.first_done: float | None = None  # the rate counts from here: start-up is no attempt
        self.score_label = score_label  # None: no running score
        self.note = note  # a part the line asks for when shown (a run's budgets: engine.budget)
        self.judged = 0
        self.succeeded = 0

    def add(self, record: AttemptRecord) -> None:
        self.done += 1
        if self.first_done is None:
            self.first_done = self.clock()
        if self.score_label is not None:
            status, won = verdict(record)
            if status == JUDGED:
                self.judged += 1
                self.succeeded += won
        kind = record.get("generation_error_kind")
        if unreadable(record):
            self.unreadable += 1  # the model's own answer: a result, not an error
        elif kind:
            self.errors[str(kind)] += 1
        elif record.get("verification_error_domain") in UNJUDGED_VERIFICATION_DOMAINS:
            # `check timeout` (Lean's wall clock) is not the model call's `timeout`
            self.errors["check " + str(record.get("verification_error_kind") or "failed")] += 1
        p_tok = _count(record.get("prompt_tokens"))
        c_tok = _count(record.get("completion_tokens"))
        self.prompt_tokens += p_tok
        self.completion_tokens += c_tok
        if record.get("cached"):
            self.cache_hits += 1
        else:
            self.spent[0] += p_tok
            self.spent[1] += c_tok

    def due(self) -> bool:
        """Time for a line: the first attempt, the last one, or `interval_s` since the last line."""
        if self.interval_s <= 0:
            return False
        now = self.clock()
        if self.last_shown is None or self.done >= self.total:
            return True
        return now - self.last_shown >= self.interval_s

    def rate(self, now: float) -> float | None:
        """Attempts per second since the first one finished (None until two have)."""
        if self.first_done is None or self.done < 2 or now <= self.first_done:
            return None
        return (self.done - 1) / (now - self.first_done)

    def line(self) -> str:
        now = self.clock()
        self.last_shown = now
        total = max(self.total, self.done)
        parts = [f"lsrb {self.done}/{total}" + (f" ({100 * self.done // total}%)" if total else "")]
        if self.score_label is not None and self.judged:
            parts.append(f"{self.score_label} {self.succeeded}/{self.judged}")
        rate = self.rate(now)
        if rate is not None:
            parts.append(f"{rate:.2f}/s" if rate < 10 else f"{rate:.0f}/s")
            if self.done < total:
                parts.append(f"ETA {duration((total - self.done) / rate)}")
        if self.errors:
            parts.append("errors: " + ", ".join(f"{k} {n}" for k, n in sorted(self.errors.items())))
        if self.unreadable:
            parts.append(f"unreadable answers {self.unreadable}")
        if self.prompt_tokens or self.completion_tokens:
            parts.append(f"tokens {tokens(self.prompt_tokens)} in / {tokens(self.completion_tokens)} out")
        if self.price is not None:
            parts.append(f"cost {self.price.cost(self.spent[0], self.spent[1]):.4f}")
        if self.cache_hits:
            parts.append(f"cache hits {self.cache_hits}")
        note = self.note() if self.note is not None else None
        if note:
            parts.append(note)
        return " · ".join(parts)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def interval_for(option: float | None, isatty: bool) -> float:
    """`--lsrb-progress` seconds, else one line every few seconds on a terminal, rarer in a log."""
    if option is not None:
        return float(option)
    return TTY_INTERVAL_S if isatty else LOG_INTERVAL_S


class ProgressReporter:
    """The controller's side: feeds `Progress` with records and prints its line when due."""

    def __init__(self, progress: Progress, terminalreporter: Any) -> None:
        self.progress = progress
        self.terminal = terminalreporter
        self._lock = threading.Lock()  # `nudge` comes from a thread waiting to retry a call

    def nudge(self) -> None:
        """Print the line if due though no attempt finished (a call waiting for the server)."""
        with self._lock:
            if self.terminal is not None and self.progress.due():
                self.write(self.progress.line())

    def say(self, line: str) -> None:
        """One line of its own between pytest's dots (the server's outage: `session.outage_line`)."""
        with self._lock:
            if self.terminal is not None:
                self.write(line)

    def collected(self, count: int) -> None:
        """The attempts this session will run, once collection (and `-k`) has settled it."""
        if count:
            self.progress.total = count

    def add(self, record: AttemptRecord) -> None:
        """Count one record as it was written (a worker's line arrives decoded, once)."""
        with self._lock:
            self.progress.add(record)
            if self.terminal is not None and self.progress.due():
                self.write(self.progress.line())

    def add_many(self, records: Iterable[AttemptRecord]) -> None:
        """Count the records xdist workers wrote since the last look, then print if due."""
        with self._lock:
            for record in records:
                self.progress.add(record)
            if self.terminal is not None and self.progress.due():
                self.write(self.progress.line())

    def write(self, line: str) -> None:
        """One line between pytest's dots. Straight to pytest's writer when it has one, so the
        dots go on below it without pytest printing the test file's path again."""
        from pytest_lsrb.session.seams import terminal_writer

        writer = terminal_writer(self.terminal)
        if writer is None:
            self.terminal.write_line(line)
            return
        if writer.width_of_current_line:
            writer.line()
        writer.line(line)
