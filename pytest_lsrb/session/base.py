"""What both roles of a pytest session running a suite share: the controller
(`session.controller`, also the whole of a serial run) and each xdist worker (`session.worker`),
as xdist splits `dsession.py` from `remote.py`. The pytest hooks in `plugin.py` call these
methods; nothing here is a hook itself."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from pytest_lsrb.core.errors import LsrbUsageError, OutputWriteError
from pytest_lsrb.core.selection import Case, SelectableRow
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.schedule import Schedule
from pytest_lsrb.engine.suite import discover_suite_roots, load_suite, suite_root_of
from pytest_lsrb.session import xdist
from pytest_lsrb.session.cases import case_of
from pytest_lsrb.session.heap import Heap
from pytest_lsrb.session.prepare import prepare_suite_run
from pytest_lsrb.session.seams import fastpath, worker_queue

if TYPE_CHECKING:
    from pytest_lsrb.engine.records import AttemptRecord
    from pytest_lsrb.engine.runner import Attempt, Runner
    from pytest_lsrb.engine.watch import Watches
    from pytest_lsrb.output.live import LivePublisher
    from pytest_lsrb.session.overrides import Made, Override


class LsrbSession(ABC):
    """Per-process plugin state: the suite run, the order of its tests, the runner, the heap."""

    is_worker: ClassVar[bool]  # an xdist worker (the controller and a serial run: False)

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.run: SuiteRun | None = None
        self.schedule = Schedule(config, worker_queue(config))
        self.runner: Runner | None = None  # set by the lsrb_runner fixture while it is live
        # what the cyclic collector no longer walks (session.heap)
        self.heap = Heap(ends_process=self.is_worker, fastpath=fastpath(config))
        self.pytest_session: pytest.Session | None = None
        self.made_adapter: Made | None = None  # a user's adapter made to name the run (controller)
        # attempts of several calls in flight in this process, and their file beside the run
        # (`engine.watch`, `output.live`): the progress line and `lsrb view` read it
        self.watches: Watches | None = None
        self.live: LivePublisher | None = None

    # -- setup ---------------------------------------------------------------------------------

    def prepare(self, root: Path) -> SuiteRun:
        if self.run is not None:
            if self.run.spec.root != root.resolve():
                raise pytest.UsageError(
                    f"this session collected two suites ({self.run.spec.name} and "
                    f"{load_suite(root).name}); run one suite per session so each gets its own "
                    "attempts.jsonl and summary.json."
                )
            return self.run
        import sys

        from pytest_lsrb.session.overrides import find_override

        try:
            override = find_override(
                self.config.pluginmanager.list_name_plugin(), sys.modules["pytest_lsrb.plugin"], root
            )
            entries = override.identity() if override is not None else {}
            given = xdist.given_adapter_identity(self.config)  # a worker: its controller's naming
            named = None
            if given is not None:
                entries = {**entries, **given}
            elif override is not None and not self.is_worker:

                def named(so_far: SuiteRun) -> dict[str, str]:
                    return self.name_adapter(override, so_far)

            self.run = prepare_suite_run(
                root,
                self.config.getoption,
                self.config.rootpath,
                xdist.given_run_dir(self.config),
                xdist.given_resume(self.config),
                entries,
                named,
            )
        except LsrbUsageError as exc:
            if self.made_adapter is not None:  # made to name a run that does not start
                self.made_adapter.finish()
                self.made_adapter = None
            raise pytest.UsageError(str(exc)) from None
        return self.run

    def name_adapter(self, override: Override, so_far: SuiteRun) -> dict[str, str]:
        """The identity entries of the adapter a user's `lsrb_adapter` makes (`session.overrides`):
        made once here, kept for the controller's check before the run, then ended. {} when the
        fixture asks for fixtures only a test can give: the run is then named by the file alone."""
        from pytest_lsrb.session.overrides import identity_of, made_for_identity

        made = made_for_identity(override, {"lsrb_suite_run": so_far, "pytestconfig": self.config})
        if made is None:
            return {}
        self.made_adapter = made
        return identity_of(override, made)

    def begin(self, session: pytest.Session) -> SuiteRun | None:
        """The suite the command line names, prepared (None when it names none)."""
        self.pytest_session = session
        roots = discover_suite_roots(self.config.args, Path(self.config.invocation_params.dir))
        if len(roots) > 1:
            names = ", ".join(r.name for r in roots)
            raise pytest.UsageError(
                f"the command line names {len(roots)} suites ({names}); run one suite per session "
                "so each gets its own attempts.jsonl and summary.json."
            )
        if not roots:
            return None
        return self.prepare(roots[0])

    @abstractmethod
    def start(self, run: SuiteRun) -> None:
        """The role's own start once the suite is prepared (the controller opens the run's
        output; a worker its appends and sends)."""

    def suite_run_for(self, path: Path) -> SuiteRun:
        root = suite_root_of(path)
        if root is None:
            raise pytest.UsageError(
                f"{path} uses the lsrb_case fixture but is not inside a suite folder (no suite.toml)."
            )
        return self.prepare(root)

    def finished_judgements(self) -> dict[tuple[str, int], Any]:
        """Attempts a resumed run must not redo (read in every process, controller or worker)."""
        run = self.run
        if run is None or not run.config.resume:
            return {}
        from pytest_lsrb.output import rundir as outputs

        return outputs.finished_judgements(run)

    def watch_attempts(self, run: SuiteRun, who: str) -> None:
        """Watch this process's attempts while they run, when one may make several model calls
        (an llm_srbench search); a one-call attempt has nothing to show before it ends."""
        if self.config.option.collectonly or run.task.calls_per_attempt(run.config.values) <= 1:
            return
        from pytest_lsrb.engine.watch import Watches
        from pytest_lsrb.output.live import LivePublisher

        self.watches = Watches()
        self.live = LivePublisher(run.config.output_dir, who, self.watches)
        self.live.start()

    def stop_watching(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    # -- collection ----------------------------------------------------------------------------

    def add_row_keywords(self, items: list[pytest.Item]) -> None:
        """Each item's repo name, path and tags become keywords for `-k` (without `-k`, nothing
        would read them: ~25 ms at 10,000 tests)."""
        if self.run is None or not self.config.option.keyword:
            return
        task = self.run.task
        for item in items:
            case = case_of(item)
            if case is not None:
                item.extra_keyword_matches.update(task.row_keywords(case.row))

    def collected(self, session: pytest.Session) -> None:
        items = [item for item in session.items if case_of(item) is not None]
        self.schedule.set_items(items)
        self.count_collected(len(items))
        self.selected({case.key for item in items if (case := case_of(item)) is not None})
        if self.config.option.keyword:
            for item in items:
                # `-k` has been applied: the row keywords have done their job. Left in place, pytest
                # would copy them into each of the test's three reports, and keep those to the end.
                item.extra_keyword_matches.clear()
        if self.run is not None:
            self.heap.freeze()  # the test items live until the session ends (session.heap)

    def count_collected(self, tests: int) -> None:  # noqa: B027 (a hook whose default does nothing)
        """This process collected `tests` tests (the controller's progress line learns the total)."""

    def selected(self, keys: set[tuple[str, int]] | None) -> None:  # noqa: B027 (a hook's default)
        """The cases pytest selected (after `-k`/`-m`): the controller's run is complete when they are."""

    # -- attempts and records ------------------------------------------------------------------

    def run_attempt(self, item: pytest.Item, case: Case[SelectableRow], runner: Runner) -> Attempt:
        """Run (or resume) `case`'s attempt for `item`'s setup and append its record (before the
        test is judged: a skip or an infrastructure error keeps its record too)."""
        self.before_attempt(runner)
        upcoming: list[Case[SelectableRow]] = []
        ahead = runner.ahead(case)
        if ahead:
            for other in self.schedule.upcoming(item, ahead):
                other_case = case_of(other)
                if other_case is not None:
                    upcoming.append(other_case)
        try:
            attempt = runner.attempt(case, upcoming)
        except Exception as exc:
            # (imported here, once a run stops: not on every attempt's way)
            from pytest_lsrb.engine.runner import RunStopped

            if not isinstance(exc, RunStopped):
                raise
            item.session.shouldstop = str(exc)
            pytest.skip(str(exc))
        if attempt.record is not None:
            self.keep(attempt.record)
            # JUnit XML shows the test's duration as pytest timed it (~0 for an attempt run ahead of
            # its test); the model's own time goes along as a property (only when one is written:
            # a serial run keeps every item, and with it the property, to the end).
            if item.config.option.xmlpath:
                item.user_properties.append(("lsrb_latency_ms", attempt.record.get("latency_ms")))
        if runner.fatal:
            item.session.shouldstop = runner.fatal
        if attempt.judgement.outcome == "skip":  # a replay profile says this row is not verified
            pytest.skip(attempt.judgement.message)
        if attempt.judgement.outcome == "error":
            # Failing during setup makes pytest report an *error* (not a failure); pytrace=False
            # shows the one sentence instead of this code's source.
            pytest.fail(f"infrastructure error: {attempt.judgement.message}", pytrace=False)
        return attempt

    def before_attempt(self, runner: Runner) -> None:  # noqa: B027 (a hook whose default does nothing)
        """What the role does before each attempt (a worker catches up after a crash)."""

    @abstractmethod
    def keep(self, record: AttemptRecord) -> None:
        """Append the record of the attempt a test's setup just made to attempts.jsonl, there
        and then: before its test's report is made, and while the record is still warm in the
        CPU's caches. Serially this process appends it; an xdist worker appends its own."""

    @abstractmethod
    def append_untaken(self, record: AttemptRecord) -> None:
        """Append a record made ahead for a test that never ran (the role's own writer)."""

    def record_untaken(self, records: list[AttemptRecord]) -> None:
        """Record answers fetched ahead for tests that never ran (a quota stop, -x): the provider
        billed them, so they are kept like any other and a resume does not ask again."""
        if not records:
            return
        try:
            for record in records:
                self.append_untaken(record)
        except OutputWriteError as exc:
            self.stop_writing(str(exc))

    def stop_writing(self, message: str) -> None:
        """The disk refused a record: this process stops."""
        if self.pytest_session is not None:
            self.pytest_session.shouldstop = message

    # -- finish --------------------------------------------------------------------------------

    def finish(self, session: pytest.Session) -> None:
        """Hand on the answers fetched ahead that no test took; each role then does its own end."""
        if self.runner is not None:
            self.record_untaken(self.runner.untaken_answers())
        self.stop_watching()
