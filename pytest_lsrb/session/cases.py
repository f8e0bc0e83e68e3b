"""Cases as pytest tests: one parametrized test per case, and the case behind a test item
(`LsrbSession.run_attempt` runs a case's attempt during its test's setup)."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import pytest

from pytest_lsrb.core.selection import Case, SelectableRow
from pytest_lsrb.session.pending import PendingAttempt

if TYPE_CHECKING:
    from pytest_lsrb.engine.plan import SuiteRun


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


def keys_of_nodeids(
    cases: Sequence[Case[SelectableRow]], nodeids: Iterable[str]
) -> set[tuple[str, int]] | None:
    """The case keys of the tests `nodeids` name (an xdist worker's collection, after `-k`/`-m`);
    None when one of them is not a case's test as `parametrize` named it (then the whole run is
    taken as the selection, as before: never a key guessed)."""
    by_id = {case.test_id: case.key for case in cases}
    keys: set[tuple[str, int]] = set()
    for nodeid in nodeids:
        start = nodeid.find("[")
        key = by_id.get(nodeid[start + 1 : -1]) if start >= 0 and nodeid.endswith("]") else None
        if key is None:
            return None
        keys.add(key)
    return keys


def case_of(item: pytest.Item) -> Case[SelectableRow] | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("lsrb_case")
    if isinstance(case, Case):
        return case
    slot = callspec.params.get("lsrb_attempt")
    return slot.case if isinstance(slot, PendingAttempt) else None
