"""The laws of run budgets (`engine.budget`, issues #34 and #38): one request's decision, the ledger shared
by threads and processes, the budget suggested to continue, and the command that carries it."""

from __future__ import annotations

import math
import multiprocessing
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, Message, SamplingConfig
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.budget import (
    BudgetedAdapter,
    BudgetGuard,
    BudgetStop,
    Ledger,
    Limits,
    SessionClock,
    Spent,
    Worst,
    budget_note,
    continue_value,
    decide,
    limits_of,
    settled_stop,
    shown,
    worst_case,
)
from pytest_lsrb.engine.cost import Price
from pytest_lsrb.engine.ledger import Reservation, new_reservation
from pytest_lsrb.engine.option_checks import check_values
from pytest_lsrb.session.nextstep import next_step_line, with_option


def spend_serially(limits: Limits, worst: Worst, cost: tuple[int, int]) -> Spent:
    """Requests of worst case `worst` and true `cost` one after another, each sent only when
    `decide` says so."""
    spent = Spent(session_started=1.0)
    for _ in range(100_000):
        verdict = decide(limits, spent, 0.0, worst)
        if isinstance(verdict, BudgetStop):
            return spent
        assert verdict is True  # nothing in flight: never a wait
        p, c = cost
        spent = replace(
            spent,
            prompt_tokens=spent.prompt_tokens + p,
            completion_tokens=spent.completion_tokens + c,
            requests=spent.requests + 1,
        )
    raise AssertionError("never stopped")


@given(st.integers(1, 5000), st.integers(0, 400), st.integers(0, 400))
@example(limit=23, prompt=20, completion=3)  # exactly one request fits
@example(limit=22, prompt=20, completion=3)  # not even one: nothing is sent
def test_serial_requests_stop_within_the_budget_with_no_room_for_another(
    limit: int, prompt: int, completion: int
) -> None:
    one = prompt + completion
    if one == 0:
        return  # a request that costs nothing never spends a budget
    spent = spend_serially(Limits(max_total_tokens=limit), Worst(prompt, completion), (prompt, completion))
    assert spent.total_tokens <= limit  # never over
    assert spent.total_tokens + one > limit  # and it stopped only when no other fits


def test_a_cost_budget_counts_both_prices() -> None:
    limits = Limits(max_cost=1.0, price=Price(prompt=10_000, completion=100_000))
    spent = spend_serially(limits, Worst(20, 3), (20, 3))  # 0.2 + 0.3 = 0.5 per request
    assert spent.requests == 2


def test_the_wall_clock_stops_at_its_limit_whatever_is_in_flight() -> None:
    limits = Limits(max_wall_time_s=10)
    held = tuple(new_reservation(1, 1, None) for _ in range(5))
    assert decide(limits, Spent(reservations=held), 9.9, Worst(1, 1)) is True
    assert decide(limits, Spent(reservations=held), 10.0, Worst(1, 1)) == BudgetStop("wall_time", 10.0, 10.0)


def test_a_request_is_priced_at_its_worst_case_not_at_the_answers_seen() -> None:
    limits = Limits(max_total_tokens=1000)
    held = (new_reservation(20, 100, None),)
    assert decide(limits, Spent(reservations=held), 0, Worst(20, 100)) is False  # none answered yet
    answered = Spent(prompt_tokens=20, completion_tokens=3, requests=1)
    # 23 spent + 2 in flight at 120 + this one at 120 = 383 <= 1000: sent alongside
    assert decide(limits, replace(answered, reservations=held * 2), 0, Worst(20, 100)) is True
    # 23 + 7 x 120 + 120 = 983: still; 23 + 8 x 120 + 120 > 1000: it waits for those in flight
    assert decide(limits, replace(answered, reservations=held * 7), 0, Worst(20, 100)) is True
    assert decide(limits, replace(answered, reservations=held * 8), 0, Worst(20, 100)) is False
    # one that cannot fit even alone stops the run, naming what it may cost
    assert decide(limits, answered, 0, Worst(20, 980)) == BudgetStop("tokens", 1000.0, 23.0, 1000.0)


