"""`core.orphans.NotedSignals`: a Ctrl-C or SIGTERM while `lsrb run` waits on its children is
noted, never raised, so no statement of the waiting loop can lose it (it used to raise
KeyboardInterrupt, which could land outside the `try` meant for it: the children then ran to the
end and the command said 0, seen once in CI under load)."""

from __future__ import annotations

import os
import signal
import time

from pytest_lsrb.core.orphans import NotedSignals


def _deliver(sig: int) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.01)  # the handler runs in the main thread at its next bytecode boundary


def test_signals_are_noted_in_order_and_nothing_is_raised() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with NotedSignals() as noted:
        _deliver(signal.SIGINT)
        _deliver(signal.SIGTERM)
        _deliver(signal.SIGINT)
        assert [noted.take(), noted.take(), noted.take(), noted.take()] == [
            signal.SIGINT,
            signal.SIGTERM,
            signal.SIGINT,
            None,
        ]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_after_the_block_the_previous_handler_gets_the_signal_again() -> None:
    seen: list[int] = []
    original = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with NotedSignals() as noted:
            _deliver(signal.SIGINT)
        _deliver(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, original)
    assert noted.take() == signal.SIGINT and noted.take() is None  # the one inside the block
    assert seen == [signal.SIGINT]  # the one after it
