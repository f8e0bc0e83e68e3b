"""Run budgets: `--lsrb-max-cost` (priced by `--lsrb-price`), `--lsrb-max-total-tokens` and
`--lsrb-max-wall-time` stop a run the way a quota refusal does: nothing more is sent, the answers
already paid for are recorded, and the run's last line names the budget and the command that
continues it (`--lsrb-resume` with a larger budget).

Checked before every model request (`BudgetedAdapter`, wrapped around the run's adapter by the
runner), so a search that makes a thousand calls in one attempt stops inside it too. One budget
covers the whole run, every xdist worker included: the spend lives in a small ledger file in the
run's directory (`Ledger`), which the controller opens when the run starts and every process
updates under an exclusive file lock around each request.

A request is sent only when what is spent, plus what the requests in flight may still cost, plus
this one, stays within the budget; a request "may cost" as much as the largest one answered so far
(prompt and completion tokens apart). Before any request has been answered only one is sent at a
time. So a run stops with its spend within the budget whenever no request costs more than the
largest seen before it, and at most one request's worth over otherwise. When a request must wait
for those in flight (their true cost may leave room), it waits here, not in the server's queue.

Money and tokens are the run's: a resumed run goes on counting from what its earlier sessions
spent (the ledger stays in the run's directory), so the way on is a larger budget. Wall time is
the session's (like a batch job's time limit): the clock starts when this command's controller
opens the run. Tokens are what the server reports in `usage`; a request answered without them
counts nothing and the run says so at its end. Answers served from the response cache cost
nothing (but once a budget is spent, no request is made, cached or not).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.adapters.base import (
    Adapter,
    GenerationRequest,
    GenerationResult,
    interrupt,
    runs_ahead,
    served_slots,
)
from pytest_lsrb.adapters.usage import reported_tokens
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.nofollow import open_nofollow
from pytest_lsrb.engine.cost import Price, parse_price

LEDGER_FILE: Final = ".lsrb-budget.json"
WAIT_POLL_S: Final = 0.02  # how often a request waiting for those in flight looks again

# budget name -> (its option, what it counts, for messages)
BUDGETS: Final[Mapping[str, tuple[str, str]]] = {
    "cost": ("--lsrb-max-cost", "cost"),
    "tokens": ("--lsrb-max-total-tokens", "total tokens"),
    "wall_time": ("--lsrb-max-wall-time", "wall time"),
}


@dataclass(frozen=True)
class Limits:
    """The run's budgets (None: no cap on that one)."""

    max_cost: float | None = None
    price: Price | None = None
    max_total_tokens: int | None = None
    max_wall_time_s: float | None = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.max_cost, self.max_total_tokens, self.max_wall_time_s))


def limits_of(values: Mapping[str, Any]) -> Limits:
    """The budgets a run's options ask for; one sentence, before any model call, for a budget that
    cannot be counted (a cost without a price)."""
    price = parse_price(values.get("price"))
    max_cost = values.get("max_cost")
    if max_cost is not None and price is None:
        raise LsrbUsageError(
            "--lsrb-max-cost needs --lsrb-price (prices per million tokens, e.g. in=2.5,out=10) to "
            "know what a request costs."
        )
    tokens = values.get("max_total_tokens")
    wall = values.get("max_wall_time")
    return Limits(
        max_cost=None if max_cost is None else float(max_cost),
        price=price,
        max_total_tokens=None if tokens is None else int(tokens),
        max_wall_time_s=None if wall is None else float(wall),
    )


