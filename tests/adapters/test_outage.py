"""The server's outage as a run-level state (issue #46 item 5, `adapters/outage.py`): the pure law,
the state shared through the run's directory by several processes (here: several `Outage`
objects on one folder, as each process has its own), and an HTTP endpoint against a port where
nothing listens. The whole runs (a dead server, a restart within the window, `-n 2`) are
tests/integration/test_outage_runs.py."""

from __future__ import annotations

import random
import socket
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.adapters.http import HttpEndpoint
from pytest_lsrb.adapters.outage import (
    OUTAGE_FILE,
    SLACK_S,
    Down,
    Outage,
    after_answer,
    after_failure,
    clear,
    down_sentence,
    is_over,
    read_state,
    run_outage,
    time_left,
    waiting_sentence,
)
from pytest_lsrb.adapters.retry import REFUSED_MAX_DELAY_S, RetryPolicy

# One request: sent at `sent`, ended `took` seconds later, answered (True) or failed (False).
events = st.lists(st.tuples(st.floats(0, 1_000), st.floats(0, 60), st.booleans()), min_size=1, max_size=60)


def play(window: float, requests: list[tuple[float, float, bool]]) -> tuple[Down, list[float]]:
    """The state after every request, taken in the order they ended; and when answers came."""
    state = Down("http://server", window)
    answers = []
    for sent, took, ok in sorted(requests, key=lambda r: r[0] + r[1]):
        if ok:
            state = after_answer(state, sent + took)
            answers.append(sent + took)
        else:
            state = after_failure(state, sent, sent + took)
    return state, answers


@given(st.floats(0, 300), events)
def test_an_outage_is_over_only_when_failures_with_no_answer_between_span_the_window(
    window: float, requests: list[tuple[float, float, bool]]
) -> None:
    state, answers = play(window, requests)
    if not is_over(state.since, state.last, state.window):
        return
    assert state.since is not None and state.last is not None
    assert state.last - state.since >= window - SLACK_S
    ended = {sent + took for sent, took, ok in requests if not ok}
    assert state.since in ended and state.last in ended  # both are failures' times
    assert not any(state.since <= at <= state.last for at in answers)  # no answer came in between


@given(st.floats(0.1, 300), st.lists(st.floats(0, 5), min_size=1, max_size=40), st.floats(0, 1e6))
def test_failures_spanning_the_window_with_no_answer_end_it(
    window: float, gaps: list[float], start: float
) -> None:
    """A server that refuses every request: once the failures span the window, it is over."""
    state, at = Down("u", window), start
    for gap in gaps:
        state = after_failure(state, at, at)
        at += gap
    state = after_failure(state, start + window, start + window)
    assert is_over(state.since, state.last, state.window)
    assert time_left(state.since, start + window, window) == 0.0


@given(st.floats(0, 1e6), st.floats(0, 100))
def test_a_failure_of_a_request_sent_before_the_last_answer_starts_nothing(at: float, before: float) -> None:
    answered = after_answer(Down("u", 10.0), at)
    assert after_failure(answered, at - before - 0.001, at + 5).since is None
    assert after_failure(answered, at + 0.001, at + 5).since == at + 5


def test_the_sentences_name_the_server_and_when_it_went_down() -> None:
    since = time.mktime((2026, 1, 2, 14, 2, 11, 0, 0, -1))
    state = Down("http://127.0.0.1:8080/v1", 120.0, since, since + 30)
    assert waiting_sentence(state, since + 25.2) == "server down since 14:02:11, waiting (95 s left)"
    assert waiting_sentence(Down("u", 120.0), since) is None
    sentence = down_sentence(Down("http://127.0.0.1:8080/v1", 4.0, since, since + 4))
    assert "http://127.0.0.1:8080/v1 has been down since 14:02:11" in sentence
    assert "4 s, --lsrb-retry-time" in sentence and "\n" not in sentence


