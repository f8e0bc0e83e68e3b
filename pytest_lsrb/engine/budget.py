"""Run budgets: `--lsrb-max-cost` (priced by `--lsrb-price`), `--lsrb-max-total-tokens` and
`--lsrb-max-wall-time` stop a run the way a quota refusal does: nothing more is sent, the answers
already paid for are recorded, and the run's last line names the budget, what was spent (settled:
every answer the server billed) and the command that continues it (`--lsrb-resume` with a larger
budget).

The law (docs/adapters.md, "Budgets"; tests/engine/test_budget_bound.py holds it): a run's spend
never passes its cost or token budget, whatever the answer lengths, the number of threads and
`-n` workers, the server's slots, and worker deaths. A request is sent only when what is spent,
plus the worst case of every request in flight, plus this request's worst case, fits the budget.
A request's worst case is its prompt counted at one token per UTF-8 byte (no tokenizer makes more
tokens of a text than it has bytes) plus an allowance for the chat template, and its `max_tokens`;
priced by `--lsrb-price` for a cost budget. When a server bills more than that (a template longer
than the allowance, a server ignoring `max_tokens`), the excess seen is added to every later worst
case; and until one request has been answered, only one is in flight, so that first excess is
paid once. A request whose worst case does not fit even with nothing in flight stops the run.

Where it is asked: an HTTP adapter (`Adapter.admits_budget`) asks inside `HttpEndpoint.call`, for each
request it sends, only while holding its slot permit, and gives the permit back when the answer
is settled; when the budget must wait for requests in flight it gives its permit back first. So
no thread ever holds a budget reservation while it waits for a permit, nor a permit while it
waits for the budget: a one-slot server cannot deadlock the two (issue #38). Other adapters (the
mock, a user's) are asked around their `generate`. One budget covers the whole run, every xdist
worker included: the ledger (`engine.ledger`) lives in the run's directory, and a reservation
expires with the process that took it.

Money and tokens are the run's: a resumed run goes on counting from what its earlier sessions
spent (the ledger stays in the run's directory), so the way on is a larger budget. Wall time is
the session's (like a batch job's time limit): the clock starts when this command's controller
opens the run, and each process measures it on its own monotonic clock from when it first sees
the session, so a step of the wall clock neither stretches nor ends it. Tokens are what the server
reports in `usage`; a request answered without them counts nothing and the run says so at its
end. Answers served from the response cache cost nothing (but once a budget is spent, no request
is made, cached or not).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.adapters.base import (
    Adapter,
    GenerationRequest,
    GenerationResult,
    WrappingAdapter,
    admits_budget,
)
from pytest_lsrb.adapters.concurrency import ADMISSION
from pytest_lsrb.adapters.usage import reported_tokens
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.cost import Price, parse_price
from pytest_lsrb.engine.ledger import LEDGER_FILE, Ledger, Reservation, Spent, new_reservation

__all__ = ["LEDGER_FILE", "Ledger", "Spent"]  # (the ledger's names, where callers look for them)

WAIT_POLL_S: Final = 0.02  # how often a request waiting for those in flight looks again
# The chat template's tokens around the text (roles, turn markers, a default system prompt):
# allowed per message and per request on top of one token per byte of the text.
TEMPLATE_TOKENS_PER_MESSAGE: Final = 8
TEMPLATE_TOKENS: Final = 64

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
class Worst:
    """The most one request may be billed: prompt and completion tokens."""

    prompt: int
    completion: int


def worst_case(request: GenerationRequest) -> Worst:
    """A request's worst case: its text at one token per UTF-8 byte plus the template's
    allowance, and its `max_tokens`."""
    text = sum(len(m.content.encode("utf-8", errors="replace")) for m in request.messages)
    prompt = text + TEMPLATE_TOKENS_PER_MESSAGE * len(request.messages) + TEMPLATE_TOKENS
    return Worst(prompt, max(0, int(request.sampling.max_tokens)))


@dataclass(frozen=True)
class BudgetStop:
    """Which budget stopped the run, with what was spent against it (settled)."""

    budget: str  # a key of BUDGETS
    limit: float
    spent: float
    needed: float = 0.0  # the worst case of the request that found no room (0: the budget is spent)

    @property
    def option(self) -> str:
        return BUDGETS[self.budget][0]

    def sentence(self) -> str:
        what = BUDGETS[self.budget][1]
        room = (
            f"; the next request may cost up to {shown(self.needed)}, more than is left"
            if self.needed
            else ""
        )
        return (
            f"stopping the run: the {what} budget is spent ({self.option} {shown(self.limit)}; "
            f"spent {shown(self.spent)}){room}; nothing more is sent."
        )

    @classmethod
    def from_json(cls, data: Any) -> BudgetStop | None:
        if not isinstance(data, dict) or data.get("budget") not in BUDGETS:
            return None
        try:
            needed = float(data.get("needed") or 0.0)
            return cls(str(data["budget"]), float(data["limit"]), float(data["spent"]), needed)
        except (KeyError, TypeError, ValueError):
            return None


def shown(x: float) -> str:
    """A budget value as a user would type it: whole numbers without a point, others to 6 places."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.6f}".rstrip("0").rstrip(".")


