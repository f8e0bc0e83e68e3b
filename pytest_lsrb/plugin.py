"""The pytest plugin: options, collection of one test per item × sample, fixtures, artifacts.

Flow (see DESIGN.md, "The spine"):
- sessionstart: find the suite named by the command line, validate its rows and options, select,
  shard and expand into cases. On the controller, also prepare the output directory. Every user
  mistake surfaces here as one sentence, before any model is called.
- collection: `lsrb_case` is parametrized with this shard's cases; ids are `<item_id>#s<k>`; each
  item's repo name, path and tags become keywords for `-k`.
- each test: the `lsrb_attempt` fixture runs (or resumes) the attempt in setup, so an
  infrastructure failure errors the test; the test body judges the answer, so a wrong answer fails.
- the record rides on the test report (works under xdist); the controller appends it to
  attempts.jsonl as it arrives; sessionfinish writes summary.json.
"""

from __future__ import annotations

import dataclasses
import gc
import inspect
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# This module is loaded in every pytest session of everyone who installs the package, so its
# module-level imports stay light: the engine is imported only once a suite is actually run.
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.selection import Case
from pytest_lsrb.engine.options import RunConfig, add_options
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.schedule import Schedule, deep_load_scheduler, queue_depth
from pytest_lsrb.engine.suite import discover_suite_roots, load_suite, suite_root_of
from pytest_lsrb.session.pending import PendingAttempt

if TYPE_CHECKING:
    from pytest_lsrb.adapters.base import Adapter
    from pytest_lsrb.engine.runner import Attempt, Runner
    from pytest_lsrb.engine.verifier import Verifier
    from pytest_lsrb.output import rundir as outputs
    from pytest_lsrb.session.progress import ProgressReporter
    from pytest_lsrb.tools import gate

RECORD_ATTR = "lsrb_record"
RUN_DIR_KEY = "lsrb_run_dir"  # workerinput: the run directory the controller chose
UNTAKEN_KEY = "lsrb_untaken"  # workeroutput: record lines of answers fetched for tests never run
PLUGIN_NAME = "lsrb-session"


def prepare_suite_run(root: Path, getoption: Any, rootdir: Path, run_dir: Path | None = None) -> SuiteRun:
    """Load, validate, select, shard and expand: pure of side effects on the output directory.

    Without --lsrb-output-dir the run's own directory is chosen here, once the config hash is
    known; an xdist worker is handed its controller's choice as `run_dir`.
    """
    from pytest_lsrb.core.registry import TASKS
    from pytest_lsrb.core.selection import expand, select, selected_rows_hash, shard
    from pytest_lsrb.engine.options import resolve
    from pytest_lsrb.engine.task import get_task, with_verification_mode
    from pytest_lsrb.tools.splits import split_policy_predicate

    spec = load_suite(root)
    if spec.task not in TASKS:
        raise LsrbUsageError(
            f"{spec.root / 'suite.toml'}: field 'suite.task': unknown task '{spec.task}' "
            f"(known: {', '.join(sorted(TASKS))})."
        )
    task = get_task(spec.task)
    config = resolve(getoption, spec, rootdir)
    try:
        config = with_verification_mode(task, task.configure(config))
        task.check_options(config.values)
        rows = task.load_rows(spec, Path(config["index"]))
        keep_split = split_policy_predicate(config["split_policy"], Path(config["index"]))
        keep_slice = task.slice_predicate(config["goal_slice"])
        selected = select(
            rows,
            keep=lambda row: keep_split(row) and keep_slice(row),
            seed=config.seed,
            max_items=config["max_items"],
        )
        mine = shard(selected, config.shard_count, config.shard_index)
        cases = expand(mine, config.samples, config.seed)
    except LsrbUsageError as exc:  # a value that came from suite.toml is named there
        raise config.blame(exc) from None
    if config.runs_folder:
        config = dataclasses.replace(config, output_dir=run_dir or _choose_run_dir(config))
    return SuiteRun(
        spec=spec,
        task=task,
        config=config,
        selected_count=len(selected),
        selected_hash=selected_rows_hash(selected),
        cases=cases,
        config_hash=config.config_hash(),
    )


def _choose_run_dir(config: RunConfig) -> Path:
    from pytest_lsrb.output.runs import new_run_dir, resumable_run_dir

    folder, config_hash = config.output_dir, config.config_hash()
    if config["resume"]:
        return resumable_run_dir(folder, config_hash, finished_too=bool(config["retry_errors"]))
    return new_run_dir(folder, config_hash)


