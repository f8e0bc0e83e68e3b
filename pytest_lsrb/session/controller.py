"""The controller's role: it opens the run's output, writes summary.json and applies the gate. It
is the whole of a serial run (appending every record itself); under xdist it hands each worker
the run directory, follows the records the workers append and notices a worker crash (as xdist's
`dsession.py` for `remote.py`)."""

from __future__ import annotations

import contextlib
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from pytest_lsrb.adapters.retry import WAITING
from pytest_lsrb.core.errors import LsrbUsageError, OutputWriteError
from pytest_lsrb.core.nofollow import create_nofollow
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.schedule import queue_depth
from pytest_lsrb.session import budgets, xdist
from pytest_lsrb.session.base import LsrbSession
from pytest_lsrb.session.cases import keys_of_nodeids
from pytest_lsrb.session.seams import fastpath
from pytest_lsrb.session.seams.reports import ReportKeeper
from pytest_lsrb.session.termination import EXIT_TERMINATED, TermHandler

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_lsrb.adapters.base import Adapter
    from pytest_lsrb.engine.budget import BudgetStop
    from pytest_lsrb.engine.records import AttemptRecord
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.output import rundir as outputs
    from pytest_lsrb.output.owner import Owner, RunDirLock
    from pytest_lsrb.session.outage_line import OutageLine
    from pytest_lsrb.session.progress import ProgressReporter
    from pytest_lsrb.tools import gate


def checked(adapter: Adapter, users: bool) -> None:
    """`adapter.check()`; a user's adapter that fails its check otherwise than with
    LsrbUsageError (the Protocol's way) still stops the run in one sentence."""
    try:
        adapter.check()
    except LsrbUsageError:
        raise
    except Exception as exc:
        if not users:
            raise
        raise LsrbUsageError(f"the lsrb_adapter's check() failed: {type(exc).__name__}: {exc}") from None


FOLLOW_EVERY_S = 0.5  # the controller of xdist workers reads their new records this often


def notes_of(*notes: Callable[[], str | None] | None) -> Callable[[], str | None]:
    """The progress line's extra parts, each asked when the line is shown."""

    def note() -> str | None:
        said = [text for text in (n() for n in notes if n is not None) if text]
        return " · ".join(said) or None

    return note


def live_note_of(run: SuiteRun, going: Callable[[], bool]) -> Callable[[], str | None] | None:
    """What the progress line says of attempts of several calls in flight, in any process of the
    run (`output.live`), while `going` (not once every attempt is in: a live file lags by up to a
    second); None for a task whose attempts make one call."""
    if run.task.calls_per_attempt(run.config.values) <= 1:
        return None
    from pytest_lsrb.output.live import read_live
    from pytest_lsrb.session.progress import live_note

    run_dir = run.config.output_dir
    return lambda: live_note(read_live(run_dir), time.time()) if going() else None


