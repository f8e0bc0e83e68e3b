"""The runner's thread pool: attempts in flight within the concurrency, and a stop that holds.

The model is a scripted in-process adapter (the edge); the runner, task and verifier are real.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, GenerationResult
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.records import strip_timing
from pytest_lsrb.engine.runner import Runner, RunStopped
from pytest_lsrb.engine.stop import StopSignal
from pytest_lsrb.engine.verifier import VerifierConfig, create_verifier
from pytest_lsrb.session.prepare import prepare_suite_run

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"


class ScriptedModel(Adapter):
    """Answers after `delay_s`; refuses with `refuse_kind` for the seeds in `refuse`."""

    name = "scripted"
    model = "scripted-1"
    default_concurrency = 4

    def __init__(
        self, delay_s: float = 0.05, refuse: frozenset[int] = frozenset(), refuse_kind: str = "quota"
    ) -> None:
        self.delay_s = delay_s
        self.refuse = refuse
        self.refuse_kind = refuse_kind
        self.calls: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.gate = threading.Event()
        self.gate.set()
        self._lock = threading.Lock()

    def check(self) -> None:
        return None

    def generate(self, request: GenerationRequest) -> GenerationResult:
        with self._lock:
            self.calls.append(request.seed)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self.gate.wait(10)
            time.sleep(self.delay_s)
            if request.seed in self.refuse:
                return GenerationResult.failure(self.refuse_kind, "HTTP 429: insufficient_quota", 1.0)
            return GenerationResult(text="simp", latency_ms=self.delay_s * 1000)
        finally:
            with self._lock:
                self.in_flight -= 1

    def identity(self) -> Mapping[str, Any]:
        return {"adapter": self.name, "model": self.model}

    def close(self) -> None:
        return None


@pytest.fixture(scope="module")
def suite_run() -> SuiteRun:
    options = {"lsrb_samples": "3", "lsrb_max_items": "10"}
    return prepare_suite_run(SUITE, lambda name: options.get(name), REPO)


@pytest.fixture
def make_runner(suite_run: SuiteRun, tmp_path: Path) -> Iterator[Any]:
    runners: list[Runner] = []

    def make(model: ScriptedModel, concurrency: int, signal_dir: Path | None = None) -> Runner:
        runner = Runner(
            task=suite_run.task,
            adapter=model,
            verifier=create_verifier(suite_run.verifier_config()),
            config=suite_run.config,
            config_hash=suite_run.config_hash,
            concurrency=concurrency,
            task_options=dict(suite_run.config.values),
            stop_signal=StopSignal(signal_dir or tmp_path),
        )
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()
        runner.verifier.close()  # (made here, closed here: the runner closes neither part)


def run_all(runner: Runner, cases: list[Any]) -> list[Any]:
    """What pytest does: each test in order, telling the runner what comes next."""
    out = []
    for i, case in enumerate(cases):
        out.append(runner.attempt(case, cases[i + 1 : i + 1 + runner.ahead(case)]))
    return out


class InstantModel(ScriptedModel):
    """Answers at once and the same whenever asked, and says so (`adapters.base.runs_ahead`)."""

    runs_ahead = 4
    default_concurrency = 1

    def __init__(self) -> None:
        super().__init__(delay_s=0.0)


def test_an_instant_adapter_makes_attempts_in_batches_the_same_records(
    make_runner: Any, suite_run: SuiteRun
) -> None:
    model = InstantModel()
    runner = make_runner(model, concurrency=1)
    assert runner.batch == 4 and runner.lookahead == 0
    cases = suite_run.cases
    calls_after = []
    attempts = []
    for i, case in enumerate(cases[:9]):
        attempts.append(runner.attempt(case, cases[i + 1 : i + 1 + runner.ahead(case)]))
        calls_after.append(len(model.calls))
    assert calls_after == [4, 4, 4, 4, 8, 8, 8, 8, 12]  # each test's attempt made with the next three
    assert model.max_in_flight == 1  # on this thread, one after another

    one_at_a_time = ScriptedModel(delay_s=0.0)  # (no runs_ahead: each attempt when its test runs)
    plain = make_runner(one_at_a_time, concurrency=1)
    assert plain.batch == 0
    expected = run_all(plain, cases[:9])
    assert [strip_timing(a.record) for a in attempts] == [strip_timing(a.record) for a in expected]


def test_attempts_made_ahead_are_not_recorded_when_their_tests_never_run(
    make_runner: Any, suite_run: SuiteRun
) -> None:
    runner = make_runner(InstantModel(), concurrency=1)
    cases = suite_run.cases
    runner.attempt(cases[0], cases[1:4])
    # (-x, Ctrl-C: the tests of cases 1-3 never run) made ahead for free, made again on resume
    assert runner.untaken_answers() == []
    assert runner.ahead(cases[1]) == 3  # nothing is kept ready any more


def test_batches_only_where_an_attempt_costs_nothing(make_runner: Any, suite_run: SuiteRun) -> None:
    assert make_runner(InstantModel(), concurrency=2).batch == 0  # threads instead
    checked = Runner(
        task=suite_run.task,
        adapter=InstantModel(),
        verifier=create_verifier(VerifierConfig(mode="synthetic", suite_root=str(SUITE))),
        config=suite_run.config,
        config_hash=suite_run.config_hash,
        concurrency=1,
        task_options=dict(suite_run.config.values),
    )
    try:
        assert checked.batch == 0  # a checker runs for every answer
    finally:
        checked.close()
        checked.verifier.close()


def test_attempts_overlap_but_never_exceed_the_concurrency(make_runner: Any, suite_run: SuiteRun) -> None:
    model = ScriptedModel(delay_s=0.05)
    runner = make_runner(model, concurrency=4)
    attempts = run_all(runner, suite_run.cases)
    assert len(attempts) == len(suite_run.cases) == 30
    assert sorted(model.calls) == sorted(c.attempt_seed for c in suite_run.cases)  # each exactly once
    assert 1 < model.max_in_flight <= 4 + 1  # pool, plus the first test run inline
    assert [a.record["attempt_seed"] for a in attempts] == [c.attempt_seed for c in suite_run.cases]


def test_without_concurrency_there_are_no_threads(make_runner: Any, suite_run: SuiteRun) -> None:
    model = ScriptedModel(delay_s=0.0)
    runner = make_runner(model, concurrency=1)
    assert runner.lookahead == 0
    run_all(runner, suite_run.cases[:5])
    assert model.max_in_flight == 1


def test_a_quota_refusal_cancels_queued_attempts_and_stops_the_rest(
    make_runner: Any, suite_run: SuiteRun, tmp_path: Path
) -> None:
    cases = suite_run.cases
    model = ScriptedModel(delay_s=0.02, refuse=frozenset({cases[2].attempt_seed}))
    runner = make_runner(model, concurrency=2)
    done = []
    with pytest.raises(RunStopped, match="refused with 'quota'") as stopped:
        for i, case in enumerate(cases):
            done.append(runner.attempt(case, cases[i + 1 : i + 1 + runner.lookahead]))
    # The refusal came on the third case; only what was already running finished after it.
    assert len(model.calls) <= 3 + 2 + 1
    assert len(done) < len(cases)
    assert "every later call would fail the same way" in str(stopped.value)
    # and every other worker of the run is told
    assert StopSignal(tmp_path).message() == runner.fatal


def test_a_stop_raised_by_another_worker_stops_this_one(
    make_runner: Any, suite_run: SuiteRun, tmp_path: Path
) -> None:
    cases = suite_run.cases
    model = ScriptedModel(delay_s=0.0)
    runner = make_runner(model, concurrency=2)
    model.gate.clear()  # hold the first attempts while the other worker stops the run
    first = threading.Thread(target=runner.attempt, args=(cases[0], cases[1:5]))
    first.start()
    while model.in_flight < 2:
        time.sleep(0.005)
    StopSignal(tmp_path).raise_stop("stopping the run: the endpoint refused with 'auth' (401).")
    assert runner.fatal is not None and "'auth'" in runner.fatal  # queued attempts are cancelled now
    model.gate.set()
    first.join(10)
    calls_at_stop = len(model.calls)
    with pytest.raises(RunStopped, match="'auth'"):
        for case in cases[1:]:
            runner.attempt(case, [])
    # Attempts already running finish and are kept; nothing new is sent.
    assert len(model.calls) == calls_at_stop <= 3


def test_records_finished_before_the_stop_are_still_returned(
    make_runner: Any, suite_run: SuiteRun, tmp_path: Path
) -> None:
    cases = suite_run.cases
    model = ScriptedModel(delay_s=0.0)
    runner = make_runner(model, concurrency=2)
    runner.attempt(cases[0], cases[1:3])
    prefetched = list(runner._futures.values())
    assert len(prefetched) == 2
    for future in prefetched:
        future.result(timeout=10)  # the attempts for cases 1 and 2 have finished
    StopSignal(tmp_path).raise_stop("stopping the run: quota.")
    assert runner.attempt(cases[1]).record is not None
    assert runner.attempt(cases[2]).record is not None
    with pytest.raises(RunStopped):
        runner.attempt(cases[3])
    assert len(model.calls) == 3