class LsrbSession:
    """Per-process plugin state (the controller and each xdist worker have one)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.run: SuiteRun | None = None
        self.output: outputs.RunOutput | None = None
        self.schedule = Schedule(config)
        self.summary: dict[str, Any] | None = None
        self.gate: gate.GateConfig | None = None
        self.gate_result: gate.GateResult | None = None
        self.started = datetime.now(timezone.utc)
        self.queue_depth = 0  # tests each xdist worker should hold so its prefetch stays busy
        self.runner: Runner | None = None  # set by the lsrb_runner fixture while it is live
        self.pending: dict[str, dict[str, Any]] = {}  # nodeid -> record not yet handed on
        self.frozen = False  # gc.freeze() after collection (see pytest_collection_finish)
        self.pytest_session: pytest.Session | None = None
        self.progress: ProgressReporter | None = None  # the controller's progress line

    # -- setup ---------------------------------------------------------------------------------

    def _prepare(self, root: Path) -> SuiteRun:
        if self.run is not None:
            if self.run.spec.root != root.resolve():
                raise pytest.UsageError(
                    f"this session collected two suites ({self.run.spec.name} and "
                    f"{load_suite(root).name}); run one suite per session so each gets its own "
                    "attempts.jsonl and summary.json."
                )
            return self.run
        workerinput = getattr(self.config, "workerinput", {})
        run_dir = Path(workerinput[RUN_DIR_KEY]) if RUN_DIR_KEY in workerinput else None
        try:
            self.run = prepare_suite_run(root, self.config.getoption, self.config.rootpath, run_dir)
        except LsrbUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        return self.run

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.pytest_session = session
        roots = discover_suite_roots(self.config.args, Path(self.config.invocation_params.dir))
        if len(roots) > 1:
            names = ", ".join(r.name for r in roots)
            raise pytest.UsageError(
                f"the command line names {len(roots)} suites ({names}); run one suite per session "
                "so each gets its own attempts.jsonl and summary.json."
            )
        if not roots:
            return
        run = self._prepare(roots[0])
        self.config.pluginmanager.register(AttemptSetup(self), PLUGIN_NAME + "-setup")
        if self.is_worker:
            return
        from pytest_lsrb.adapters import create_adapter
        from pytest_lsrb.engine.stop import StopSignal
        from pytest_lsrb.engine.verifier import create_verifier
        from pytest_lsrb.output import rundir as outputs
        from pytest_lsrb.tools import gate

        try:
            self.gate = gate.preflight(run.config.values, run.spec.name)
            # bad mode or profile file, or no Lean for a mode that needs it: stop before the
            # adapter is even asked whether it is up
            verifier = create_verifier(run.verifier_config())
            try:
                preflight = getattr(verifier, "preflight", None)
                if preflight is not None:
                    preflight()
            finally:
                verifier.close()
            adapter = create_adapter(run.adapter_config())
            try:
                adapter.check()
                self.queue_depth = queue_depth(run.config["concurrency"] or adapter.default_concurrency)
                self._warn_about_slots(adapter, int(run.config["concurrency"] or adapter.default_concurrency))
            finally:
                adapter.close()
            if not self.config.option.collectonly:  # listing tests must not touch a run's files
                self.output = outputs.RunOutput.open(run)
                StopSignal(run.config.output_dir).clear()  # a stop from an earlier run is not ours
                self.progress = self._progress_reporter(run)
        except LsrbUsageError as exc:
            raise pytest.UsageError(str(exc)) from None

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

        resumed = len(self.finished_judgements()) if run.config["resume"] else 0
        progress = Progress(
            len(run.cases) - resumed,
            interval_s=interval_for(run.config["progress"], sys.stdout.isatty()),
            price=parse_price(run.config["price"]),
        )
        progress.resumed = resumed
        return ProgressReporter(progress, self.config.pluginmanager.get_plugin("terminalreporter"))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.progress is not None:
            self.progress.collected(len(ids) - self.progress.progress.resumed)

    def suite_run_for(self, path: Path) -> SuiteRun:
        root = suite_root_of(path)
        if root is None:
            raise pytest.UsageError(
                f"{path} uses the lsrb_case fixture but is not inside a suite folder (no suite.toml)."
            )
        return self._prepare(root)

    def finished_judgements(self) -> dict[tuple[str, int], Any]:
        """Attempts a resumed run must not redo (read in every process, controller or worker)."""
        run = self.run
        if run is None or not run.config["resume"]:
            return {}
        from pytest_lsrb.output import rundir as outputs

        return outputs.finished_judgements(run)

    # -- collection ----------------------------------------------------------------------------

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "lsrb_case" not in metafunc.fixturenames:
            return
        run = self.suite_run_for(Path(str(metafunc.definition.path)))
        ids = [c.test_id for c in run.cases]
        direct = set(inspect.signature(metafunc.function).parameters)
        if "lsrb_attempt" not in direct:  # only reached through another fixture: the fixture path
            metafunc.parametrize("lsrb_case", run.cases, ids=ids)
        elif "lsrb_case" in direct:
            slots = [(c, PendingAttempt(c)) for c in run.cases]
            metafunc.parametrize(("lsrb_case", "lsrb_attempt"), slots, ids=ids)
        else:  # the usual suite test: its attempt runs in AttemptSetup, no fixture per test
            metafunc.parametrize("lsrb_attempt", [PendingAttempt(c) for c in run.cases], ids=ids)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # tryfirst: keywords must exist before `-k` deselects.
        if self.run is None:
            return
        task = self.run.task
        for item in items:
            case = case_of(item)
            if case is not None:
                item.extra_keyword_matches.update(task.row_keywords(case.row))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        items = [item for item in session.items if case_of(item) is not None]
        self.schedule.set_items(items)
        if self.progress is not None:
            self.progress.collected(len(items) - self.progress.progress.resumed)
        for item in items:
            # `-k` has been applied: the row keywords have done their job. Left in place, pytest
            # would copy them into each of the test's three reports, and keep those to the end.
            item.extra_keyword_matches.clear()
        if self.run is not None and not self.frozen:
            # The rows, cases and test items live until the session ends; Python's collector
            # would walk all of them again in every full collection while tests run, and in
            # the collections pytest makes when it ends (~20% of a 10,000-attempt mock run).
            # Move them out of its sight; `thaw` (the last config cleanup) lets them back in.
            gc.freeze()
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            gc.unfreeze()
            self.frozen = False

    # -- records -------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Hand on the record of the attempt the setup of `report`'s test just made.

        Controller: append it to attempts.jsonl now. xdist worker: put it on the report, which
        xdist then sends to the controller (tryfirst: before xdist's own hook sends it). No
        makereport wrapper and no stash: one dict lookup per report.
        """
        record = self.pending.pop(report.nodeid, None) if self.pending else None
        if self.is_worker:
            if record is not None:
                from pytest_lsrb.output.files import record_line

                # Sent as the bytes of its attempts.jsonl line: one item for execnet to carry
                # instead of a dict of dozens, and valid UTF-8 whatever the model wrote (execnet
                # cannot send a str holding a lone surrogate).
                setattr(report, RECORD_ATTR, record_line(record)[0])
            return
        line = report.__dict__.pop(RECORD_ATTR, None)  # sent by a worker
        if self.output is None:
            return
        from pytest_lsrb.output.files import OutputWriteError

        try:
            if record is not None:
                written = self.output.append(record)
            elif isinstance(line, bytes):
                written = self.output.append_line(line)
            else:
                return
        except OutputWriteError as exc:  # a full disk: stop with one sentence, keep what was written
            if self.pytest_session is not None:
                self.pytest_session.shouldstop = str(exc)
            return
        if self.progress is not None and written is not None:
            self.progress.add(written)

    # -- finish --------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: the gate is a case in it
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.runner is not None:
            self.record_untaken(self.runner.untaken_answers())
        if self.is_worker:
            return
        if self.output is None or self.run is None:
            return
        from pytest_lsrb.engine.stop import StopSignal
        from pytest_lsrb.tools import gate

        wall = (datetime.now(timezone.utc) - self.started).total_seconds()
        self.summary = self.output.finish(wall_time_s=wall)
        if self.output.write_error is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
            return
        StopSignal(self.run.config.output_dir).clear()
        if self.gate is not None:
            self.gate_result, session.exitstatus = gate.finish_session(
                self.gate, self.output.dir, int(session.exitstatus)
            )
            from pytest_lsrb.tools.junit import add_gate_case

            add_gate_case(self.config, self.gate_result)

    def record_untaken(self, records: list[dict[str, Any]]) -> None:
        """Record answers fetched ahead for tests that never ran (a quota stop, -x): the provider
        billed them, so they are kept like any other and a resume does not ask again. A worker
        hands them to the controller with its output when it finishes."""
        if not records:
            return
        if self.is_worker:
            from pytest_lsrb.output.files import record_line

            workeroutput = self.config.workeroutput  # type: ignore[attr-defined]
            workeroutput.setdefault(UNTAKEN_KEY, []).extend(record_line(r)[0] for r in records)
        elif self.output is not None and self.summary is None:
            for record in records:
                self.output.append(record)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: record the answers a worker fetched for tests it never ran."""
        lines = getattr(node, "workeroutput", {}).get(UNTAKEN_KEY) or []
        if self.output is not None:
            for line in lines:
                if isinstance(line, bytes):
                    self.output.append_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: each worker writes under the run directory this controller chose."""
        if self.run is not None:
            node.workerinput[RUN_DIR_KEY] = str(self.run.config.output_dir)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        return deep_load_scheduler(config, log, self.queue_depth)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        stopped = self.pytest_session is not None and self.pytest_session.shouldstop
        if self.output is not None and self.output.write_error is not None and not stopped:
            # (a write refused while tests ran already ended the run with pytest's "Interrupted")
            terminalreporter.write_line(f"lsrb: {self.output.write_error}", red=True, bold=True)
        if self.run is not None and not self.is_worker and self.config.option.collectonly:
            terminalreporter.write_line(planned_calls_line(self.run))
        if self.summary is None:
            return
        from pytest_lsrb.session import terminal
        from pytest_lsrb.tools import gate

        if self.output is not None:
            terminal.write_summary(terminalreporter, self.summary, self.output.dir)
        if self.gate is not None and self.gate.baseline is not None and self.summary is not None:
            from pytest_lsrb.report.compare import write_comparison

            write_comparison(terminalreporter, Path(self.gate.baseline), self.summary)
        if self.gate_result is not None:
            gate.write_terminal(terminalreporter, self.gate_result)

    def pytest_report_header(self, config: pytest.Config) -> list[str] | None:
        run = self.run
        if run is None:
            return None
        v = run.config.values
        return [
            f"lsrb: suite {run.spec.name}, adapter {v['adapter']}, "
            f"{len({c.item_id for c in run.cases})} items x {v['samples']} samples "
            f"(shard {v['shard_index']}/{v['shard_count']}), seed {v['seed']}, "
            f"selected_rows_hash {run.selected_hash[:12]}",
            planned_calls_line(run),
        ]


