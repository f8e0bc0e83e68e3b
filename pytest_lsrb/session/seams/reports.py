"""What this process keeps of pytest's test reports once the terminal has shown them.

pytest's terminal reporter keeps every report it is given to the end of the session (three per
test: setup, call, teardown; ~1.5 KB each with its keywords, properties and sections), though
for a passed test it only ever counts them — unless `-rp`/`-rP`/`-rA` asks it to list the passes.
Over a 100,000-test run that is most of the controller's memory growth (issue #27). So once the
reporter has taken a passed report, the report is swapped in its list for one shared stand-in:
the counts, colours and summary line stay the same, and a failure, error, skip, xfail or xpass
keeps its report (the summary shows them). A passed teardown that captured output keeps its
report too, since the summary shows it beside the test's failure.

Two more things pytest keeps per finished test are let go the same way, each only where pytest
has the shape expected (else it is left alone): the terminal's set of reported test ids, which
only its size is read from (`reported_progress`: finished tests are counted instead), and the
subtests plugin's failure count, which reading a report's status sets to 0 for every test.
And a finished test item (a serial run holds every item to the end) drops what pytest left on it
for that run only (`release_item`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final


class Counted:
    """Stands in for a passed report the terminal reporter only counts. Its `__dict__` is empty:
    plugins that read a report's attributes from there (hypothesis's statistics) find none."""

    count_towards_summary: ClassVar[bool] = True
    passed: ClassVar[bool] = True
    failed: ClassVar[bool] = False
    skipped: ClassVar[bool] = False
    outcome: ClassVar[str] = "passed"
    when: ClassVar[str] = "counted"  # matches no phase the reporter looks for
    nodeid: ClassVar[str] = ""
    sections: ClassVar[tuple[Any, ...]] = ()

    @property
    def id(self) -> str:  # TerminalReporter._get_teardown_reports reads `report.id`
        return ""


COUNTED: Final = Counted()


class ReportedIds(set[Any]):
    """The terminal's set of reported test ids, holding the tests still being reported; each
    finished test is counted instead, so its size is what the terminal's own set's would be."""

    def __init__(self, ids: set[Any]) -> None:
        super().__init__(ids)
        self.finished = 0

    def __len__(self) -> int:
        return super().__len__() + self.finished

    def finish(self, test_id: Any) -> None:
        if test_id in self:
            self.discard(test_id)
            self.finished += 1


class ReportKeeper:
    """Swaps each passed report for `COUNTED` after the terminal reporter took it, and lets go
    of the per-test ids pytest keeps once the test's last report is in."""

    def __init__(self, terminalreporter: Any, config: Any = None) -> None:
        self.stats: dict[str, list[Any]] | None = getattr(terminalreporter, "stats", None)
        chars = str(getattr(terminalreporter, "reportchars", ""))
        self.list_passes = "p" in chars or "P" in chars
        ids = getattr(terminalreporter, "_progress_nodeids_reported", None)
        self.progress: ReportedIds | None = None
        if type(ids) is set:  # pytest's private set; only its size is read (`reported_progress`)
            self.progress = ReportedIds(ids)
            terminalreporter._progress_nodeids_reported = self.progress
        self.subtests: dict[Any, int] | None = None
        try:
            from _pytest.subtests import failed_subtests_key  # pytest >= 9

            found = config.stash.get(failed_subtests_key, None) if config is not None else None
            self.subtests = found if isinstance(found, dict) else None
        except ImportError:
            pass

    def shown(self, report: Any) -> None:
        if report.when == "teardown":
            self.finished(report)
        stats = self.stats
        if stats is None or report.outcome != "passed" or hasattr(report, "wasxfail"):
            return
        if report.when == "call":
            if self.list_passes:
                return
            kept = stats.get("passed")
        elif report.when == "teardown" and report.sections:
            return
        else:
            kept = stats.get("")
        if kept and kept[-1] is report:
            kept[-1] = COUNTED

    def finished(self, report: Any) -> None:
        """The test's last report is in: the ids pytest keeps for it go."""
        test_id = getattr(report, "id", report.nodeid)  # what the terminal added (pytest 9: `id`)
        if self.progress is not None:
            self.progress.finish(test_id)
        if self.subtests is not None and self.subtests.get(test_id, 1) == 0:
            del self.subtests[test_id]


def release_item(item: Any) -> None:
    """After `item`'s last report: drop what pytest left on it that nothing reads again — the
    tmp_path retention flags its reports set after the fixture was torn down, skipping's `None`
    xfail verdict (a test with no xfail mark), the room the logging plugin's stash entries took
    (the stash's dict is copied to its live entries, or made a fresh empty one), and the cached
    `location` (recomputed if asked for)."""
    stash = getattr(item, "stash", None)
    storage = getattr(stash, "_storage", None)
    if type(storage) is dict:
        try:
            from _pytest.tmpdir import tmppath_result_key

            storage.pop(tmppath_result_key, None)
        except ImportError:
            pass
        try:  # skipping's xfail verdict, read only while the test's reports are made
            from _pytest.skipping import xfailed_key

            if xfailed_key in storage and storage[xfailed_key] is None:
                del storage[xfailed_key]
        except ImportError:
            pass
        # a fresh empty dict holds no key table (a copy of one entry takes ~350 B per test)
        stash._storage = dict(storage) if storage else {}  # type: ignore[union-attr]
    vars(item).pop("location", None)
