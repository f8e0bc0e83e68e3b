"""Cases as pytest tests: one parametrized test per case, the case behind a test item, and
running a case's attempt during its test's setup."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import pytest

from pytest_lsrb.core.selection import Case, SelectableRow
from pytest_lsrb.session.pending import PendingAttempt

if TYPE_CHECKING:
    from pytest_lsrb.engine.plan import SuiteRun
    from pytest_lsrb.engine.runner import Attempt, Runner
    from pytest_lsrb.session.state import LsrbSession


def parametrize(metafunc: pytest.Metafunc, run: SuiteRun) -> None:
    """One test per case, id `<item_id>#s<k>`."""
    ids = [c.test_id for c in run.cases]
    direct = set(inspect.signature(metafunc.function).parameters)
    if "lsrb_attempt" not in direct:  # only reached through another fixture: the fixture path
        metafunc.parametrize("lsrb_case", run.cases, ids=ids)
    elif "lsrb_case" in direct:
        slots = [(c, PendingAttempt(c)) for c in run.cases]
        metafunc.parametrize(("lsrb_case", "lsrb_attempt"), slots, ids=ids)
    else:  # the usual suite test: its attempt runs in AttemptSetup, no fixture per test
        metafunc.parametrize("lsrb_attempt", [PendingAttempt(c) for c in run.cases], ids=ids)


def case_of(item: pytest.Item) -> Case[SelectableRow] | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("lsrb_case")
    if isinstance(case, Case):
        return case
    slot = callspec.params.get("lsrb_attempt")
    return slot.case if isinstance(slot, PendingAttempt) else None


def run_attempt(
    session: LsrbSession, item: pytest.Item, case: Case[SelectableRow], runner: Runner
) -> Attempt:
    """Run (or resume) `case`'s attempt for `item`'s setup and append its record (before the test
    is judged: a skip or an infrastructure error keeps its record too)."""
    upcoming: list[Case[SelectableRow]] = []
    ahead = runner.ahead(case)
    if ahead:
        for other in session.schedule.upcoming(item, ahead):
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
        session.keep(attempt.record)
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