def planned_calls_line(run: SuiteRun) -> str:
    """How many model calls the run plans (what `--collect-only` tells before spending any)."""
    per_attempt = getattr(run.task, "calls_per_attempt", None)
    calls = int(per_attempt(run.config.values)) if per_attempt is not None else 1
    attempts = len(run.cases)
    bound = "at most " if calls > 1 else ""
    return (
        f"lsrb: {attempts} attempts planned, {bound}{attempts * calls:,} model calls "
        f"({calls:,} per attempt{'; a cached answer costs none' if run.config['cache_dir'] else ''})"
    )


class _SentRecords:
    """xdist worker only: once xdist has sent a report, drop its record (the worker keeps nothing
    it has already handed to the controller)."""

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        report.__dict__.pop(RECORD_ATTR, None)


def case_of(item: pytest.Item) -> Case | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("lsrb_case")
    if isinstance(case, Case):
        return case
    slot = callspec.params.get("lsrb_attempt")
    return slot.case if isinstance(slot, PendingAttempt) else None


class AttemptSetup:
    """Runs the attempt of each directly parametrized `lsrb_attempt` during its test's setup.

    Registered only in sessions that run a suite. The runner comes from the `lsrb_runner`
    fixture: the first test asks for it (so `lsrb_adapter`/`lsrb_verifier` overrides apply), later
    ones reuse it.
    """

    def __init__(self, session: LsrbSession) -> None:
        self.session = session
        self.last: PendingAttempt | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        callspec = getattr(item, "callspec", None)
        slot = callspec.params.get("lsrb_attempt") if callspec is not None else None
        if not isinstance(slot, PendingAttempt) or item.config.option.setupplan:
            return (yield)
        if self.last is not None:
            self.last.attempt = None  # its test is over: keep no finished attempt in memory
        self.last = slot
        if self.session.runner is None and isinstance(item, pytest.Function):
            item.fixturenames = [*item.fixturenames, "lsrb_runner"]  # this item only
        result = yield
        runner = self.session.runner
        if runner is None:
            raise RuntimeError("the lsrb_runner fixture did not run for this test")
        slot.attempt = run_attempt(self.session, item, slot.case, runner)
        return result


