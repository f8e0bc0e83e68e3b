"""pytest's `PYTEST_CURRENT_TEST` kept in Python's view of the environment only.

pytest sets `os.environ["PYTEST_CURRENT_TEST"]` three times per test ("<node id> (setup)",
"(call)", "(teardown)"), and `os.environ` passes each value on to the C library's `setenv`.
glibc's `setenv` never frees a value it once set (a caller may still hold the pointer `getenv`
gave it: `stdlib/setenv.c` keeps every "NAME=value" string it made, in a search tree, to the
end of the process). Every test's node id is new, so each test leaves three strings and three
tree nodes behind, ~520 bytes per test: of a serial 20,000-test mock run's RSS growth of ~690
bytes per test, ~550 (`bench/bench_controller_memory.py`; found with heaptrack, since
tracemalloc does not see the C library's allocations). Under xdist the same happens in each
worker.

So while a suite runs (and `--lsrb-fastpath` is on), the process's `os.putenv` passes every
variable on but this one: `os.environ["PYTEST_CURRENT_TEST"]` and `os.getenv` say what pytest set,
as before; only the C-level environment, which a child process started without `env=` inherits,
lacks it (a child that needs it can be given `env=os.environ`). Any other variable, and every
variable once the session ends, goes to `setenv` as always.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

VARIABLE = "PYTEST_CURRENT_TEST"
_KEYS = (VARIABLE, os.fsencode(VARIABLE))  # os.environ passes the key encoded (bytes on POSIX)


class PythonOnly:
    """Stands in for `os.putenv` while active: every variable but `VARIABLE` reaches `putenv`."""

    def __init__(self, putenv: Callable[[Any, Any], None]) -> None:
        self.putenv = putenv
        self.active = True

    def __call__(self, key: Any, value: Any) -> None:
        if self.active and key in _KEYS:
            return
        self.putenv(key, value)


def keep_current_test_in_python() -> Callable[[], None]:
    """Install the stand-in; returns what undoes it (put back `os.putenv` if nothing replaced it
    since, else leave the stand-in passing everything on)."""
    stand_in = PythonOnly(os.putenv)
    os.putenv = stand_in
    # a value this process was started with (a pytest run inside a test) would otherwise stay in
    # the C environment, naming another test; `os.environ` keeps it until pytest sets its own
    os.unsetenv(VARIABLE)

    def undo() -> None:
        stand_in.active = False
        if os.putenv is stand_in:
            os.putenv = stand_in.putenv
        value = os.environ.get(VARIABLE)
        if value is not None:  # still set (an interrupted test): the C environment learns it now
            stand_in.putenv(VARIABLE, value)

    return undo