def spent_against(limits: Limits, spent: Spent, elapsed_s: float) -> Iterator[tuple[str, float, float]]:
    """(budget, limit, settled spend) for each budget the run has."""
    if limits.max_cost is not None and limits.price is not None:
        yield "cost", limits.max_cost, limits.price.cost(spent.prompt_tokens, spent.completion_tokens)
    if limits.max_total_tokens is not None:
        yield "tokens", float(limits.max_total_tokens), float(spent.total_tokens)
    if limits.max_wall_time_s is not None:
        yield "wall_time", limits.max_wall_time_s, elapsed_s


def priced(limits: Limits, budget: str, spent: Spent, prompt: int, completion: int) -> float:
    """What `prompt` + `completion` tokens of worst case come to against `budget`, with the
    excess the server was seen to bill past a worst case added."""
    p, c = prompt + spent.prompt_excess, completion + spent.completion_excess
    if budget == "cost" and limits.price is not None:
        return limits.price.cost(p, c)
    return float(p + c)


def decide(limits: Limits, spent: Spent, elapsed_s: float, request: Worst | None = None) -> BudgetStop | bool:
    """The law of one request: a `BudgetStop` when the budget is spent or the request can never
    fit, True to send it now, False to wait for the requests in flight (their settled cost is at
    most their worst case, so they may leave room). `request` None: only whether a budget is
    already spent (asked before each attempt).

    Send when settled + the worst case of everything in flight + this one's fits every budget;
    until one request was answered, only when nothing is in flight."""
    wait = False
    for budget, limit, used in spent_against(limits, spent, elapsed_s):
        if used >= limit:
            return BudgetStop(budget, limit, used)
        if budget == "wall_time" or request is None:
            continue
        held = sum(priced(limits, budget, spent, r.prompt, r.completion) for r in spent.reservations)
        one = priced(limits, budget, spent, request.prompt, request.completion)
        if not spent.reservations:
            if used + one > limit:
                return BudgetStop(budget, limit, used, one)
        elif used + held + one > limit or not spent.requests:
            wait = True
    return not wait


def elapsed(spent: Spent, now: float) -> float:
    """Seconds since this session's controller opened the run, by the wall clock `now` (0 before
    it has). Only for display; the budget's clock is `SessionClock`."""
    return max(0.0, now - spent.session_started) if spent.session_started else 0.0


class SessionClock:
    """This process's clock of the session: anchored once, when it first sees the session's
    start in the ledger, to the wall clock's elapsed time then, and monotonic from there."""

    def __init__(
        self, monotonic: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time
    ) -> None:
        self.monotonic, self.wall = monotonic, wall
        self._anchor: tuple[float, float] | None = None  # (session_started, monotonic origin)

    def elapsed(self, spent: Spent) -> float:
        if not spent.session_started:
            return 0.0
        if self._anchor is None or self._anchor[0] != spent.session_started:  # a new session
            already = max(0.0, self.wall() - spent.session_started)
            self._anchor = (spent.session_started, self.monotonic() - already)
        return max(0.0, self.monotonic() - self._anchor[1])