# -- shared by the processes of a run ------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_the_processes_of_a_run_share_one_outage(tmp_path: Path) -> None:
    clock = Clock()
    one, two = (Outage("http://s/v1", 10.0, tmp_path, clock) for _ in range(2))
    assert read_state(tmp_path) is None and run_outage(tmp_path) is None
    one.failed(sent_at=clock.now)
    clock.now += 4
    assert two.state().since == clock.now - 4  # the other process sees it
    assert two.left() == pytest.approx(6.0)
    two.failed(sent_at=clock.now)
    clock.now += 6
    assert not one.over()
    one.failed(sent_at=clock.now)  # the last try, at the window's end
    assert two.over() and run_outage(tmp_path) is not None
    two.answered()  # the server is back: for every process
    assert not one.over() and one.state().since is None and run_outage(tmp_path) is None
    clear(tmp_path)
    assert not (tmp_path / OUTAGE_FILE).exists()


def test_an_answer_costs_one_stat_while_nothing_is_down(tmp_path: Path) -> None:
    outage = Outage("u", 10.0, tmp_path)
    outage.answered()
    assert not (tmp_path / OUTAGE_FILE).exists()  # none was ever noted: nothing written
    outage.failed(time.time())
    outage.answered()
    stamp = (tmp_path / OUTAGE_FILE).stat().st_mtime_ns
    for _ in range(50):
        outage.answered()
    assert (tmp_path / OUTAGE_FILE).stat().st_mtime_ns == stamp
    Outage("u", 10.0, tmp_path).failed(time.time())  # another process: seen at the next answer
    outage.answered()
    assert read_state(tmp_path) is not None and read_state(tmp_path).since is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    ["", "garbage", "[]", '{"since": "x", "last": 5}', '{"since": 10, "last": 5, "window": -3}',
     '{"since": 1e999, "last": 1e999}', "\x00" * 64, '{"url": "' + "x" * 10_000 + '"}'],
)  # fmt: skip
def test_a_damaged_or_hostile_file_reads_as_up(tmp_path: Path, text: str) -> None:
    (tmp_path / OUTAGE_FILE).write_text(text)
    state = read_state(tmp_path)
    assert state is not None and state.since is None and len(state.url) <= 300
    assert run_outage(tmp_path) is None
    Outage("u", 1.0, tmp_path).failed(time.time())  # and it is written over with a good one
    assert read_state(tmp_path).since is not None  # type: ignore[union-attr]


def test_the_state_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "precious"
    victim.write_text("keep")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / OUTAGE_FILE).symlink_to(victim)
    with pytest.raises(OSError):
        Outage("u", 1.0, tmp_path / "run").failed(time.time())
    assert victim.read_text() == "keep" and read_state(tmp_path / "run") is None


def test_threads_noting_failures_and_answers_at_once_leave_a_readable_state(tmp_path: Path) -> None:
    outage = Outage("u", 0.0, tmp_path)

    def work(k: int) -> None:
        for i in range(100):
            outage.failed(time.time()) if (i + k) % 3 else outage.answered()

    pool = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert read_state(tmp_path) is not None


# -- an endpoint where nothing listens -----------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again: connections are refused


def endpoint(url: str, folder: Path, total_s: float) -> HttpEndpoint:
    policy = RetryPolicy(max_retries=1000, base_delay_s=0.02, max_delay_s=0.1, total_s=total_s)
    return HttpEndpoint(url, timeout_s=5.0, pool_size=2, retry=policy, outage_dir=str(folder))


