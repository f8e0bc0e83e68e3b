"""What a session running a suite keeps out of the cyclic garbage collector's sight.

A run holds long-lived objects the collector can do nothing with: the rows and cases (from the
start), the test items (after collection), and what pytest keeps of each finished test (its
reports, held by the terminal reporter to the end; under xdist in the controller). Each full
collection walks all of them again, and there are many: CPython starts one whenever the
survivors grow by a quarter, and pytest makes ten when the session ends. At 10,000 mock
attempts that was ~0.4 s of a serial run and ~0.9 s of an `-n 2` controller's (most of it after
the last test, while the user waits). `gc.freeze()` moves every object alive at that moment to
a generation the collector skips; it costs nothing by itself (a list splice).

- `freeze`: when the suite is prepared and again after collection. Startup makes next to no
  cyclic garbage, so nothing is collected first.
- `paused`: no cyclic collection at all while the suite is prepared and while its tests are
  collected. Both only build objects that live to the end (rows, cases, items), which is what
  sets the collector off: at 10,000 rows it ran ~45 ms in preparing and ~35 ms in collecting
  (three full collections among them) to free ~90 objects, the same few at any size.
- `test_finished`: every `CHECKPOINT_EVERY` tests (at logfinish, when no test is in progress, so
  no attempt's frames or exceptions are alive), collect what is garbage, then freeze the rest.
  The collection walks only what was made since the last freeze.
- the youngest generation's threshold, from `freeze` to `thaw`: YOUNG_THRESHOLD allocations
  instead of CPython's 700. A test's objects are freed by reference counting, and what survives
  it (pytest's reports) lives to the end: at 10,000 mock attempts the default's 911 young
  collections freed 153 objects in all, for ~0.14 s. The checkpoints still collect every
  `CHECKPOINT_EVERY` tests, and a test that makes cyclic garbage by the thousand still sets a
  collection off every YOUNG_THRESHOLD allocations.
- `thaw`: the last config cleanup, after pytest's own end-of-session collections, gives every
  object back to the collector: a program that runs pytest in its own process (`pytest.main`,
  pytester) gets its memory back when the session's objects become garbage. Not when the
  process ends with the session (pytest's command line, or an xdist worker): the interpreter's
  last collections would walk every object once more only to free memory the operating system
  takes back at once.

A cycle that becomes garbage after it was frozen is freed at `thaw`, not before: objects kept to
the end (reports, items) do not, and the checkpoints freeze only what survived a collection.
Sessions that run no suite never freeze anything.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from pytest_lsrb.session.seams import run_from_command_line

CHECKPOINT_EVERY: Final = 1000  # tests between checkpoints: each costs ~1-3 ms at a mock's pace
YOUNG_THRESHOLD: Final = 20_000  # allocations between young collections while a run is frozen


class Heap:
    def __init__(self, *, ends_process: bool = False, fastpath: bool = True) -> None:
        self.fastpath = fastpath  # False: never look for pytest's private entry point
        self.frozen = False
        self.tests = 0
        self.ends_process = ends_process  # an xdist worker: its process ends with the session
        self.thresholds: tuple[int, ...] | None = None  # the collector's, before the first freeze

    def freeze(self) -> None:
        gc.freeze()
        if self.thresholds is None:
            self.thresholds = gc.get_threshold()
            young, *older = self.thresholds
            if young > 0:  # (0: someone turned automatic collection off; leave it so)
                gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
        self.frozen = True

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The cyclic collector off for the block (left as it was if someone else turned it off)."""
        if not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            gc.enable()

    def test_finished(self) -> None:
        if not self.frozen:
            return
        self.tests += 1
        if self.tests % CHECKPOINT_EVERY == 0:
            gc.collect()
            gc.freeze()

    def thaw(self) -> None:
        if not self.frozen:
            return
        self.frozen = False
        if self.thresholds is not None:
            gc.set_threshold(*self.thresholds)
            self.thresholds = None
        if not (self.ends_process or (self.fastpath and run_from_command_line())):
            gc.unfreeze()