@dataclass(frozen=True)
class Spent:
    """What a run has spent (the ledger's content)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # requests answered (with or without usage)
    unreported: int = 0  # of those, answered without `usage`: counted as nothing
    largest_prompt: int = 0  # the largest prompt_tokens of one request
    largest_completion: int = 0
    in_flight: int = 0  # requests sent and not yet answered, over every process
    session_started: float = 0.0  # time.time() when this session's controller opened the run
    stopped: dict[str, Any] | None = None  # the first budget stop of this session (`BudgetStop`)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def from_json(cls, data: Any) -> Spent:
        """The ledger's content; a field of the wrong type (a damaged or hostile file) reads as
        its default, so arithmetic on it never fails."""
        if not isinstance(data, dict):
            return cls()
        known: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            value = data.get(name)
            if name == "stopped":
                known[name] = value if isinstance(value, dict) else None
            elif name == "session_started":
                number = (
                    float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
                )
                known[name] = number if math.isfinite(number) else 0.0
            else:
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
                known[name] = value if ok else 0
        return cls(**known)


@dataclass(frozen=True)
class BudgetStop:
    """Which budget stopped the run, with what was spent against it."""

    budget: str  # a key of BUDGETS
    limit: float
    spent: float

    @property
    def option(self) -> str:
        return BUDGETS[self.budget][0]

    def sentence(self) -> str:
        what = BUDGETS[self.budget][1]
        return (
            f"stopping the run: the {what} budget is spent ({self.option} {shown(self.limit)}; "
            f"spent {shown(self.spent)}); nothing more is sent."
        )

    @classmethod
    def from_json(cls, data: Any) -> BudgetStop | None:
        if not isinstance(data, dict) or data.get("budget") not in BUDGETS:
            return None
        try:
            return cls(str(data["budget"]), float(data["limit"]), float(data["spent"]))
        except (KeyError, TypeError, ValueError):
            return None


def shown(x: float) -> str:
    """A budget value as a user would type it: whole numbers without a point, others to 6 places."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.6f}".rstrip("0").rstrip(".")


def spent_against(limits: Limits, spent: Spent, elapsed_s: float) -> Iterator[tuple[str, float, float]]:
    """(budget, limit, spent) for each budget the run has."""
    if limits.max_cost is not None and limits.price is not None:
        yield "cost", limits.max_cost, limits.price.cost(spent.prompt_tokens, spent.completion_tokens)
    if limits.max_total_tokens is not None:
        yield "tokens", float(limits.max_total_tokens), float(spent.total_tokens)
    if limits.max_wall_time_s is not None:
        yield "wall_time", limits.max_wall_time_s, elapsed_s


def largest_request(limits: Limits, spent: Spent, budget: str) -> float:
    """What one request may cost against `budget`: the largest answered so far (0: none yet)."""
    if budget == "cost" and limits.price is not None:
        return limits.price.cost(spent.largest_prompt, spent.largest_completion)
    if budget == "tokens":
        return float(spent.largest_prompt + spent.largest_completion)
    return 0.0


def decide(limits: Limits, spent: Spent, elapsed_s: float) -> BudgetStop | bool:
    """The law of one request: a `BudgetStop` when the budget is spent (nothing in flight could
    change that), True to send it now, False to wait for the requests in flight.

    Send when spent + (in flight + 1) x the largest request stays within every budget; before any
    request was answered, only when none is in flight."""
    wait = False
    for budget, limit, used in spent_against(limits, spent, elapsed_s):
        if used >= limit:
            return BudgetStop(budget, limit, used)
        if budget == "wall_time":
            continue
        one = largest_request(limits, spent, budget)
        if one <= 0:  # nothing answered yet: one at a time (answers without usage: no size)
            if spent.in_flight and not spent.requests:
                wait = True
            continue
        if used + (spent.in_flight + 1) * one > limit:
            if not spent.in_flight:
                return BudgetStop(budget, limit, used)
            wait = True
    return not wait


FIELDS: Final = tuple(Spent.__dataclass_fields__)


def elapsed(spent: Spent, now: float) -> float:
    """Seconds since this session's controller opened the run (0 before it has)."""
    return max(0.0, now - spent.session_started) if spent.session_started else 0.0


def guard_for(values: Mapping[str, Any], run_dir: Path) -> BudgetGuard | None:
    """The budget guard of a run with these options (None: the run has no budget)."""
    limits = limits_of(values)
    return BudgetGuard(limits, Ledger(run_dir)) if limits.any else None


