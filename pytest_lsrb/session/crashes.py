"""A test whose xdist worker crashed: its outcome follows its record when the record is there.

A worker appends a test's record before the test's report is even made (`session.cases`), so
a worker that dies after that point (in the test's call or teardown, or with its reports still
in an unsent batch) leaves a finished attempt behind. xdist reports the test it blames as
failed ("worker 'gw0' crashed while running ..."), which would count a passed answer as a
failure and make the run exit 1. The controller reads the record instead and reports what a
resumed run would report for it (`engine.outcomes.judgement` under the run's outcome policy).

Without a record (the worker died in the attempt: a segfault, the OOM killer, a kill), the
machine failed, not the model: the test is an error with the environment as its cause
(`no_record`), never a failure, so neither the terminal's counts, JUnit nor the exit status
read it as a wrong answer; the run is unfinished, and `--lsrb-resume` runs its attempt again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_lsrb.engine.outcomes import judgement
from pytest_lsrb.engine.records import record_key
from pytest_lsrb.engine.task import record_type_of
from pytest_lsrb.output.files import ATTEMPTS_FILE
from pytest_lsrb.output.reader import latest_records

if TYPE_CHECKING:
    from pytest_lsrb.engine.plan import SuiteRun
    from pytest_lsrb.engine.task import Judgement


def case_key(run: SuiteRun, nodeid: str, escape: Any = None) -> tuple[str, int] | None:
    """The (item_id, sample_index) of the test `nodeid` (its id `<item_id>#s<k>`, escaped as
    pytest escapes ids when `escape` is given), or None when it is no case of this run."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return None
    param = nodeid[nodeid.index("[", nodeid.rfind("::") + 1) + 1 : -1]
    for case in run.cases:  # only after a crash: one pass over the cases
        test_id = case.test_id
        if (escape(test_id) if escape is not None else test_id) == param:
            return case.key
    return None


def recorded_judgement(run: SuiteRun, key: tuple[str, int]) -> Judgement | None:
    """The judgement of the last record of `key` this run wrote, or None."""
    found = None
    for record in latest_records(run.config.output_dir / ATTEMPTS_FILE, record_type=record_type_of(run.task)):
        if record_key(record) == key and record.get("config_hash") == run.config_hash:
            found = record
    return None if found is None else judgement(run.task, found)


def no_record(report: Any, worker: str) -> None:
    """Make xdist's crash report of a test whose attempt left no record an error of the
    environment (pytest's error: a failure outside the test's call)."""
    crash = str(report.longrepr or "").strip().splitlines()
    said = f" (xdist: {crash[0][:200]})" if crash else ""
    report.outcome, report.when = "failed", "setup"
    report.longrepr = (
        f"infrastructure error: environment: the xdist worker {worker} running this test died before "
        f"its attempt was recorded (a segfault, the OOM killer, a kill){said}; not the model's "
        "answer: --lsrb-resume runs the attempt again"
    )


def follow_record(report: Any, verdict: Judgement, policy: str, worker: str) -> None:
    """Make xdist's crash report of a test say what its record says (and in the phase pytest
    would have said it: a skip or an infrastructure error in setup, a verdict in the call)."""
    note = f"(worker {worker} crashed after the attempt was recorded)"
    outcome = verdict.outcome
    if outcome == "fail" and policy == "record":
        outcome = "pass"
    if outcome == "pass":
        report.outcome, report.when, report.longrepr = "passed", "call", None
    elif outcome == "skip":
        path, line = str(report.location[0]), report.location[1] or 0
        report.outcome, report.when = "skipped", "setup"
        report.longrepr = (path, line, f"Skipped: {verdict.message} {note}")
    elif outcome == "error":  # pytest's error: a failure outside the test's call
        report.outcome, report.when = "failed", "setup"
        report.longrepr = f"infrastructure error: {verdict.message} {note}"
    else:
        report.outcome, report.when = "failed", "call"
        report.longrepr = f"{verdict.message} {note}"