def guard_for(values: Mapping[str, Any], run_dir: Path) -> BudgetGuard | None:
    """The budget guard of a run with these options (None: the run has no budget)."""
    limits = limits_of(values)
    return BudgetGuard(limits, Ledger(run_dir)) if limits.any else None


@dataclass
class BudgetGuard:
    """One process's view of the run's budgets: asked before every request and every attempt."""

    limits: Limits
    ledger: Ledger
    clock: SessionClock = field(default_factory=SessionClock)
    stop: BudgetStop | None = None
    pid: int | None = None  # whose reservations these are (None: this process's; a test's stand-in)
    _local: threading.local = field(default_factory=threading.local, repr=False)

    def exhausted(self) -> BudgetStop | None:
        """The stop, once any process found a budget spent (checked before each attempt)."""
        if self.stop is None:
            spent = self.ledger.read()
            found = BudgetStop.from_json(spent.stopped)
            if found is None:
                verdict = decide(self.limits, spent, self.clock.elapsed(spent))
                found = verdict if isinstance(verdict, BudgetStop) else None
                if found is not None:
                    self.note_stop(found)
            self.stop = found
        return self.stop

    def reserve(self, worst: Worst, lease_s: float | None) -> BudgetStop | Reservation | None:
        """Take a place for one request in one locked change of the ledger: the reservation
        (send it), None (wait for those in flight and ask again), or the stop (also written to
        the ledger, the first stop of the session). Never waits."""
        if self.stop is not None:
            self._local.refused = True
            return self.stop
        with self.ledger.change() as box:
            spent = box[0]
            verdict = decide(self.limits, spent, self.clock.elapsed(spent), worst)
            if verdict is True:
                held = new_reservation(worst.prompt, worst.completion, lease_s, self.pid)
                box[0] = replace(spent, reservations=(*spent.reservations, held))
                return held
            if verdict is False:
                return None
            if spent.stopped is None:
                box[0] = replace(spent, stopped=asdict(verdict))
        self.stop = verdict
        self._local.refused = True
        return verdict

    def note_stop(self, stop: BudgetStop) -> None:
        """Write the session's budget stop (the first one wins), for the controller's last line."""
        with self.ledger.change() as box:
            if box[0].stopped is None:
                box[0] = replace(box[0], stopped=asdict(stop))

    def settle(self, held: Reservation, usage: Mapping[str, int] | None) -> None:
        """The reserved request ended: with `usage` (an answer: what it cost, possibly nothing
        reported) or None (no answer: a failure the provider bills not, a cache hit)."""
        if usage is None:
            self.ledger.release(held.id)
            return
        result = GenerationResult(text="", latency_ms=0.0, usage=usage)
        self.ledger.settle(
            held.id, reported_tokens(result, "prompt_tokens"), reported_tokens(result, "completion_tokens")
        )

    def begin_attempt(self) -> None:
        self._local.refused = False

    def refused_in_attempt(self) -> bool:
        """Whether a request of the attempt this thread is running was refused by the budget."""
        return bool(getattr(self._local, "refused", False))


class Admission:
    """One `generate` call's way through the budget (`adapters.concurrency.Admission`): a
    reservation per request sent, taken and settled by whoever sends it."""

    def __init__(self, guard: BudgetGuard, worst: Worst) -> None:
        self.guard = guard
        self.worst = worst
        self.held: Reservation | None = None
        self.refused: BudgetStop | None = None

    def enter(self, lease_s: float | None = None) -> bool | None:
        """Reserve for one request: True (send it), None (pause, then ask again), False (the
        budget refused it: send nothing more)."""
        verdict = self.guard.reserve(self.worst, lease_s)
        if isinstance(verdict, Reservation):
            self.held = verdict
            return True
        if verdict is not None:
            self.refused = verdict
        return None if verdict is None else False

    def pause(self, stop: threading.Event | None = None) -> None:
        if stop is not None:
            stop.wait(WAIT_POLL_S)
        else:
            time.sleep(WAIT_POLL_S)

    def leave(self, usage: Mapping[str, int] | None) -> None:
        held, self.held = self.held, None
        if held is not None:
            self.guard.settle(held, usage)


