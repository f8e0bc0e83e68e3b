"""Per-process state of a pytest session running a suite (the controller and each xdist worker
have one), and what each step of the session does with it. The pytest hooks in `plugin.py` call
these methods; nothing here is a hook itself."""

from __future__ import annotations

import contextlib
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_lsrb.core.errors import LsrbUsageError, OutputWriteError
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.schedule import Schedule, queue_depth
from pytest_lsrb.engine.suite import discover_suite_roots, load_suite, suite_root_of
from pytest_lsrb.session import xdist
from pytest_lsrb.session.cases import case_of
from pytest_lsrb.session.heap import Heap
from pytest_lsrb.session.prepare import prepare_suite_run
from pytest_lsrb.session.seams import fastpath

if TYPE_CHECKING:
    from pytest_lsrb.adapters.base import Adapter
    from pytest_lsrb.engine.records import AttemptDict
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.output import rundir as outputs
    from pytest_lsrb.output.rundir import WorkerOutput
    from pytest_lsrb.session.progress import ProgressReporter
    from pytest_lsrb.session.transport import Batcher
    from pytest_lsrb.tools import gate


FOLLOW_EVERY_S = 0.5  # the controller of xdist workers reads their new records this often


class LsrbSession:
    """Per-process plugin state (the controller and each xdist worker have one)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = xdist.is_worker(config)
        self.run: SuiteRun | None = None
        self.output: outputs.RunOutput | None = None
        self.schedule = Schedule(config)
        self.summary: dict[str, Any] | None = None
        self.gate: gate.GateConfig | None = None
        self.gate_result: gate.GateResult | None = None
        self.started = datetime.now(timezone.utc)
        self.queue_depth = 0  # tests each xdist worker should hold so its prefetch stays busy
        self.runner: Runner | None = None  # set by the lsrb_runner fixture while it is live
        # what the cyclic collector no longer walks (session.heap)
        self.heap = Heap(ends_process=self.is_worker, fastpath=fastpath(config))
        self.pytest_session: pytest.Session | None = None
        self.progress: ProgressReporter | None = None  # the controller's progress line
        self.batcher: Batcher | None = None  # xdist worker: its batched sends to the controller
        self.worker_output: WorkerOutput | None = None  # xdist worker: its appends to attempts.jsonl
        self.following = False  # controller of xdist workers: it follows their attempts.jsonl
        self.workers_lost = 0  # controller: xdist workers that crashed so far
        self.crashes_seen = 0  # xdist worker: crash flags it has caught up with
        self.next_follow = 0.0  # controller of xdist workers: when to read their records next

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
        try:
            self.run = prepare_suite_run(
                root, self.config.getoption, self.config.rootpath, xdist.given_run_dir(self.config)
            )
        except LsrbUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        return self.run

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

    def open_run(self, run: SuiteRun) -> None:
        """Controller: check the gate, verifier and adapter, then open the run's output."""
        from pytest_lsrb.adapters import create_adapter
        from pytest_lsrb.engine.stop import StopSignal
        from pytest_lsrb.engine.verifier import create_verifier
        from pytest_lsrb.output import rundir as outputs
        from pytest_lsrb.tools import gate

        try:
            self.gate = gate.preflight(run.config, run.spec.name)
            # bad mode or profile file, or no Lean for a mode that needs it: stop before the
            # adapter is even asked whether it is up
            verifier = create_verifier(run.verifier_config())
            try:
                verifier.preflight()
            finally:
                verifier.close()
            adapter = create_adapter(run.adapter_config())
            try:
                adapter.check()
                concurrency = run.config.concurrency or adapter.default_concurrency
                self.queue_depth = queue_depth(concurrency)
                self._warn_about_slots(adapter, concurrency)
            finally:
                adapter.close()
            if not self.config.option.collectonly:  # listing tests must not touch a run's files
                self.output = outputs.RunOutput.open(run)
                StopSignal(run.config.output_dir).clear()  # a stop from an earlier run is not ours
                xdist.clear_crash_files(run.config.output_dir)  # nor an earlier run's crashes
                self.progress = self._progress_reporter(run)
        except LsrbUsageError as exc:
            raise pytest.UsageError(str(exc)) from None

    def start_worker(self, run: SuiteRun) -> None:
        """xdist worker: append records to the run's attempts.jsonl itself, and send per-test
        events to the controller in batches (`session.transport`)."""
        from pytest_lsrb.output.files import ATTEMPTS_FILE
        from pytest_lsrb.output.rundir import WorkerOutput
        from pytest_lsrb.session.transport import batch_sends, running_marker

        marker = None
        if xdist.given_run_dir(self.config) is not None and not self.config.option.collectonly:
            self.worker_output = WorkerOutput(run.config.output_dir / ATTEMPTS_FILE)
            xdist.drop_terminal(self.config)
            marker = running_marker(run.config.output_dir, xdist.worker_id(self.config))
        self.batcher = batch_sends(self.config, marker)

    def _warn_about_slots(self, adapter: Adapter, concurrency: int) -> None:
        """Say so when more attempts would be in flight than the server decodes at once."""
        served_slots = getattr(getattr(adapter, "inner", adapter), "served_slots", None)
        slots = served_slots() if served_slots is not None else None
        workers = (
            self.config.getoption("numprocesses", None)
            if self.config.pluginmanager.hasplugin("xdist")
            else None
        )
        processes = workers if isinstance(workers, int) and workers > 0 else 1
        if slots is None or concurrency * processes <= slots:
            return
        over = f"--lsrb-concurrency {concurrency}" + (f" x {processes} workers" if processes > 1 else "")
        message = (
            f"lsrb: WARNING: {over} exceeds the {slots} request(s) the server decodes at once (it "
            f"reports {slots} slot(s)); each process keeps at most {slots} in flight so the rest wait "
            "here, where the wait does not count against --lsrb-timeout"
            + (
                " (but the workers together still queue in the server: use fewer -n workers)"
                if processes > 1
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
        from pytest_lsrb.session.progress import Progress, ProgressReporter, interval_for

        resumed = len(self.finished_judgements()) if run.config.resume else 0
        progress = Progress(
            len(run.cases) - resumed,
            interval_s=interval_for(run.config.progress, sys.stdout.isatty()),
            price=parse_price(run.config.price),
        )
        progress.resumed = resumed
        return ProgressReporter(progress, self.config.pluginmanager.get_plugin("terminalreporter"))

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

    def node_collected(self, ids: list[str]) -> None:
        """xdist: a worker collected `ids` (the controller's progress line learns the total)."""
        if self.progress is not None:
            self.progress.collected(len(ids) - self.progress.progress.resumed)

    def collected(self, session: pytest.Session) -> None:
        items = [item for item in session.items if case_of(item) is not None]
        self.schedule.set_items(items)
        if self.progress is not None:
            self.progress.collected(len(items) - self.progress.progress.resumed)
        if self.config.option.keyword:
            for item in items:
                # `-k` has been applied: the row keywords have done their job. Left in place, pytest
                # would copy them into each of the test's three reports, and keep those to the end.
                item.extra_keyword_matches.clear()
        if self.run is not None:
            self.heap.freeze()  # the test items live until the session ends (session.heap)

    # -- records -------------------------------------------------------------------------------

    def keep(self, record: AttemptDict) -> None:
        """Append the record of the attempt a test's setup just made to attempts.jsonl, there
        and then: before its test's report is made, and while the record is still warm in the
        CPU's caches. Serially this process appends it; an xdist worker appends its own."""
        try:
            if self.worker_output is not None:
                self.worker_output.append(record)
                return
            if self.output is None:
                return
            written = self.output.append(record)
        except OutputWriteError as exc:  # a full disk: stop with one sentence, keep what was written
            self.stop_writing(str(exc))
            return
        if self.progress is not None and written is not None:
            self.progress.add(written)

    def report_made(self) -> None:
        """A test report reached this process. The controller of xdist workers makes no records:
        for it a report is the moment to follow the workers' records when a progress line is due."""
        if self.following and time.monotonic() >= self.next_follow:
            self.follow()

    def catch_up(self, runner: Runner) -> None:
        """xdist worker, before an attempt: after a worker crashed, take what is already in
        attempts.jsonl as done (`xdist.crash_flag`)."""
        if self.run is None:
            return
        run_dir = self.run.config.output_dir
        seen = self.crashes_seen
        while os.access(xdist.crash_flag(run_dir, self.crashes_seen + 1), os.F_OK):
            self.crashes_seen += 1
        if self.crashes_seen != seen:
            from pytest_lsrb.output import rundir as outputs

            runner.finished.update(outputs.finished_judgements(self.run))

    def stop_writing(self, message: str) -> None:
        """The disk refused a record: this process stops, and so do the other workers."""
        if self.pytest_session is not None:
            self.pytest_session.shouldstop = message
        if self.is_worker and self.runner is not None:
            self.runner.stop(message)

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

    def record_untaken(self, records: list[AttemptDict]) -> None:
        """Record answers fetched ahead for tests that never ran (a quota stop, -x): the provider
        billed them, so they are kept like any other and a resume does not ask again."""
        if not records or self.summary is not None:
            return
        try:
            for record in records:
                if self.worker_output is not None:
                    self.worker_output.append(record)
                elif self.output is not None:
                    self.output.append(record)
        except OutputWriteError as exc:
            self.stop_writing(str(exc))

    def node_configured(self, node: Any) -> None:
        """xdist: a worker is about to start: tell it where the run writes, and that this
        controller unpacks batched messages."""
        if self.run is None:
            return
        xdist.give_run_dir(node, self.run.config.output_dir)
        if fastpath(self.config):  # else workers send xdist's own per-event messages
            xdist.unpack_batches(node, self.queue_depth)
        self.following = True

    def worker_down(self, node: Any, error: Any) -> None:
        """xdist: a worker finished or crashed; a write it could not make stops the run here too."""
        if error is not None:
            self.workers_lost += 1
            if self.run is not None:
                from pytest_lsrb.session.transport import blame_running, running_marker

                run_dir = self.run.config.output_dir
                if fastpath(self.config):  # else xdist's own choice of the crashed test stands
                    blame_running(self.config, node, running_marker(run_dir, xdist.node_id(node)))
                with contextlib.suppress(OSError):
                    xdist.crash_flag(run_dir, self.workers_lost).touch()
        write_error = xdist.write_error_of(node)
        if write_error is not None and self.output is not None:
            self.output.write_error = self.output.write_error or write_error
            if self.pytest_session is not None:
                self.pytest_session.shouldstop = write_error

    # -- finish --------------------------------------------------------------------------------

    def finish(self, session: pytest.Session) -> None:
        """Write summary.json and apply the gate (controller); hand on untaken answers (all)."""
        if self.runner is not None:
            self.record_untaken(self.runner.untaken_answers())
        if self.worker_output is not None:
            self.worker_output.close()
            if self.run is not None:
                from pytest_lsrb.session.transport import running_marker

                running_marker(self.run.config.output_dir, xdist.worker_id(self.config)).unlink(
                    missing_ok=True
                )
            if self.worker_output.write_error is not None:
                xdist.send_write_error(self.config, self.worker_output.write_error)
        if self.is_worker:
            return
        if self.output is None or self.run is None:
            return
        if self.following:
            self.follow()  # every worker is done: the last of their records
        from pytest_lsrb.engine.stop import StopSignal
        from pytest_lsrb.tools import gate

        wall = (datetime.now(timezone.utc) - self.started).total_seconds()
        self.summary = self.output.finish(wall_time_s=wall)
        if self.output.write_error is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
            return
        StopSignal(self.run.config.output_dir).clear()
        xdist.clear_crash_files(self.run.config.output_dir)
        if self.gate is not None:
            self.gate_result, session.exitstatus = gate.finish_session(
                self.gate, self.output.dir, int(session.exitstatus)
            )
            from pytest_lsrb.tools.junit import add_gate_case

            add_gate_case(self.config, self.gate_result)

    def write_terminal_summary(self, terminalreporter: Any) -> None:
        from pytest_lsrb.session import terminal

        stopped = self.pytest_session is not None and self.pytest_session.shouldstop
        if self.output is not None and self.output.write_error is not None and not stopped:
            # (a write refused while tests ran already ended the run with pytest's "Interrupted")
            terminalreporter.write_line(f"lsrb: {self.output.write_error}", red=True, bold=True)
        for warning in self.output.warnings if self.output is not None else ():
            terminalreporter.write_line(f"lsrb: {warning}", yellow=True)
        if self.run is not None and not self.is_worker and self.config.option.collectonly:
            terminalreporter.write_line(terminal.planned_calls_line(self.run))
        if self.summary is None:
            return
        from pytest_lsrb.tools import gate

        if self.output is not None:
            terminal.write_summary(terminalreporter, self.summary, self.output.dir)
        if self.gate is not None and self.gate.baseline is not None and self.summary is not None:
            from pytest_lsrb.report.compare import write_comparison

            write_comparison(terminalreporter, Path(self.gate.baseline), self.summary)
        if self.gate_result is not None:
            gate.write_terminal(terminalreporter, self.gate_result)