def test_calls_of_two_processes_end_together_when_the_window_ends(tmp_path: Path) -> None:
    """Two endpoints on one run directory (each an `-n` worker's): every call fails from the
    start; both give up at the window's end, saying since when the server is down, and the run's
    state says it is over."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    messages: dict[int, str] = {}

    def call(k: int, delay: float) -> None:
        time.sleep(delay)
        http = endpoint(url, tmp_path, total_s=1.0)
        outcome = http.call("POST", "/chat/completions", {}, parse=lambda d: d, seed=k)
        assert outcome.failure is not None
        messages[k] = outcome.failure.message
        http.close()

    pool = [threading.Thread(target=call, args=(k, 0.4 * k)) for k in range(2)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(30)
    assert run_outage(tmp_path) is not None
    assert all("has been down since" in m and "Connection refused" in m for m in messages.values()), messages
    # (the one that started 0.4 s later ended on the run's window too, not on its own: its
    # message says the server has been down, which only the run's window says)


def test_a_refused_connection_is_tried_again_at_least_every_two_seconds() -> None:
    http = HttpEndpoint(
        f"http://127.0.0.1:{closed_port()}",
        timeout_s=5.0,
        pool_size=1,
        retry=RetryPolicy(max_retries=0),
    )
    outcome = http.call("GET", "/", None, parse=lambda d: d, seed=0)
    http.close()
    assert outcome.failure is not None and outcome.failure.refused
    policy = RetryPolicy()  # the default backoff reaches 20 s; after a refusal it stops at 2 s
    waits = [policy.next_wait(n, 0.0, None, random.Random(n), refused=True) for n in range(12)]
    assert all(w is not None and w <= REFUSED_MAX_DELAY_S for w in waits)
    assert max(w for w in waits if w is not None) >= REFUSED_MAX_DELAY_S / 2


def test_no_retry_time_means_no_outage_either(tmp_path: Path) -> None:
    """`--lsrb-retry-time 0` (no retries): each call fails on its own; the run is never stopped for
    an outage it did not wait for."""
    http = endpoint(f"http://127.0.0.1:{closed_port()}/v1", tmp_path, total_s=0.0)
    outcome = http.call("POST", "/chat/completions", {}, parse=lambda d: d, seed=0)
    http.close()
    assert outcome.failure is not None and outcome.http_attempts == 1
    assert "has been down" not in outcome.failure.message
    assert read_state(tmp_path) is None and run_outage(tmp_path) is None


def test_calls_queued_for_a_permit_send_nothing_once_the_outage_is_over(tmp_path: Path) -> None:
    """A server that accepts and never answers, one request in flight at a time (the limit
    halved to 1 by the timeouts, or a 1-slot server): once the failures span the window the
    outage is over, and the calls still queued for the permit give up with it instead of each
    sending one more request and waiting out its whole timeout (with `--lsrb-timeout 120`, 8
    attempts queued meant 16 minutes after the run was already stopping)."""
    accepted: list[float] = []
    held: list[socket.socket] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(time.time())
            held.append(conn)  # read nothing, answer nothing

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    policy = RetryPolicy(max_retries=1000, base_delay_s=0.02, max_delay_s=0.1, total_s=1.0)
    http = HttpEndpoint(url, timeout_s=0.4, pool_size=8, in_flight=1, retry=policy, outage_dir=str(tmp_path))
    messages: list[str] = []

    def call(k: int) -> None:
        outcome = http.call("POST", "/chat/completions", {}, parse=lambda d: d, seed=k)
        assert outcome.failure is not None
        messages.append(outcome.failure.message)

    pool = [threading.Thread(target=call, args=(k,)) for k in range(6)]
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join(30)
    finally:
        done.set()
        acceptor.join(5)
        http.close()
        for conn in held:
            conn.close()
        server.close()
    over = run_outage(tmp_path)
    assert over is not None and over.since is not None
    # Requests go one at a time, each failing 0.4 s after it is sent: the one in flight when the
    # window (1 s from the first failure) ends is the last that may be sent. (The permit goes
    # back a moment before its failure is noted: one more may slip into that gap.)
    after = [t for t in accepted if t > over.since + 1.0]
    assert len(after) <= 1, ([round(t - over.since, 2) for t in accepted], messages)
    assert len(messages) == 6 and all("has been down since" in m for m in messages), messages