REFUSED: Final = "stopped: the run's budget is spent"


class BudgetedAdapter(WrappingAdapter):
    """The run's adapter with the budget asked before each request (cache hits pass free)."""

    def __init__(self, inner: Adapter, guard: BudgetGuard, on_stop: Any = None) -> None:
        super().__init__(inner)
        self.guard = guard
        self.on_stop = on_stop
        self._inside = admits_budget(inner)  # (a cache in front says what its adapter does)

    def generate(self, request: GenerationRequest) -> GenerationResult:
        admission = Admission(self.guard, worst_case(request))
        if self._inside:  # the endpoint asks, per request it sends, while holding its permit
            token = ADMISSION.set(admission)
            try:
                result = self.inner.generate(request)
            finally:
                ADMISSION.reset(token)
                admission.leave(None)  # (an exception between its reserve and its settle)
            return result if admission.refused is None else self._refused(admission.refused)
        while admission.enter() is None:  # no permit to hold here: wait, then send
            admission.pause()
        if admission.refused is not None:
            return self._refused(admission.refused)
        try:
            result = self.inner.generate(request)
        except BaseException:
            admission.leave(None)
            raise
        answered = not result.cached and (result.ok or bool(result.usage))
        admission.leave(dict(result.usage) if answered else None)
        return result

    def _refused(self, stop: BudgetStop) -> GenerationResult:
        if self.on_stop is not None:
            self.on_stop(stop.sentence())
        return GenerationResult.failure("connection", f"{REFUSED} ({stop.sentence()})", 0.0, 0)


def budget_note(limits: Limits, spent: Spent, now: float | SessionClock) -> str | None:
    """The progress line's part for a run with budgets: `budget cost 1.84/2, wall time 40/600 s`
    (what the run has spent against each; None without a budget). `now`: the wall clock's time,
    or this process's session clock."""
    parts = []
    seconds = now.elapsed(spent) if isinstance(now, SessionClock) else elapsed(spent, now)
    for budget, limit, used in spent_against(limits, spent, seconds):
        unit = " s" if budget == "wall_time" else ""
        value = f"{used:.0f}" if budget != "cost" else f"{used:.4g}"
        parts.append(f"{BUDGETS[budget][1]} {value}/{shown(limit)}{unit}")
    return "budget " + ", ".join(parts) if parts else None


def settled_stop(stop: BudgetStop | None, limits: Limits, spent: Spent) -> BudgetStop | None:
    """The stop with the spend settled since (the requests in flight when it was decided have
    been answered and billed): what the run's last line reports."""
    if stop is None or stop.budget == "wall_time":
        return stop
    for budget, _limit, used in spent_against(limits, spent, 0.0):
        if budget == stop.budget:
            return replace(stop, spent=used)
    return stop


def continue_value(stop: BudgetStop, done: int, total: int) -> float:
    """A budget that should let the run finish: what was spent per finished attempt, times every
    attempt, with a tenth more, plus the room the last request needs for its worst case (a request
    goes only when its worst case fits); at least twice the old budget when nothing finished yet
    (and room for that worst case). Rounded up to two significant digits (a value a person types)."""
    if stop.budget == "wall_time" or done <= 0 or total <= done:
        need = max(2 * stop.limit, stop.spent + 2 * stop.needed)
    else:
        need = max(stop.limit * 1.1, stop.spent / done * total * 1.1 + stop.needed)
    if need <= 0:
        return stop.limit
    step = 10 ** (math.floor(math.log10(need)) - 1)
    value = math.ceil(need / step - 1e-9) * step
    return float(round(value, 12))
