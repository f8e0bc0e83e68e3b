"""core.bounded: a call in a child process ends as ok, timeout, memory, crashed or error, and
the caller gets control back within the budget whatever the child does."""

from __future__ import annotations

import os
import signal
import time

from pytest_lsrb.core.bounded import Budget, call_bounded


def add(a: int, b: int = 0) -> int:
    return a + b


def sleep_forever() -> None:
    time.sleep(3600)


def hog_memory() -> int:
    chunks = []
    while True:
        chunks.append(bytearray(64 * 1024 * 1024))
        chunks[-1][::4096] = b"x" * len(range(0, 64 * 1024 * 1024, 4096))  # touch every page


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def fail() -> None:
    raise ValueError("bad input")


def test_a_value_comes_back() -> None:
    result = call_bounded(add, 2, b=3, budget=Budget(time_s=60))
    assert (result.status, result.value) == ("ok", 5)


def test_a_hang_is_a_timeout_and_the_child_is_gone() -> None:
    result = call_bounded(sleep_forever, budget=Budget(time_s=1.0))
    assert result.status == "timeout" and "1 s" in result.detail and result.value is None


def test_running_out_of_memory_is_reported_not_suffered() -> None:
    result = call_bounded(hog_memory, budget=Budget(time_s=60, memory_mb=256))
    assert result.status in ("memory", "crashed"), result


def test_a_dead_child_and_an_exception_are_data() -> None:
    assert call_bounded(die, budget=Budget(time_s=60)).status == "crashed"
    failed = call_bounded(fail, budget=Budget(time_s=60))
    assert failed.status == "error" and "ValueError: bad input" in failed.detail
