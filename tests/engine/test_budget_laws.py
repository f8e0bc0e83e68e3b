"""The laws of run budgets (`engine.budget`, issue #34): one request's decision, the ledger shared
by threads and processes, the budget suggested to continue, and the command that carries it."""

from __future__ import annotations

import math
import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, SamplingConfig
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.budget import (
    BudgetedAdapter,
    BudgetGuard,
    BudgetStop,
    Ledger,
    Limits,
    Spent,
    budget_note,
    continue_value,
    decide,
    limits_of,
    shown,
)
from pytest_lsrb.engine.cost import Price
from pytest_lsrb.engine.option_checks import check_values
from pytest_lsrb.session.nextstep import next_step_line, with_option


def spend_serially(limits: Limits, cost: tuple[int, int]) -> Spent:
    """Requests of `cost` tokens one after another, each sent only when `decide` says so."""
    spent = Spent(session_started=1.0)
    for _ in range(100_000):
        verdict = decide(limits, spent, 0.0)
        if isinstance(verdict, BudgetStop):
            return spent
        assert verdict is True  # nothing in flight: never a wait
        p, c = cost
        spent = Spent(
            prompt_tokens=spent.prompt_tokens + p,
            completion_tokens=spent.completion_tokens + c,
            requests=spent.requests + 1,
            largest_prompt=max(spent.largest_prompt, p),
            largest_completion=max(spent.largest_completion, c),
            session_started=1.0,
        )
    raise AssertionError("never stopped")


@given(st.integers(1, 5000), st.integers(0, 400), st.integers(0, 400))
@example(limit=23, prompt=20, completion=3)  # exactly one request fits
@example(limit=22, prompt=20, completion=3)  # not even one: the first still goes (size unknown)
def test_serial_requests_stop_within_the_budget_with_no_room_for_another(
    limit: int, prompt: int, completion: int
) -> None:
    one = prompt + completion
    if one == 0:
        return  # a request that costs nothing never spends a budget
    spent = spend_serially(Limits(max_total_tokens=limit), (prompt, completion))
    assert spent.requests >= 1
    assert spent.total_tokens <= limit + one  # at most one request's worth over
    if spent.requests > 1:
        assert spent.total_tokens <= limit  # once a request's size is known, never over
    assert spent.total_tokens + one > limit  # and it stopped only when no other fits


def test_a_cost_budget_counts_both_prices() -> None:
    limits = Limits(max_cost=1.0, price=Price(prompt=10_000, completion=100_000))
    spent = spend_serially(limits, (20, 3))  # 0.2 + 0.3 = 0.5 per request
    assert spent.requests == 2


def test_the_wall_clock_stops_at_its_limit_whatever_is_in_flight() -> None:
    limits = Limits(max_wall_time_s=10)
    assert decide(limits, Spent(in_flight=5), 9.9) is True
    assert decide(limits, Spent(in_flight=5), 10.0) == BudgetStop("wall_time", 10.0, 10.0)


def test_before_a_size_is_known_one_request_at_a_time() -> None:
    limits = Limits(max_total_tokens=1000)
    assert decide(limits, Spent(in_flight=1), 0) is False
    assert decide(limits, Spent(in_flight=0), 0) is True
    known = Spent(largest_prompt=20, largest_completion=3, prompt_tokens=20, completion_tokens=3)
    # 23 spent + (2 in flight + this one) x 23 = 92 <= 1000: sent alongside
    assert decide(limits, Spent(**{**known.__dict__, "in_flight": 2}), 0) is True
    # near the end it waits for those in flight instead of stopping: they may leave room
    near = Spent(**{**known.__dict__, "prompt_tokens": 940, "in_flight": 2})
    assert decide(limits, near, 0) is False


def run_threads(ledger_dir: Path, limits: Limits, threads: int, cost: tuple[int, int]) -> None:
    guard = BudgetGuard(limits, Ledger(ledger_dir))

    def work() -> None:
        while guard.before_request() is None:
            guard.after_request(
                GenerationResult(
                    text="x", latency_ms=1.0, usage={"prompt_tokens": cost[0], "completion_tokens": cost[1]}
                )
            )

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(30)