def test_the_worst_case_counts_every_byte_and_the_max_tokens() -> None:
    request = GenerationRequest(
        messages=(Message("system", "é" * 10), Message("user", "x" * 30)),
        seed=0,
        sampling=SamplingConfig(max_tokens=77),
    )
    assert worst_case(request) == Worst(20 + 30 + 2 * 8 + 64, 77)


def run_threads(ledger_dir: Path, limits: Limits, threads: int, cost: tuple[int, int]) -> None:
    guard = BudgetGuard(limits, Ledger(ledger_dir))

    def work() -> None:
        while True:
            verdict = guard.reserve(Worst(*cost), None)
            if isinstance(verdict, BudgetStop):
                return
            if verdict is None:
                time.sleep(0.001)
                continue
            guard.settle(verdict, {"prompt_tokens": cost[0], "completion_tokens": cost[1]})

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(30)


def test_one_budget_for_threads_and_processes(tmp_path: Path) -> None:
    """Two processes of four threads each, sharing the ledger (as -n 2 workers with
    --lsrb-concurrency 4 do): the spend ends within the budget, with no room for another."""
    limits = Limits(max_total_tokens=1000)
    Ledger(tmp_path).open_session(started=1.0)
    ctx = multiprocessing.get_context("fork") if hasattr(__import__("os"), "fork") else None
    if ctx is None:
        pytest.skip("no fork on this platform")
    procs = [ctx.Process(target=run_threads, args=(tmp_path, limits, 4, (20, 3))) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    spent = Ledger(tmp_path).read()
    assert spent.in_flight == 0
    assert 1000 - 23 < spent.total_tokens <= 1000  # every request the same size: never over
    assert spent.requests == spent.total_tokens // 23
    stop = BudgetStop.from_json(spent.stopped)
    assert stop is not None and stop.budget == "tokens" and stop.spent <= spent.total_tokens


def test_a_resumed_session_keeps_what_was_spent(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    ledger.open_session(started=5.0)
    guard = BudgetGuard(Limits(max_total_tokens=100), ledger)
    held = guard.reserve(Worst(50, 10), None)
    assert isinstance(held, Reservation)
    guard.settle(held, {"prompt_tokens": 50, "completion_tokens": 10})
    guard.note_stop(BudgetStop("tokens", 60, 60))
    again = ledger.open_session(9.0, at_least=(0, 0))
    assert (again.total_tokens, again.in_flight, again.stopped, again.session_started) == (60, 0, None, 9.0)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        '{"prompt_tokens": "many", "in_flight": -4, "session_started": "x", "stopped": 3}',
        '{"completion_tokens": true, "largest_prompt": 1.5, "session_started": 1e999}',
        '{"reservations": [{"id": 1}, 7, {"id": "a", "pid": -1, "host": "h", "prompt": 1, "completion": 1}]}',
        "\x00" * 100,
    ],
)
def test_a_damaged_ledger_reads_as_nothing_spent(tmp_path: Path, text: str) -> None:
    ledger = Ledger(tmp_path)
    ledger.path.write_text(text, encoding="utf-8")
    assert ledger.read() == Spent()
    limits = Limits(max_cost=1.0, price=Price(1.0, 1.0), max_total_tokens=10, max_wall_time_s=5.0)
    guard = BudgetGuard(limits, ledger)
    held = guard.reserve(Worst(2, 3), None)  # and it goes on counting from there
    assert isinstance(held, Reservation)
    guard.settle(held, {"prompt_tokens": 2, "completion_tokens": 3})
    assert ledger.read().total_tokens == 5


class Answering:
    """An adapter at the edge: answers every request with 20 + 3 tokens, or from its cache."""

    name, model, default_concurrency = "fake", "m", 1

    def __init__(self, cached: bool = False) -> None:
        self.cached = cached
        self.calls = 0

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.calls += 1
        return GenerationResult(
            text="simp",
            latency_ms=1.0,
            cached=self.cached,
            usage={"prompt_tokens": 20, "completion_tokens": 3},
        )

    def check(self) -> None: ...
    def identity(self) -> dict[str, Any]:
        return {}

    def close(self) -> None: ...


