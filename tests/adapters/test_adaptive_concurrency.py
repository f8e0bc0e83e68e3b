"""AIMD in-flight limit: halves on overload once per window, grows back by ~1 per window of
answers, never below 1 nor above the ceiling or the server's slots; waiting is not latency."""

from __future__ import annotations

import threading
import time
from typing import Any

from fakes.local_server import LocalServer

from pytest_lsrb.adapters.concurrency import AdaptiveLimit


def test_overload_halves_once_per_window_and_answers_recover_slowly() -> None:
    limit = AdaptiveLimit(8)
    for _ in range(8):
        assert limit.acquire()
    for _ in range(8):  # eight requests in flight all meet a 429: one signal, one halving
        limit.release("rate_limit")
    assert limit.current == 4 and limit.decreases == 1
    limit.acquire()
    limit.release("timeout")  # a new window: halves again
    assert limit.current == 2
    for _ in range(3):  # 2 + 1/2 + 1/2.5 + 1/2.9 ~ 3.24
        limit.acquire()
        limit.release(None)
    assert limit.current == 3
    for _ in range(200):
        limit.acquire()
        limit.release(None)
    assert limit.current == 8  # never above the ceiling
    limit.acquire()
    limit.release("client_error")  # not an overload
    assert limit.current == 8


def test_never_below_one_and_capped_by_the_servers_slots() -> None:
    limit = AdaptiveLimit(4)
    for _ in range(10):
        limit.acquire()
        limit.release("server_error")
    assert limit.current == 1
    capped = AdaptiveLimit(8)
    capped.cap(2)
    assert capped.current == 2 and capped.ceiling == 2


def test_threads_beyond_the_limit_wait_and_a_stop_wakes_them() -> None:
    limit = AdaptiveLimit(1)
    assert limit.acquire()
    stop = threading.Event()
    got: list[bool] = []
    waiter = threading.Thread(target=lambda: got.append(limit.acquire(stop)))
    waiter.start()
    time.sleep(0.05)
    assert not got  # waiting: one in flight is the limit
    limit.release(None)
    waiter.join(timeout=5)
    assert got == [True]
    blocked = threading.Thread(target=lambda: got.append(limit.acquire(stop)))
    blocked.start()
    stop.set()
    blocked.join(timeout=5)
    assert got == [True, False]


class SlotServer(LocalServer):
    """llama.cpp's answers to GET /props and /v1/models, nothing else (an edge of the test)."""

    def __init__(self, props: object) -> None:
        import json
        from http.server import BaseHTTPRequestHandler

        answers = {
            "/props": props,
            "/v1/models": {"object": "list", "data": [{"id": "smollm2", "owned_by": "llamacpp"}]},
        }

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = answers.get(self.path)
                raw = json.dumps(body).encode()
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None: ...

        super().__init__(Handler)


def test_the_servers_slots_cap_the_limit_and_a_run_warns_at_start(run_suite: Any) -> None:
    from pytest_lsrb.adapters.base import AdapterConfig
    from pytest_lsrb.adapters.openai import OpenAIAdapter

    server = SlotServer({"total_slots": 2, "model_alias": "smollm2"})
    try:
        adapter = OpenAIAdapter(
            AdapterConfig(name="openai", model="smollm2", base_url=server.url, concurrency=8)
        )
        adapter.check()
        assert adapter.served_slots() == 2 and adapter.http.limit.ceiling == 2
        adapter.close()
        dry = run_suite(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={server.url}",
            "--lsrb-model=smollm2",
            "--lsrb-concurrency=4",
            "--lsrb-max-items=2",
            "--collect-only",
        )
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert (
            "WARNING: --lsrb-concurrency 4 exceeds the 2 request(s) the server decodes at once" in dry.stdout
        )
        # the documented path (quickstart: `lsrb serve`, no --lsrb-concurrency): the adapter's
        # own default (8) is capped at the slots without a word, nothing for the user to change
        quiet = run_suite(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={server.url}",
            "--lsrb-model=smollm2",
            "--lsrb-max-items=2",
            "--collect-only",
        )
        assert quiet.returncode == 0, quiet.stdout + quiet.stderr
        assert "WARNING" not in quiet.stdout + quiet.stderr
    finally:
        server.close()
    odd = SlotServer({"total_slots": "many"})  # an odd answer: no cap, no warning
    try:
        adapter = OpenAIAdapter(AdapterConfig(name="openai", model="m", base_url=odd.url, concurrency=8))
        assert adapter.served_slots() is None and adapter.http.limit.ceiling == 8
        adapter.close()
    finally:
        odd.close()


def test_a_server_with_more_slots_than_the_default_is_kept_full() -> None:
    from pytest_lsrb.adapters.base import AdapterConfig, in_flight
    from pytest_lsrb.adapters.mock import MockAdapter
    from pytest_lsrb.adapters.openai import OpenAIAdapter

    for slots, asked, expected in ((16, None, 16), (2, None, 8), (16, 3, 3), (500, None, 64)):
        server = SlotServer({"total_slots": slots})
        try:
            config = AdapterConfig(name="openai", model="smollm2", base_url=server.url, concurrency=asked)
            adapter = OpenAIAdapter(config)
            assert in_flight(adapter, asked) == expected
            # the adapter's own limit follows: down to fewer slots, up to more when none was asked
            assert adapter.http.limit.ceiling == (min(slots, 64) if asked is None else min(slots, asked))
            adapter.close()
        finally:
            server.close()
    assert in_flight(MockAdapter(AdapterConfig(name="mock", model="default")), None) == 1