class Ticker:
    """Calls `tick` every `every_s` seconds from a daemon thread until `stop`."""

    def __init__(self, tick: Callable[[], None], every_s: float) -> None:
        import threading

        self._stop = threading.Event()
        self._tick, self._every = tick, every_s
        self._thread = threading.Thread(target=self._loop, name="lsrb-progress", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            self._tick()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class ControllerSession(LsrbSession):
    """The controller's (or a serial run's) state: the run's output, progress line, summary, gate."""

    is_worker: ClassVar[bool] = False

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(config)
        self.output: outputs.RunOutput | None = None
        self.summary: dict[str, Any] | None = None
        self.gate: gate.GateConfig | None = None
        self.gate_result: gate.GateResult | None = None
        self.started = datetime.now(timezone.utc)
        self.queue_depth = 0  # tests each xdist worker should hold so its prefetch stays busy
        self.progress: ProgressReporter | None = None  # the progress line
        self._ticker: Ticker | None = None  # prints it while long attempts finish nothing
        self._unlisten: Callable[[], None] | None = None  # its ear on calls waiting to retry
        self.outage_line: OutageLine | None = None  # says so while the server is down
        # The cases pytest selected (-k, -m, node ids): the run is complete when they are done.
        self.selection: set[tuple[str, int]] | None = None
        self.selection_unknown = False
        self.following = False  # controller of xdist workers: it follows their attempts.jsonl
        self.workers_lost = 0  # xdist workers that crashed so far
        self.next_follow = 0.0  # controller of xdist workers: when to read their records next
        self.term = TermHandler()  # controller: SIGTERM ends the run like Ctrl-C, resumable
        self.next_step: str | None = None  # controller: the command that finishes an unfinished run
        self.reports: ReportKeeper | None = None  # a run's process with a terminal: what it keeps
        self.budget_stop: BudgetStop | None = None  # controller: the budget that stopped the run
        self.lock: RunDirLock | None = None  # controller: this command owns the run directory
        self.owner: Owner | None = None  # a child of `lsrb run`: the command that must own its group

    # -- setup ---------------------------------------------------------------------------------

    def start(self, run: SuiteRun) -> None:
        self.open_run(run)

    def open_run(self, run: SuiteRun) -> None:
        """Check the gate, verifier and adapter, then open the run's output."""
        from pytest_lsrb.adapters import create_adapter, outage
        from pytest_lsrb.adapters.base import in_flight
        from pytest_lsrb.adapters.cache import drop_rounds
        from pytest_lsrb.engine.stop import StopSignal
        from pytest_lsrb.engine.verifier import create_verifier
        from pytest_lsrb.output import rundir as outputs
        from pytest_lsrb.tools import gate

        # a user's own adapter, made to name the run (`session.overrides`), is checked instead of
        # the named one, then ended by its fixture's own teardown, whatever stops the run first
        made, self.made_adapter = self.made_adapter, None
        try:
            self.gate = gate.preflight(run.config, run.spec.name)
            # bad mode or profile file, or no Lean for a mode that needs it: stop before the
            # adapter is even asked whether it is up
            verifier = create_verifier(run.verifier_config())
            try:
                verifier.preflight()
            finally:
                verifier.close()
            adapter = made.adapter if made is not None else create_adapter(run.adapter_config())
            try:
                checked(adapter, made is not None)
                concurrency = in_flight(adapter, run.config.concurrency)
                self.queue_depth = queue_depth(concurrency)
                self._warn_about_slots(adapter, concurrency, asked=run.config.concurrency is not None)
            finally:
                if made is None:
                    adapter.close()
            if not self.config.option.collectonly:  # listing tests must not touch a run's files
                self.take_run_dir(run.config.output_dir)
                self.output = outputs.RunOutput.open(run)
                if self.gate is not None and not run.config.resume:
                    self.output.kept = []  # the gate takes this run's records from here
                StopSignal(run.config.output_dir).clear()  # a stop from an earlier run is not ours
                outage.clear(run.config.output_dir)  # nor its server's outage
                if not run.config.resume:  # nor, in a new run, its answers (adapters.cache)
                    drop_rounds(run.config.output_dir)
                budgets.open_budget(run)  # before any worker asks it
                xdist.clear_crash_files(run.config.output_dir)  # nor an earlier run's crashes
                self.watch_attempts(run, "main")  # (a serial run's; under -n the workers' own)
                self.progress = self._progress_reporter(run)
                self.term.install()
                terminal = self.config.pluginmanager.get_plugin("terminalreporter")
                keeps = terminal is not None and fastpath(self.config)  # else pytest keeps every report
                self.reports = ReportKeeper(terminal, self.config) if keeps else None
            self._warn_about_short_keys()
        except LsrbUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        finally:
            if made is not None:
                made.finish()

    def take_run_dir(self, run_dir: Path) -> None:
        """Own the run directory for this session (`output.owner`), or LsrbUsageError in one
        sentence; a child of an `lsrb run` of several models also checks that its parent still
        owns the group folder. Before any of the run's files is touched."""
        import os

        from pytest_lsrb.output.owner import RunDirLock, owner_from_env

        self.lock = RunDirLock.acquire(run_dir)
        self.owner = owner_from_env(os.environ)
        problem = self.owner.problem() if self.owner is not None else None
        if problem is not None:
            raise LsrbUsageError(problem)

    def release_run_dir(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def before_attempt(self, runner: Runner) -> None:
        """A child of `lsrb run` whose parent died, or a run whose lock file was deleted or
        replaced under it: no more requests (`output.owner`)."""
        problem = self.owner.parent_problem() if self.owner is not None else None
        if problem is None and self.lock is not None:
            problem = self.lock.problem()
        if problem is not None:
            runner.stop(problem, everywhere=False)

    def _warn_about_short_keys(self) -> None:
        """One sentence for each key too short to mask without hiding text (`core.credentials`)."""
        from pytest_lsrb.core.credentials import key_warnings

        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            for sentence in key_warnings():
                terminal.write_line(f"lsrb: WARNING: {sentence}.", yellow=True)

    def _warn_about_slots(self, adapter: Adapter, concurrency: int, asked: bool) -> None:
        """Say so when more attempts would be in flight than the server decodes at once, and that
        was asked for: a `--lsrb-concurrency` above the slots, or more -n workers than slots (each
        keeps one in flight, so the rest queue in the server, where --lsrb-timeout runs). The
        adapter's own default above the slots is capped there without a word: nothing to change
        (the documented `lsrb serve` path, one slot, stays quiet)."""
        from pytest_lsrb.adapters.base import served_slots

        slots = served_slots(adapter)
        workers = (
            self.config.getoption("numprocesses", None)
            if self.config.pluginmanager.hasplugin("xdist")
            else None
        )
        processes = workers if isinstance(workers, int) and workers > 0 else 1
        if slots is None or concurrency * processes <= slots or not (asked or processes > slots):
            return
        over = f"--lsrb-concurrency {concurrency}" + (f" x {processes} workers" if processes > 1 else "")
        share = (
            f"the {processes} workers share them ({slots // processes or 1}"
            + (f" or {slots // processes + 1}" if slots % processes and slots > processes else "")
            + " each)"
            if processes > 1
            else f"it keeps at most {slots} in flight"
        )
        message = (
            f"lsrb: WARNING: {over} exceeds the {slots} request(s) the server decodes at once (it "
            f"reports {slots} slot(s)); {share} so the rest wait here, where the wait does not "
            "count against --lsrb-timeout"
            + (
                f" (but each worker keeps at least one in flight, so {processes - slots} queue in "
                "the server: use fewer -n workers)"
                if processes > slots
                else ""
            )
            + "."
        )
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(message, yellow=True)

    def _progress_reporter(self, run: SuiteRun) -> ProgressReporter:
        import sys

        from pytest_lsrb.engine.cost import parse_price
        from pytest_lsrb.session.outage_line import OutageLine, outage_note
        from pytest_lsrb.session.progress import Progress, ProgressReporter, interval_for

        resumed = len(self.finished_judgements()) if run.config.resume else 0
        run_dir = run.config.output_dir
        progress = Progress(
            len(run.cases) - resumed,
            interval_s=interval_for(run.config.progress, sys.stdout.isatty()),
            price=parse_price(run.config.price),
            score_label=run.task.score_label(run.config.values),
            note=notes_of(
                budgets.budget_note_of(run),
                lambda: outage_note(run_dir) or WAITING.note(),
                live_note_of(run, lambda: progress.done < progress.total),
            ),
        )
        progress.resumed = resumed
        reporter = ProgressReporter(progress, self.config.pluginmanager.get_plugin("terminalreporter"))
        # A call riding out an outage finishes no attempt, so nothing else would print a line.
        self._unlisten = WAITING.listen(reporter.nudge)
        if run.task.calls_per_attempt(run.config.values) > 1:
            # An attempt of several calls runs for minutes and finishes nothing meanwhile: a clock
            # prints the line when due, with the attempts in flight (`live_note_of`).
            self._ticker = Ticker(reporter.nudge, min(1.0, max(0.05, progress.interval_s / 4)))
        if progress.interval_s > 0:  # (--lsrb-progress 0: no periodic line at all)
            self.outage_line = OutageLine(run_dir, reporter.say)
        return reporter

    # -- collection ----------------------------------------------------------------------------

    def node_collected(self, ids: list[str]) -> None:
        """xdist: a worker collected `ids` (the progress line learns the total)."""
        self.count_collected(len(ids))
        if self.run is not None:
            self.selected(keys_of_nodeids(self.run.cases, ids))

    def selected(self, keys: set[tuple[str, int]] | None) -> None:
        # Every xdist worker collects the same tests; a worker whose ids could not be read makes
        # the whole run the selection (as without -k), never a smaller one.
        if keys is None or self.selection_unknown:
            self.selection_unknown, self.selection = True, None
        else:
            self.selection = keys if self.selection is None else self.selection | keys

    def count_collected(self, tests: int) -> None:
        if self.progress is not None:
            self.progress.collected(tests - self.progress.progress.resumed)

    # -- records -------------------------------------------------------------------------------

    def keep(self, record: AttemptRecord) -> None:
        if self.output is None:
            return
        try:
            written = self.output.append(record)
        except OutputWriteError as exc:  # a full disk: stop with one sentence, keep what was written
            self.stop_writing(str(exc))
            return
        if self.progress is not None and written is not None:
            self.progress.add(written)

    def record_untaken(self, records: list[AttemptRecord]) -> None:
        if self.summary is None:  # none after summary.json is written
            super().record_untaken(records)

    def append_untaken(self, record: AttemptRecord) -> None:
        if self.output is not None:
            self.output.append(record)

    def report_made(self, report: Any) -> None:
        """A test report reached this process, and the terminal has shown it: keep no more of it
        than the terminal's counts need (`session.seams.reports`). The controller of xdist workers makes
        no records: for it a report is the moment to follow the workers' records when a progress
        line is due."""
        if self.reports is not None:
            self.reports.shown(report)
        if self.following and time.monotonic() >= self.next_follow:
            self.follow()
            problem = self.owner.parent_problem() if self.owner is not None else None
            if problem is not None and self.pytest_session is not None:
                self.pytest_session.shouldstop = problem  # its parent died: its workers stop

    def follow(self) -> None:
        """Controller of xdist workers: take in the records they appended since the last look.

        Looked at every FOLLOW_EVERY_S (and when the progress line is due sooner), so decoding
        them goes on while the workers run, not all at the end."""
        if self.output is None:
            return
        interval = self.progress.progress.interval_s if self.progress is not None else 0
        self.next_follow = time.monotonic() + (
            min(interval, FOLLOW_EVERY_S) if interval > 0 else FOLLOW_EVERY_S
        )
        records = self.output.follow()
        if self.progress is not None:
            self.progress.add_many(records)
        else:
            for _ in records:
                pass
        if self.output.write_error is not None and self.pytest_session is not None:
            self.pytest_session.shouldstop = self.output.write_error  # (the workers stop too)

    # -- the workers ---------------------------------------------------------------------------

    def node_configured(self, node: Any) -> None:
        """xdist: a worker is about to start: tell it where the run writes, and that this
        controller unpacks batched messages."""
        if self.run is None:
            return
        from pytest_lsrb.session.overrides import IDENTITY_KEYS

        extra = self.run.config.extra_identity
        named = {key: str(extra[key]) for key in IDENTITY_KEYS if key in extra}
        holder = self.lock.holder if self.lock is not None else None
        identity = self.lock.identity if self.lock is not None else None
        xdist.give_run_dir(node, self.run.config.output_dir, self.run.config.resume, named, holder, identity)
        if fastpath(self.config):  # else workers send xdist's own per-event messages
            xdist.unpack_batches(node, self.queue_depth)
        self.following = True

    def worker_down(self, node: Any, error: Any) -> None:
        """xdist: a worker finished or crashed; a write it could not make stops the run here too."""
        if error is not None:
            self.workers_lost += 1
            if self.run is not None:
                from pytest_lsrb.session.seams.transport import blame_running, running_marker

                run_dir = self.run.config.output_dir
                if fastpath(self.config):  # else xdist's own choice of the crashed test stands
                    blame_running(self.config, node, running_marker(run_dir, xdist.node_id(node)))
                with contextlib.suppress(OSError):
                    create_nofollow(xdist.crash_flag(run_dir, self.workers_lost))
        write_error = xdist.write_error_of(node)
        if write_error is not None and self.output is not None:
            self.output.write_error = self.output.write_error or write_error
            if self.pytest_session is not None:
                self.pytest_session.shouldstop = write_error

    def crashed_test(self, nodeid: str, report: Any) -> None:
        """xdist: the worker running `nodeid` crashed; when the test's record is on disk, its
        report follows the record, else it is an error of the environment (`session.crashes`)."""
        run = self.run
        if run is None or self.output is None or self.is_worker:
            return
        from pytest_lsrb.session import crashes
        from pytest_lsrb.session.seams import id_escaper

        key = crashes.case_key(run, nodeid, id_escaper(self.config))
        if key is None:
            return  # not a case of this run (a user's own test): xdist's report stands
        verdict = crashes.recorded_judgement(run, key)
        worker = xdist.node_id(getattr(report, "node", None))
        if verdict is not None:
            crashes.follow_record(report, verdict, run.config.outcome, worker)
        else:
            crashes.no_record(report, worker)

    # -- finish --------------------------------------------------------------------------------

    def finish(self, session: pytest.Session) -> None:
        """Write summary.json and apply the gate."""
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self.outage_line is not None:
            self.outage_line.close()
            self.outage_line = None
        super().finish(session)
        if self.output is None or self.run is None:
            return
        if self.following:
            self.follow()  # every worker is done: the last of their records
        from pytest_lsrb.adapters import outage
        from pytest_lsrb.engine.stop import StopSignal
        from pytest_lsrb.session.nextstep import next_step_line
        from pytest_lsrb.tools import gate

        wall = (datetime.now(timezone.utc) - self.started).total_seconds()
        self.summary = self.output.finish(wall_time_s=wall, selection=self.selection)
        self.term.saved = True
        self.budget_stop = budgets.budget_stop(self.run)
        self.next_step = next_step_line(
            self.summary,
            self.term.received or session.exitstatus == pytest.ExitCode.INTERRUPTED,
            self.output.dir,
            self.run.config.runs_folder,
            self.config.invocation_params.args,
            budget_stop=self.budget_stop,
            outage=outage.run_outage(self.run.config.output_dir),
        )
        outage.clear(self.run.config.output_dir)
        if self.summary and self.summary.get("complete"):  # its answers serve a resume only
            from pytest_lsrb.adapters.cache import drop_rounds

            drop_rounds(self.run.config.output_dir)
        if self.output.write_error is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
            return
        StopSignal(self.run.config.output_dir).clear()
        xdist.clear_crash_files(self.run.config.output_dir)
        if self.term.received:  # a batch system's stop: no gate on half a run; "requeue me"
            session.exitstatus = EXIT_TERMINATED
            return
        if self.gate is not None:
            from pytest_lsrb.output.reader import RunDir

            current = None
            if self.output.kept is not None:  # this run's records as written: no reading back
                current = RunDir(self.output.dir, self.output.header, self.summary, self.output.kept)
            self.gate_result, session.exitstatus = gate.finish_session(
                self.gate, self.output.dir, int(session.exitstatus), current
            )
            from pytest_lsrb.session.seams import junit_xml
            from pytest_lsrb.tools.junit import add_gate_case

            add_gate_case(junit_xml(self.config), self.gate_result)

    def write_dry_run(self, terminalreporter: Any) -> None:
        """`--lsrb-dry-run`: one model call measured, and what the selection would cost."""
        from pytest_lsrb.session.dryrun import DryRun, dry_run

        assert self.run is not None
        xdist_on = self.config.pluginmanager.hasplugin("xdist")
        workers = self.config.getoption("numprocesses", None) if xdist_on else None
        status = None
        try:
            done = dry_run(self.run, self.selection, workers if isinstance(workers, int) else 1)
        except LsrbUsageError as exc:  # a wrong URL, model or key: one sentence, as for a run
            done, status = DryRun([f"lsrb: error: {exc}"]), pytest.ExitCode.USAGE_ERROR
        for line in done.lines:
            terminalreporter.write_line(line)
        if done.failed:  # the measured call failed: a smoke test of the server must not pass
            status = pytest.ExitCode.TESTS_FAILED
        if status is not None and self.pytest_session is not None:
            self.pytest_session.exitstatus = status

    def write_next_step(self) -> None:
        """The session's last line, after pytest's own: the command that finishes the run. The
        run directory is let go here, once nothing more is written to it."""
        self.term.restore()
        self.release_run_dir()
        if self.next_step is None:
            return
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(self.next_step, yellow=True, bold=True)
        else:
            print(self.next_step, flush=True)

    def write_terminal_summary(self, terminalreporter: Any) -> None:
        from pytest_lsrb.session import terminal

        stopped = self.pytest_session is not None and self.pytest_session.shouldstop
        if self.output is not None and self.output.write_error is not None and not stopped:
            # (a write refused while tests ran already ended the run with pytest's "Interrupted")
            terminalreporter.write_line(f"lsrb: {self.output.write_error}", red=True, bold=True)
        for warning in self.output.warnings if self.output is not None else ():
            terminalreporter.write_line(f"lsrb: {warning}", yellow=True)
        uncounted = (
            budgets.budget_uncounted(self.run) if self.run is not None and self.output is not None else None
        )
        if uncounted:
            terminalreporter.write_line(f"lsrb: WARNING: {uncounted}", yellow=True)
        if self.run is not None and self.config.option.collectonly:
            terminalreporter.write_line(terminal.planned_calls_line(self.run))
            if self.config.getoption("lsrb_dry_run", None):
                self.write_dry_run(terminalreporter)
        if self.summary is None:
            return
        from pytest_lsrb.tools import gate

        if self.output is not None:
            terminal.write_summary(terminalreporter, self.summary, self.output.dir)
        if self.gate is not None and self.gate.baseline is not None and self.summary is not None:
            from pytest_lsrb.report.compare import write_comparison

            baseline = self.gate.baseline_run
            write_comparison(
                terminalreporter,
                Path(self.gate.baseline),
                self.summary,
                baseline.summary if baseline is not None else None,
            )
        if self.gate_result is not None:
            gate.write_terminal(terminalreporter, self.gate_result)