# worst case 64 + 8 + 4 prompt tokens (the template's allowance and "goal"), 10 completion: 86
REQUEST = GenerationRequest(
    messages=(Message("user", "goal"),), seed=0, sampling=SamplingConfig(max_tokens=10)
)


def test_the_adapter_refuses_once_the_budget_is_spent_and_says_so(tmp_path: Path) -> None:
    stops: list[str] = []
    inner = Answering()
    guard = BudgetGuard(Limits(max_total_tokens=200), Ledger(tmp_path))
    adapter = BudgetedAdapter(inner, guard, on_stop=stops.append)
    results = [adapter.generate(REQUEST) for _ in range(8)]
    # 23 a request: after 5 (115 spent) another's worst case (86) no longer fits in 200
    assert [r.ok for r in results] == [True] * 5 + [False] * 3
    assert inner.calls == 5  # nothing sent after the stop
    assert guard.refused_in_attempt()
    assert (
        stops
        and (
            "total tokens budget is spent (--lsrb-max-total-tokens 200; spent 115); the next request may "
            "cost up to 86, more than is left"
        )
        in stops[0]
    )


def test_cached_answers_cost_nothing(tmp_path: Path) -> None:
    guard = BudgetGuard(Limits(max_total_tokens=100), Ledger(tmp_path))
    adapter = BudgetedAdapter(Answering(cached=True), guard)
    assert all(adapter.generate(REQUEST).ok for _ in range(10))
    spent = guard.ledger.read()
    assert (spent.total_tokens, spent.in_flight) == (0, 0)


def test_a_cost_budget_needs_a_price() -> None:
    with pytest.raises(LsrbUsageError, match="--lsrb-max-cost needs --lsrb-price"):
        limits_of({"max_cost": 1.0, "price": None})
    assert limits_of({"max_cost": 1.0, "price": "in=1,out=2"}).price == Price(1.0, 2.0)
    assert not limits_of({}).any


@pytest.mark.parametrize(
    ("key", "value"),
    [("max_cost", 0.0), ("max_cost", math.nan), ("max_total_tokens", 0), ("max_wall_time", -1.0)],
)
def test_a_budget_out_of_bounds_is_refused(key: str, value: float) -> None:
    with pytest.raises(LsrbUsageError, match=f"--lsrb-{key.replace('_', '-')}"):
        check_values({key: value})


@given(
    st.sampled_from(["cost", "tokens", "wall_time"]),
    st.floats(0.001, 1e6),
    st.integers(0, 500),
    st.integers(1, 500),
)
def test_the_budget_to_continue_is_larger_and_typeable(
    budget: str, limit: float, done: int, total: int
) -> None:
    stop = BudgetStop(budget, limit, limit)
    value = continue_value(stop, done, total)
    assert value > limit
    if budget != "wall_time" and 0 < done < total:
        assert value >= limit / done * total  # enough for the rest at the pace so far
    assert float(shown(value)) == pytest.approx(value, rel=1e-6)
    assert len(shown(value).replace(".", "").strip("0")) <= 2  # two significant digits


@pytest.mark.parametrize(
    "words",
    [
        ["lsrb", "run", "x", "--lsrb-max-cost=2"],
        ["lsrb", "run", "x", "--lsrb-max-cost", "2"],
        ["lsrb", "run", "x"],
    ],
)
def test_the_budget_option_is_set_once(words: list[str]) -> None:
    assert with_option(words, "--lsrb-max-cost", "6.1") == ["lsrb", "run", "x", "--lsrb-max-cost=6.1"]


def test_the_last_line_names_the_budget_and_continues_with_a_larger_one() -> None:
    summary = {"attempts": 8, "attempts_expected": 24, "complete": False}
    line = next_step_line(
        summary,
        True,
        Path("/runs/r1"),
        False,
        [],
        argv=["lsrb", "run", "tactic", "--lsrb-max-cost", "2"],
        budget_stop=BudgetStop("cost", 2.0, 1.84),
    )
    assert line == (
        "lsrb: the run stopped at its budget (--lsrb-max-cost 2; spent 1.84) with 8 of 24 attempts "
        "done; to continue it with a larger budget, run: lsrb run tactic --lsrb-resume --lsrb-max-cost=6.1"
    )


