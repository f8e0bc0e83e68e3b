"""Model answers are parsed in the threads attempts run in (--lsrb-concurrency): parsing there
must never fail for a reason other than the text.

CPython keeps the AST constructor's recursion depth in interpreter-wide state, so two threads
running `ast.parse` at once can raise "SystemError: AST constructor recursion depth mismatch"
(python/cpython#106905). It showed up in this project's test of parallel LLM-SR searches. This
test makes the interleaving frequent (tiny switch interval, collections with finalizers that run
Python code in the middle of building a tree): without the parse lock it fails within a second
on CPython 3.11 (dozens of the 640 parses); with it, never.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator

import pytest

from pytest_lsrb.equations import parse_expression, parse_python

CODE = "def f(x):\n" + "".join(f"    y{i} = ((x + {i}) * (x - {i})) / (1 + x ** 2)\n" for i in range(30))
EXPRESSION = " + ".join(f"{i}.5 * (x - {i}) ** 2" for i in range(30))


class Finalized:
    def __del__(self) -> None:
        [i for i in range(3)]  # Python code run by the collector, wherever it starts


@pytest.fixture
def busy_interpreter() -> Iterator[None]:
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(50)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("busy_interpreter")
def test_parsing_in_four_threads_at_once_never_fails() -> None:
    errors: list[BaseException] = []

    def work() -> None:
        for _ in range(80):
            for _ in range(50):  # cyclic garbage with finalizers
                obj = Finalized()
                obj.cycle = obj  # type: ignore[attr-defined]
            try:
                parse_python(CODE)
                parse_expression(EXPRESSION, ["x"])
            except BaseException as exc:  # any failure is the finding
                errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
