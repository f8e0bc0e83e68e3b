"""The pytest plugin's face: its hooks and fixtures. What they do lives in `session/`.

Flow (see DESIGN.md, "The spine"):
- sessionstart: find the suite named by the command line, validate its rows and options, select,
  shard and expand into cases (`session.prepare`). On the controller, also prepare the output
  directory. Every user mistake surfaces here as one sentence, before any model is called.
- collection: `lsrb_case` is parametrized with this shard's cases; ids are `<item_id>#s<k>`; each
  item's repo name, path and tags become keywords for `-k`.
- each test: the `lsrb_attempt` fixture runs (or resumes) the attempt in setup, so an
  infrastructure failure errors the test; the test body judges the answer, so a wrong answer fails.
- the record goes to attempts.jsonl as soon as the setup has run the attempt, before the test's
  report is made: appended by the process that ran the test (under xdist each worker appends its
  own, `session.xdist`; the controller follows the file); sessionfinish writes summary.json.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# This module is loaded in every pytest session of everyone who installs the package, so its
# module-level imports stay light: the session and the engine are imported when pytest is
# configured (a mistyped option or a bad value is refused before that, in well under a second).
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.option_table import add_options

if TYPE_CHECKING:
    from pytest_lsrb.adapters.base import Adapter
    from pytest_lsrb.core.selection import Case, SelectableRow
    from pytest_lsrb.engine.plan import SuiteRun
    from pytest_lsrb.engine.runner import Attempt, Runner
    from pytest_lsrb.engine.verifier import Verifier
    from pytest_lsrb.session.base import LsrbSession
    from pytest_lsrb.session.controller import ControllerSession
    from pytest_lsrb.session.pending import PendingAttempt

PLUGIN_NAME = "lsrb-session"  # the per-process LsrbSession is registered under this name


class SessionHooks:
    """The hooks of one process's session, each handing its work to that process's `LsrbSession`
    (an xdist worker's `WorkerSession`; the controller's `ControllerSession` has `ControllerHooks`).

    Registered per process in `pytest_configure` beside the state (not as module-level hooks), so
    their order among other plugins' hooks (xdist's, junitxml's) is the one the run relies on.
    """

    def __init__(self, state: LsrbSession) -> None:
        self.state = state

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        with self.state.heap.paused():  # preparing makes rows and cases, no garbage (session.heap)
            self.start(session)

    def start(self, session: pytest.Session) -> None:
        from pytest_lsrb.session import egress

        run = self.state.begin(session)
        if run is None:
            return
        session.config.pluginmanager.register(AttemptSetup(self.state), PLUGIN_NAME + "-setup")
        session.config.pluginmanager.register(egress.Egress(), PLUGIN_NAME + "-egress")
        self.state.start(run)  # (its warnings about short keys are printed unmasked)
        egress.guard_terminal(session.config)
        self.state.heap.freeze()  # the rows and cases live until the session ends (session.heap)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        if self.state.run is None:
            return (yield)
        with self.state.heap.paused():  # collecting makes test items, no garbage (session.heap)
            return (yield)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "lsrb_case" not in metafunc.fixturenames:
            return
        from pytest_lsrb.session import cases

        cases.parametrize(metafunc, self.state.suite_run_for(Path(str(metafunc.definition.path))))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # tryfirst: keywords must exist before `-k` deselects.
        self.state.add_row_keywords(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.state.collected(session)

    def pytest_runtest_logfinish(self) -> None:
        self.state.heap.test_finished()

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: the gate is a case in it
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.state.finish(session)

    def pytest_report_header(self, config: pytest.Config) -> list[str] | None:
        if self.state.run is None:
            return None
        from pytest_lsrb.session.terminal import header_lines

        return header_lines(self.state.run)


class ControllerHooks(SessionHooks):
    """The controller's hooks besides the common ones: xdist's about its workers, each report,
    and the end-of-run terminal summary."""

    def __init__(self, state: ControllerSession) -> None:
        super().__init__(state)
        self.state: ControllerSession = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.state.node_collected(ids)

    @pytest.hookimpl(trylast=True)  # after the terminal reporter took the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.state.report_made(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.state.worker_down(node, error)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        self.state.crashed_test(crashitem, report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: each worker writes under the run directory this controller chose."""
        self.state.node_configured(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        from pytest_lsrb.session.seams import fastpath
        from pytest_lsrb.session.seams.scheduling import deep_load_scheduler

        if not fastpath(config):
            return None  # xdist's own scheduler
        return deep_load_scheduler(config, log, self.state.queue_depth)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.state.write_terminal_summary(terminalreporter)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.state.write_next_step()  # after pytest's last line (its stats line, an interruption)


class AttemptSetup:
    """Runs the attempt of each directly parametrized `lsrb_attempt` during its test's setup.

    Registered only in sessions that run a suite. The runner comes from the `lsrb_runner`
    fixture: the first test asks for it (so `lsrb_adapter`/`lsrb_verifier` overrides apply), later
    ones reuse it.
    """

    def __init__(self, session: LsrbSession) -> None:
        from pytest_lsrb.session.pending import PendingAttempt
        from pytest_lsrb.session.seams import fastpath
        from pytest_lsrb.session.seams.reports import release_item

        self.session = session
        self.last: PendingAttempt | None = None
        self.fastpath = fastpath(session.config)  # else pytest's leftovers on items stay
        self.pending = PendingAttempt  # (this module imports nothing of the session's itself)
        self.release_item = release_item

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        try:
            return (yield)
        finally:
            if self.fastpath:  # a serial run holds every item: keep no test's leftovers on it
                self.release_item(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        callspec = getattr(item, "callspec", None)
        slot = callspec.params.get("lsrb_attempt") if callspec is not None else None
        if not isinstance(slot, self.pending) or item.config.option.setupplan:
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
        slot.attempt = self.session.run_attempt(item, slot.case, runner)
        return result


def _session(config: pytest.Config) -> LsrbSession:
    from pytest_lsrb.session.base import LsrbSession

    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    assert isinstance(plugin, LsrbSession)
    return plugin


# -- hooks -------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    from pytest_lsrb.engine.option_sets import registered_sets

    add_options(parser, registered_sets())


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """A mistyped `--lsrb-*` option is one sentence with the closest spelling, before pytest's
    bare "unrecognized arguments" (pytest calls this hook after registering the options and
    before it refuses the unknown ones)."""
    from pytest_lsrb.engine.option_sets import every_option, unknown_flag
    from pytest_lsrb.tools.lineup import MODELS_FLAG

    if any(a == MODELS_FLAG or a.startswith(MODELS_FLAG + "=") for a in args):
        raise pytest.UsageError(
            f"{MODELS_FLAG} is `lsrb run`'s (one run per model, then a comparison); one pytest run "
            "evaluates one model: `lsrb run SUITE --lsrb-models FILE`."
        )
    said = unknown_flag(args, [o.flag_name for o in every_option()])
    if said is not None:
        raise pytest.UsageError(said)


def refuse_several_models(args: Sequence[str]) -> None:
    """pytest runs one model: a second `--lsrb-model` would silently replace the first."""
    from pytest_lsrb.tools.lineup import MODEL_FLAG, model_values

    given = model_values(args)
    if len(given) > 1:
        raise pytest.UsageError(
            f"{MODEL_FLAG} is given {len(given)} times; one pytest run evaluates one model: "
            f"`lsrb run SUITE {MODEL_FLAG} a {MODEL_FLAG} b …` runs one run per model and compares them."
        )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    from pytest_lsrb.session import xdist
    from pytest_lsrb.session.controller import ControllerSession
    from pytest_lsrb.session.worker import WorkerSession

    session: LsrbSession
    hooks: SessionHooks
    if config.getoption("lsrb_dry_run", None):
        config.option.collectonly = True  # plan, measure one call (`session.dryrun`), run nothing
    if xdist.is_worker(config):
        session = WorkerSession(config)
        hooks = SessionHooks(session)
    else:
        refuse_several_models(config.invocation_params.args)
        session = controller = ControllerSession(config)
        hooks = ControllerHooks(controller)
    config.pluginmanager.register(session, PLUGIN_NAME)
    config.pluginmanager.register(hooks, PLUGIN_NAME + "-hooks")
    # Cleanups run last-in first-out: registered before the other plugins' (tryfirst), this one
    # runs after pytest's own end-of-session garbage collections.
    config.add_cleanup(session.heap.thaw)


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
    if lsrb_suite_run.keeps_rounds:  # a crash mid-attempt loses no paid answer (adapters.cache)
        from pytest_lsrb.adapters.cache import keep_rounds

        config = lsrb_suite_run.config
        adapter = keep_rounds(adapter, config.output_dir, config.values["cache_journal"])
    yield adapter
    adapter.close()


@pytest.fixture(scope="session")
def lsrb_verifier(lsrb_suite_run: SuiteRun) -> Iterator[Verifier[SelectableRow]]:
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
    lsrb_verifier: Verifier[SelectableRow],
) -> Iterator[Runner]:
    from pytest_lsrb.adapters.base import in_flight
    from pytest_lsrb.engine.budget import guard_for
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.engine.stop import StopSignal
    from pytest_lsrb.session.overrides import adapter_fingerprint

    session = _session(pytestconfig)
    concurrency = in_flight(lsrb_adapter, lsrb_suite_run.config.concurrency)
    extra = lsrb_suite_run.config.extra_identity
    custom = "adapter_source_sha256" in extra  # a user's own lsrb_adapter
    fields = adapter_fingerprint(lsrb_adapter) if custom else None
    if fields is not None and "adapter_settings_sha256" in extra:  # the run is named by its adapter
        said = (extra["adapter"], extra["adapter_settings_sha256"])
        if (fields["adapter_class"], fields["adapter_settings_sha256"]) != said:
            raise pytest.UsageError(
                f"{extra['adapter_fixture']} gave the tests a {fields['adapter_class']} whose settings "
                f"hash {fields['adapter_settings_sha256'][:12]}, but the run is named by the "
                f"{said[0]} with settings hash {said[1][:12]} it gave before the run started; the "
                "fixture must make the same adapter each time (identity() naming its settings)."
            )
    runner = Runner(
        task=lsrb_suite_run.task,
        adapter=lsrb_adapter,
        verifier=lsrb_verifier,
        config=lsrb_suite_run.config,
        config_hash=lsrb_suite_run.config_hash,
        concurrency=concurrency,
        finished=session.finished_judgements(),
        task_options=dict(lsrb_suite_run.config.values),
        # The run-wide stop file is how xdist workers tell each other; a serial run's one runner
        # stops itself, and need not look for the file before every attempt.
        stop_signal=StopSignal(lsrb_suite_run.config.output_dir) if session.is_worker else None,
        adapter_fields=fields,
        # --lsrb-max-cost/-total-tokens/-wall-time: one ledger in the run's directory for every process
        budget=guard_for(lsrb_suite_run.config.values, lsrb_suite_run.config.output_dir),
        watches=session.watches,  # attempts of several calls, watched while they run
        # a server down for the retry time stops the run in every process (adapters.outage)
        outage_dir=lsrb_suite_run.config.output_dir,
    )
    session.runner = runner
    yield runner
    session.runner = None
    session.record_untaken(runner.untaken_answers())
    runner.close()


@pytest.fixture
def lsrb_attempt(request: pytest.FixtureRequest, lsrb_case: Case[SelectableRow]) -> Attempt:
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
    return session.run_attempt(request.node, lsrb_case, lsrb_runner)