def test_answers_without_usage_are_counted_as_unreported(tmp_path: Path) -> None:
    guard = BudgetGuard(Limits(max_total_tokens=50), Ledger(tmp_path))
    held = guard.reserve(Worst(10, 10), None)
    assert isinstance(held, Reservation)
    guard.settle(held, {})  # an answer without usage
    spent = guard.ledger.read()
    assert (spent.unreported, spent.requests, spent.total_tokens, spent.in_flight) == (1, 1, 0, 0)


def test_answers_without_a_size_do_not_hold_the_run_to_one_request_at_a_time() -> None:
    limits = Limits(max_total_tokens=1000)
    unsized = Spent(requests=3, unreported=3, reservations=(new_reservation(1, 1, None),) * 2)
    assert decide(limits, unsized, 0, Worst(1, 1)) is True


def test_the_progress_line_says_what_each_budget_has_spent() -> None:
    limits = Limits(max_cost=2.0, price=Price(10_000, 10_000), max_total_tokens=500, max_wall_time_s=600)
    spent = Spent(prompt_tokens=160, completion_tokens=24, session_started=100.0)
    note = budget_note(limits, spent, now=140.0)
    assert note == "budget cost 1.84/2, total tokens 184/500, wall time 40/600 s"
    assert budget_note(Limits(), spent, now=140.0) is None


def test_the_wall_time_budget_runs_on_the_monotonic_clock_not_the_wall_clock() -> None:
    """Anchored once to the wall clock (the session began 40 s ago), then monotonic: a step of the
    system clock (NTP, a suspended VM) neither stretches nor ends the budget."""
    wall, mono = [1_000.0], [50.0]
    clock = SessionClock(monotonic=lambda: mono[0], wall=lambda: wall[0])
    spent = Spent(session_started=960.0)
    assert clock.elapsed(spent) == 40.0
    wall[0] += 3_600.0  # the wall clock jumps an hour ahead
    mono[0] += 5.0
    assert clock.elapsed(spent) == 45.0
    wall[0] -= 7_200.0  # and two hours back
    assert clock.elapsed(spent) == 45.0
    limits = Limits(max_wall_time_s=60)
    assert decide(limits, spent, clock.elapsed(spent)) is True


def test_a_dead_process_reservation_expires_counted_at_its_worst_case(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, alive=lambda pid: pid != 4242)
    ledger.open_session(started=1.0)
    dead = replace(new_reservation(300, 100, None), id="dead", pid=4242)
    leased = replace(new_reservation(10, 10, None), id="old", pid=4243, until=time.time() - 1)
    other_host = replace(new_reservation(5, 5, None), id="far", pid=4242, host="elsewhere")
    with ledger.change() as box:
        box[0] = replace(box[0], reservations=(dead, leased, other_host))
    with ledger.change() as box:  # any change drops them first
        spent = box[0]
    assert spent.reservations == (other_host,)  # another host's: its lease decides, not a pid here
    assert (spent.total_tokens, spent.expired) == (420, 2)


def test_the_stop_line_reports_the_spend_settled_after_the_stop() -> None:
    limits = Limits(max_total_tokens=3000, max_wall_time_s=10)
    stop = BudgetStop("tokens", 3000.0, 2015.0, 1100.0)
    settled = Spent(prompt_tokens=15, completion_tokens=2900)
    assert settled_stop(stop, limits, settled) == BudgetStop("tokens", 3000.0, 2915.0, 1100.0)
    wall = BudgetStop("wall_time", 10.0, 10.2)
    assert settled_stop(wall, limits, settled) == wall
    assert settled_stop(None, limits, settled) is None


@given(st.floats(1.0, 1e5), st.floats(0.0, 1e4), st.integers(0, 50), st.integers(1, 50))
def test_the_budget_to_continue_leaves_room_for_the_last_request_s_worst_case(
    limit: float, needed: float, done: int, total: int
) -> None:
    spent = limit - needed / 2 if needed < limit else limit / 2
    value = continue_value(BudgetStop("tokens", limit, spent, needed), done, total)
    if 0 < done < total:
        assert value >= spent / done * total + needed  # the rest at the pace so far, then one more
    assert value >= spent + needed and value > limit
