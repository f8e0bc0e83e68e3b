"""The budget law (docs/adapters.md, "Budgets"; issue #38): what the server bills a run never passes
its token budget, whatever the answer lengths (1 to 1,000 tokens, growing or not), serially, from
several threads on a one-slot endpoint, from two processes sharing the ledger, and with a process
killed while its request is in flight; and every one of those runs ends (stops at its budget)
instead of hanging.

The model endpoint is the `openai` adapter's own HTTP client on an `httpx.MockTransport` (the edge:
the server's side of the wire), speaking llama.cpp's shapes: `/props` says one slot, each chat
answer is as long as the example says, cut at the request's `max_tokens`, and bills its prompt at
one token per byte of the text. The budget, the ledger and the slot permits are the real ones."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest, Message, SamplingConfig
from pytest_lsrb.adapters.openai import OpenAIAdapter
from pytest_lsrb.engine.budget import REFUSED, BudgetedAdapter, BudgetGuard, Limits, worst_case
from pytest_lsrb.engine.ledger import Ledger

PROMPT = "prove that the sum of two even numbers is even; answer with one tactic " * 3
ANSWERS = st.lists(st.integers(1, 1000), min_size=1, max_size=40)
GROWING = ANSWERS.map(sorted)
FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None


def request(max_tokens: int, seed: int = 0) -> GenerationRequest:
    return GenerationRequest(
        messages=(Message("user", PROMPT),), seed=seed, sampling=SamplingConfig(max_tokens=max_tokens)
    )


def llama_adapter(
    answers: list[int], bill: Callable[[int], None], *, slots: int = 1, hang: threading.Event | None = None
) -> OpenAIAdapter:
    """The `openai` adapter on a llama.cpp of `slots` slots: the n-th answer is `answers[n]` tokens long
    (the last one repeats), cut at `max_tokens`; `bill` hears each answer's tokens. `hang`: every
    chat request blocks until it is set (a request in flight when its process is killed)."""
    count = iter(range(1 << 30))
    lock = threading.Lock()

    def serve(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/props":
            return httpx.Response(200, json={"total_slots": slots})
        body = json.loads(req.content)
        with lock:
            n = next(count)
        if hang is not None:
            hang.wait()
        prompt = len(PROMPT.encode())
        completion = min(answers[min(n, len(answers) - 1)], body["max_tokens"])
        time.sleep(0.0005)  # let the threads interleave
        bill(prompt + completion)
        return httpx.Response(
            200,
            json={
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "simp"}}
                ],
                "model": "smollm2",
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
            },
        )

    adapter = OpenAIAdapter(
        AdapterConfig(name="openai", model="smollm2", base_url="http://llama.test", max_retries=0)
    )
    adapter.http.client.close()
    adapter.http.client = httpx.Client(base_url=adapter.http.base_url, transport=httpx.MockTransport(serve))
    return adapter


def spend(
    run_dir: Path,
    limit: int,
    answers: list[int],
    max_tokens: int,
    threads: int,
    bill: Callable[[int], None],
    slots: int = 1,
) -> bool:
    """Threads asking for answers until the budget refuses; whether they all ended (no hang)."""
    guard = BudgetGuard(Limits(max_total_tokens=limit), Ledger(run_dir))
    adapter = BudgetedAdapter(llama_adapter(answers, bill, slots=slots), guard)

    def work(k: int) -> None:
        for i in range(10_000):
            result = adapter.generate(request(max_tokens, seed=k * 10_000 + i))
            if not result.ok:
                assert REFUSED in (result.error_message or ""), result.error_message
                return

    pool = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(60)
    adapter.close()
    return not any(t.is_alive() for t in pool)


class Bill:
    def __init__(self) -> None:
        self.tokens = 0
        self._lock = threading.Lock()

    def __call__(self, tokens: int) -> None:
        with self._lock:
            self.tokens += tokens


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    limit=st.integers(300, 20_000),
    answers=st.one_of(GROWING, ANSWERS),
    max_tokens=st.integers(1, 1000),
    threads=st.sampled_from([1, 4]),
    slots=st.sampled_from([1, 4]),
)
def test_spend_never_passes_the_budget_serially_or_from_threads(
    tmp_path_factory: pytest.TempPathFactory,
    limit: int,
    answers: list[int],
    max_tokens: int,
    threads: int,
    slots: int,
) -> None:
    run_dir = tmp_path_factory.mktemp("run")
    Ledger(run_dir).open_session(started=time.time())
    bill = Bill()
    assert spend(run_dir, limit, answers, max_tokens, threads, bill, slots), "a thread hung"
    assert bill.tokens <= limit
    spent = Ledger(run_dir).read()
    assert spent.total_tokens == bill.tokens and spent.in_flight == 0
    # stopped only when one more request's worst case no longer fits
    assert bill.tokens + worst_case(request(max_tokens)).prompt + max_tokens > limit


def worker(run_dir: Path, limit: int, answers: list[int], max_tokens: int, billed: Any) -> None:
    def bill(tokens: int) -> None:
        with billed.get_lock():
            billed.value += tokens

    os._exit(0 if spend(run_dir, limit, answers, max_tokens, 2, bill, slots=2) else 3)


def victim(run_dir: Path, limit: int, max_tokens: int) -> None:
    """A process whose one request is in flight (and reserved) until it is killed."""
    guard = BudgetGuard(Limits(max_total_tokens=limit), Ledger(run_dir))
    adapter = BudgetedAdapter(llama_adapter([max_tokens], lambda n: None, hang=threading.Event()), guard)
    adapter.generate(request(max_tokens))
    os._exit(0)


@pytest.mark.slow
@pytest.mark.skipif(FORK is None, reason="no fork on this platform")
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    limit=st.integers(2_000, 12_000), answers=GROWING, max_tokens=st.integers(100, 1000), kill=st.booleans()
)
def test_spend_never_passes_the_budget_from_two_processes_even_when_one_is_killed(
    tmp_path_factory: pytest.TempPathFactory, limit: int, answers: list[int], max_tokens: int, kill: bool
) -> None:
    """Two worker processes of two threads each (`-n 2`); with `kill`, a third process is SIGKILLed
    while its request is in flight: its reservation must neither hang the others nor let them
    spend what the dead request may have been billed (counted here at its worst case)."""
    assert FORK is not None
    run_dir = tmp_path_factory.mktemp("run")
    ledger = Ledger(run_dir)
    ledger.open_session(started=time.time())
    billed = FORK.Value("q", 0)
    dead = None
    if kill:
        dead = FORK.Process(target=victim, args=(run_dir, limit, max_tokens))
        dead.start()
        deadline = time.monotonic() + 30
        while not ledger.read().reservations and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ledger.read().reservations, "the victim never reserved"
    workers = [
        FORK.Process(target=worker, args=(run_dir, limit, answers, max_tokens, billed)) for _ in range(2)
    ]
    for p in workers:
        p.start()
    if dead is not None:
        time.sleep(0.05)
        assert dead.pid is not None
        os.kill(dead.pid, signal.SIGKILL)  # not reaped yet: a zombie must count as dead
    for p in workers:
        p.join(90)
    try:
        assert all(p.exitcode == 0 for p in workers), [p.exitcode for p in workers]  # (None: hung)
    finally:
        for p in workers:
            if p.is_alive():
                p.kill()
        if dead is not None:
            dead.join(5)
    killed_may_cost = worst_case(request(max_tokens)).prompt + max_tokens if kill else 0
    assert billed.value + killed_may_cost <= limit
    spent = ledger.read()
    assert spent.in_flight == 0 and spent.expired == (1 if kill else 0)
    assert spent.total_tokens == billed.value + killed_may_cost