def run_attempt(session: LsrbSession, item: pytest.Item, case: Case, runner: Runner) -> Attempt:
    """Run (or resume) `case`'s attempt for `item`'s setup; queue its record for logreport."""
    from pytest_lsrb.engine.runner import RunStopped

    upcoming: list[Case] = []
    if runner.concurrency > 1:
        for other in session.schedule.upcoming(item, runner.lookahead):
            other_case = case_of(other)
            if other_case is not None:
                upcoming.append(other_case)
    try:
        attempt = runner.attempt(case, upcoming)
    except RunStopped as stop:
        item.session.shouldstop = str(stop)
        pytest.skip(str(stop))
    if attempt.record is not None:
        session.pending[item.nodeid] = dict(attempt.record)
        # JUnit XML shows the test's duration as pytest timed it (~0 for an attempt run ahead of
        # its test); the model's own time goes along as a property.
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


def _session(config: pytest.Config) -> LsrbSession:
    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    assert isinstance(plugin, LsrbSession)
    return plugin


# -- hooks -------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session = LsrbSession(config)
    config.pluginmanager.register(session, PLUGIN_NAME)
    # Cleanups run last-in first-out: registered before the other plugins' (tryfirst), this one
    # runs after pytest's own end-of-session garbage collections.
    config.add_cleanup(session.thaw)
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(_SentRecords(), PLUGIN_NAME + "-sent")


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def lsrb_suite_run(pytestconfig: pytest.Config) -> SuiteRun:
    """The current suite's resolved run: config, selection and cases."""
    session = _session(pytestconfig)
    if session.run is None:
        raise pytest.UsageError("no lsrb suite was collected in this session.")
    return session.run


