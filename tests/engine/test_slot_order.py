"""Attempts get a one-slot server in test order: the running test's request first, then its
successors (issue #31 item 4), and what each waited for the slot is recorded apart (`queue_ms`)."""

from __future__ import annotations

import threading
import time
from typing import Any

from fakes.llama_slots import SlotLlama

from pytest_lsrb.adapters import concurrency


def test_a_free_permit_goes_to_the_first_in_test_order_not_the_first_to_wake() -> None:
    limit = concurrency.AdaptiveLimit(1)
    assert limit.acquire()
    served: list[float] = []
    tickets = [concurrency.Ticket(order=float(order)) for order in (5, 3, 7, 4, 6)]

    def wait(ticket: Any) -> None:
        assert limit.acquire(None, ticket)
        served.append(ticket.order)
        limit.release(None)

    threads = [threading.Thread(target=wait, args=(t,)) for t in tickets]
    for thread in threads:
        thread.start()
        time.sleep(0.01)  # they arrive in the order 5, 3, 7, 4, 6
    tickets[2].order = -1.0  # the running test needs 7 now: it goes to the front
    limit.release(None)
    for thread in threads:
        thread.join(timeout=5)
    assert served == [-1.0, 3.0, 4.0, 5.0, 6.0]
    assert all(t.permits == 1 and t.queued_s > 0 for t in tickets)


def test_timeouts_do_not_halve_a_limit_the_server_set_but_overload_does() -> None:
    limit = concurrency.AdaptiveLimit(8)
    limit.cap(4)
    limit.acquire()
    limit.release("timeout")  # a slow answer on a server that said it serves 4
    assert limit.current == 4
    limit.acquire()
    limit.release("server_error")
    assert limit.current == 2


def test_a_one_slot_server_answers_the_tests_in_order(run_suite: Any) -> None:
    """16 attempts run ahead in 8 threads; the server serves one at a time and logs arrival order.
    Before slots went in test order, whichever waiting thread woke first was sent next."""
    server = SlotLlama(slots=1, seconds=0.03)
    try:
        result = run_suite(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={server.url}",
            "--lsrb-model=smollm2",
            "--lsrb-concurrency=8",
            "--lsrb-max-items=15",
            "--lsrb-outcome=record",
        )
        assert result.returncode == 0, result.stdout + result.stderr
        records = result.attempts()
    finally:
        server.close()
    in_test_order = [r["attempt_seed"] for r in records]  # a serial run writes them as tests finish
    assert len(in_test_order) == 15
    assert server.arrivals == in_test_order
    assert all(isinstance(r["queue_ms"], float) and r["queue_ms"] >= 0 for r in records)
    assert sum(r["queue_ms"] for r in records) > 0  # attempts ran ahead and waited for the slot


def test_two_workers_share_a_two_slot_server(run_suite: Any) -> None:
    """Under `-n 2` each worker keeps its share of the slots (1 here) in flight, so the server
    never holds more than its 2: before, each worker kept all 2 and the server queued 4."""
    server = SlotLlama(slots=2, seconds=0.05)
    try:
        result = run_suite(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={server.url}",
            "--lsrb-model=smollm2",
            "--lsrb-max-items=16",
            "--lsrb-outcome=record",
            "-n",
            "2",
        )
        assert result.returncode == 0, result.stdout + result.stderr
        records = result.attempts()
    finally:
        server.close()
    assert len(records) == 16 and len(server.arrivals) == 16
    assert 1 <= server.max_in_flight <= 2, server.max_in_flight


def test_a_permit_handed_back_unsent_changes_nothing_learnt_about_the_server() -> None:
    limit = concurrency.AdaptiveLimit(4)
    limit.acquire()
    limit.release("server_error")  # halved, and quiet for one window
    assert limit.current == 2
    limit.acquire()
    limit.release(concurrency.NOT_SENT)  # (the budget asked it to wait)
    assert (limit.current, limit.in_flight) == (2, 0)
    limit.acquire()
    limit.release(None)
    assert limit.limit == 2.5