class Ledger:
    """The run's spend, in `<run dir>/.lsrb-budget.json`, shared by every process of the run.

    Each change is a read-modify-write under an exclusive `flock` of the file (and a lock for this
    process's threads): a few hundred bytes, twice per request."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LEDGER_FILE
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[Any]:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # never through a link
            with os.fdopen(fd, "r+", encoding="utf-8") as handle:
                try:
                    import fcntl

                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                except ImportError:  # pragma: no cover - no fcntl (Windows): one process's threads
                    pass
                yield handle

    @staticmethod
    def _read(handle: Any) -> Spent:
        handle.seek(0)
        text = handle.read(1 << 16)
        try:
            return Spent.from_json(json.loads(text)) if text.strip() else Spent()
        except ValueError:
            return Spent()

    @staticmethod
    def _write(handle: Any, spent: Spent) -> None:
        """Overwrite in place, padded with spaces to the file's length: never truncated (on ext4
        a truncate-and-rewrite forces the data to disk, ~3 ms a request instead of ~30 us)."""
        text = json.dumps({name: getattr(spent, name) for name in FIELDS}, sort_keys=True)
        size = os.fstat(handle.fileno()).st_size
        handle.seek(0)
        handle.write(text.ljust(size))
        handle.flush()

    def read(self) -> Spent:
        if not self.path.is_file():
            return Spent()
        with self._locked() as handle:
            return self._read(handle)

    def open_session(self, earlier: Spent | None, started: float) -> Spent:
        """The controller, when a session opens the run: keep what earlier sessions spent (or start
        from `earlier` when given), with nothing in flight, no stop, and this session's clock."""
        with self._locked() as handle:
            base = earlier if earlier is not None else self._read(handle)
            spent = replace(base, in_flight=0, stopped=None, session_started=started)
            self._write(handle, spent)
            return spent

    def reserve(self, limits: Limits, now: float) -> BudgetStop | Spent | None:
        """Take a place for one request: the ledger after it (sent), None (wait and ask again), or
        the stop (also written to the ledger, the first stop of the session)."""
        with self._locked() as handle:
            spent = self._read(handle)
            verdict = decide(limits, spent, elapsed(spent, now))
            if verdict is True:
                spent = replace(spent, in_flight=spent.in_flight + 1)
                self._write(handle, spent)
                return spent
            if verdict is False:
                return None
            if spent.stopped is None:
                self._write(handle, replace(spent, stopped=asdict(verdict)))
            return verdict

    def note_stop(self, stop: BudgetStop) -> None:
        """Write the session's budget stop (the first one wins), for the controller's last line."""
        with self._locked() as handle:
            spent = self._read(handle)
            if spent.stopped is None:
                self._write(handle, replace(spent, stopped=asdict(stop)))

    def settle(self, prompt: int | None, completion: int | None) -> None:
        """A request reserved with `reserve` ended: add what it cost (None: not reported)."""
        with self._locked() as handle:
            spent = self._read(handle)
            answered = prompt is not None or completion is not None
            p, c = prompt or 0, completion or 0
            self._write(
                handle,
                replace(
                    spent,
                    in_flight=max(0, spent.in_flight - 1),
                    prompt_tokens=spent.prompt_tokens + p,
                    completion_tokens=spent.completion_tokens + c,
                    requests=spent.requests + 1,
                    unreported=spent.unreported + (not answered),
                    largest_prompt=max(spent.largest_prompt, p),
                    largest_completion=max(spent.largest_completion, c),
                ),
            )

    def release(self) -> None:
        """A request reserved with `reserve` was not answered (a failure the provider bills not)."""
        with self._locked() as handle:
            spent = self._read(handle)
            self._write(handle, replace(spent, in_flight=max(0, spent.in_flight - 1)))