@pytest.fixture(scope="session")
def lsrb_adapter(lsrb_suite_run: SuiteRun) -> Iterator[Adapter]:
    """The model adapter chosen by --lsrb-adapter (override this fixture to plug in your own)."""
    from pytest_lsrb.adapters import create_adapter

    try:
        adapter = create_adapter(lsrb_suite_run.adapter_config())
    except LsrbUsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    yield adapter
    adapter.close()


@pytest.fixture(scope="session")
def lsrb_verifier(lsrb_suite_run: SuiteRun) -> Iterator[Verifier]:
    """The verifier chosen by --lsrb-verification."""
    from pytest_lsrb.engine.verifier import create_verifier

    try:
        verifier = create_verifier(lsrb_suite_run.verifier_config())
    except LsrbUsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    yield verifier
    verifier.close()


@pytest.fixture(scope="session")
def lsrb_runner(
    pytestconfig: pytest.Config,
    lsrb_suite_run: SuiteRun,
    lsrb_adapter: Adapter,
    lsrb_verifier: Verifier,
) -> Iterator[Runner]:
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.engine.stop import StopSignal

    session = _session(pytestconfig)
    concurrency = lsrb_suite_run.config["concurrency"] or lsrb_adapter.default_concurrency
    runner = Runner(
        task=lsrb_suite_run.task,
        adapter=lsrb_adapter,
        verifier=lsrb_verifier,
        config=lsrb_suite_run.config,
        config_hash=lsrb_suite_run.config_hash,
        concurrency=int(concurrency),
        finished=session.finished_judgements(),
        task_options=dict(lsrb_suite_run.config.values),
        stop_signal=StopSignal(lsrb_suite_run.config.output_dir),
    )
    session.runner = runner
    yield runner
    session.runner = None
    session.record_untaken(runner.untaken_answers())
    runner.close()


@pytest.fixture
def lsrb_attempt(request: pytest.FixtureRequest, lsrb_case: Case) -> Attempt:
    """Runs (or resumes) this test's attempt during setup and returns it.

    A suite test that takes `lsrb_attempt` itself gets it as a direct parameter instead (see
    `AttemptSetup`); this fixture serves tests that reach it through another fixture.
    The runner (session-scoped: `lsrb_runner`, built from the `lsrb_adapter` and `lsrb_verifier`
    fixtures) is looked up once and then taken from the session. A function-scoped fixture that
    lists a session-scoped one among its arguments leaves a finalizer on it per test, which pytest
    keeps until the session ends: memory that would grow with every attempt.
    """
    session = _session(request.config)
    lsrb_runner: Runner = session.runner or request.getfixturevalue("lsrb_runner")
    return run_attempt(session, request.node, lsrb_case, lsrb_runner)