def test_one_budget_for_threads_and_processes(tmp_path: Path) -> None:
    """Two processes of four threads each, sharing the ledger (as -n 2 workers with
    --lsrb-concurrency 4 do): the spend ends within the budget plus one request."""
    limits = Limits(max_total_tokens=1000)
    Ledger(tmp_path).open_session(Spent(), started=1.0)
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
    assert BudgetStop.from_json(spent.stopped) == BudgetStop("tokens", 1000.0, float(spent.total_tokens))


def test_a_resumed_session_keeps_what_was_spent(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    ledger.open_session(Spent(), started=5.0)
    assert ledger.reserve(Limits(max_total_tokens=100), now=6.0) is not None
    ledger.settle(50, 10)
    ledger.note_stop(BudgetStop("tokens", 60, 60))
    again = ledger.open_session(None, started=9.0)
    assert (again.total_tokens, again.in_flight, again.stopped, again.session_started) == (60, 0, None, 9.0)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        '{"prompt_tokens": "many", "in_flight": -4, "session_started": "x", "stopped": 3}',
        '{"completion_tokens": true, "largest_prompt": 1.5, "session_started": 1e999}',
        "\x00" * 100,
    ],
)
def test_a_damaged_ledger_reads_as_nothing_spent(tmp_path: Path, text: str) -> None:
    ledger = Ledger(tmp_path)
    ledger.path.write_text(text, encoding="utf-8")
    assert ledger.read() == Spent()
    limits = Limits(max_cost=1.0, price=Price(1.0, 1.0), max_total_tokens=10, max_wall_time_s=5.0)
    assert ledger.reserve(limits, now=1.0) is not None  # and it goes on counting from there
    ledger.settle(2, 3)
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


REQUEST = GenerationRequest(messages=(), seed=0, sampling=SamplingConfig())


def test_the_adapter_refuses_once_the_budget_is_spent_and_says_so(tmp_path: Path) -> None:
    stops: list[str] = []
    inner = Answering()
    guard = BudgetGuard(Limits(max_total_tokens=50), Ledger(tmp_path))
    adapter = BudgetedAdapter(inner, guard, on_stop=stops.append)
    results = [adapter.generate(REQUEST) for _ in range(5)]
    assert [r.ok for r in results] == [True, True, False, False, False]
    assert inner.calls == 2  # nothing sent after the stop
    assert guard.refused_in_attempt()
    assert stops and "total tokens budget is spent (--lsrb-max-total-tokens 50; spent 46)" in stops[0]


def test_cached_answers_cost_nothing(tmp_path: Path) -> None:
    guard = BudgetGuard(Limits(max_total_tokens=50), Ledger(tmp_path))
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
    assert guard.before_request() is None
    guard.after_request(GenerationResult(text="simp", latency_ms=1.0))
    spent = guard.ledger.read()
    assert (spent.unreported, spent.requests, spent.total_tokens, spent.in_flight) == (1, 1, 0, 0)


def test_answers_without_a_size_do_not_hold_the_run_to_one_request_at_a_time() -> None:
    limits = Limits(max_total_tokens=1000)
    unsized = Spent(requests=3, unreported=3, in_flight=2)
    assert decide(limits, unsized, 0) is True


def test_the_progress_line_says_what_each_budget_has_spent() -> None:
    limits = Limits(max_cost=2.0, price=Price(10_000, 10_000), max_total_tokens=500, max_wall_time_s=600)
    spent = Spent(prompt_tokens=160, completion_tokens=24, session_started=100.0)
    note = budget_note(limits, spent, now=140.0)
    assert note == "budget cost 1.84/2, total tokens 184/500, wall time 40/600 s"
    assert budget_note(Limits(), spent, now=140.0) is None