@dataclass
class BudgetGuard:
    """One process's view of the run's budgets: asked before every request and every attempt."""

    limits: Limits
    ledger: Ledger
    clock: Any = time.time  # seconds since the epoch (the ledger's session_started)
    stop: BudgetStop | None = None
    _local: threading.local = field(default_factory=threading.local, repr=False)

    def exhausted(self) -> BudgetStop | None:
        """The stop, once any process found a budget spent (checked before each attempt)."""
        if self.stop is None:
            spent = self.ledger.read()
            found = BudgetStop.from_json(spent.stopped)
            if found is None:
                verdict = decide(self.limits, replace(spent, in_flight=0), elapsed(spent, self.clock()))
                found = verdict if isinstance(verdict, BudgetStop) else None
                if found is not None:
                    self.ledger.note_stop(found)
            self.stop = found
        return self.stop

    def before_request(self) -> BudgetStop | None:
        """Wait for a place within the budget; the stop when there is none."""
        while self.stop is None:
            verdict = self.ledger.reserve(self.limits, self.clock())
            if isinstance(verdict, BudgetStop):
                self.stop = verdict
                break
            if verdict is not None:
                return None
            time.sleep(WAIT_POLL_S)
        self._local.refused = True
        return self.stop

    def after_request(self, result: GenerationResult) -> None:
        if result.ok or result.usage:
            self.ledger.settle(
                reported_tokens(result, "prompt_tokens"), reported_tokens(result, "completion_tokens")
            )
        else:
            self.ledger.release()

    def begin_attempt(self) -> None:
        self._local.refused = False

    def refused_in_attempt(self) -> bool:
        """Whether a request of the attempt this thread is running was refused by the budget."""
        return bool(getattr(self._local, "refused", False))


REFUSED: Final = "stopped: the run's budget is spent"


class BudgetedAdapter(Adapter):
    """The run's adapter with the budget asked before each request (cache hits pass free)."""

    def __init__(self, inner: Adapter, guard: BudgetGuard, on_stop: Any = None) -> None:
        self.inner = inner
        self.guard = guard
        self.on_stop = on_stop
        self.name = inner.name
        self.model = inner.model
        self.default_concurrency = inner.default_concurrency

        self.runs_ahead = runs_ahead(inner)
        self.cacheable = inner.cacheable if isinstance(inner, Adapter) else True

    def served_slots(self) -> int | None:
        return served_slots(self.inner)

    def check(self) -> None:
        self.inner.check()

    def generate(self, request: GenerationRequest) -> GenerationResult:
        stop = self.guard.before_request()
        if stop is not None:
            if self.on_stop is not None:
                self.on_stop(stop.sentence())
            return GenerationResult.failure("connection", f"{REFUSED} ({stop.sentence()})", 0.0, 0)
        try:
            result = self.inner.generate(request)
        except BaseException:
            self.guard.ledger.release()
            raise
        if result.cached:
            self.guard.ledger.release()  # the cache answered: nothing was sent or billed
        else:
            self.guard.after_request(result)
        return result

    def identity(self) -> Mapping[str, Any]:
        return self.inner.identity()

    def interrupt(self) -> None:
        interrupt(self.inner)

    def close(self) -> None:
        self.inner.close()


def budget_note(limits: Limits, spent: Spent, now: float) -> str | None:
    """The progress line's part for a run with budgets: `budget cost 1.84/2, wall time 40/600 s`
    (what the run has spent against each; None without a budget)."""
    parts = []
    for budget, limit, used in spent_against(limits, spent, elapsed(spent, now)):
        unit = " s" if budget == "wall_time" else ""
        value = f"{used:.0f}" if budget != "cost" else f"{used:.4g}"
        parts.append(f"{BUDGETS[budget][1]} {value}/{shown(limit)}{unit}")
    return "budget " + ", ".join(parts) if parts else None


def continue_value(stop: BudgetStop, done: int, total: int) -> float:
    """A budget that should let the run finish: what was spent per finished attempt, times every
    attempt, with a tenth more; at least twice the old budget when nothing finished yet. Rounded
    up to two significant digits (a value a person types)."""
    if stop.budget == "wall_time" or done <= 0 or total <= done:
        need = 2 * stop.limit
    else:
        need = max(stop.limit * 1.1, stop.spent / done * total * 1.1)
    if need <= 0:
        return stop.limit
    step = 10 ** (math.floor(math.log10(need)) - 1)
    value = math.ceil(need / step - 1e-9) * step
    return float(round(value, 12))
