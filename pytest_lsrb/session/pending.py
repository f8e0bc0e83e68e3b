"""What a suite's test receives as `lsrb_attempt`: a slot the plugin fills during the test's setup.

A suite's test function takes `lsrb_attempt`; the plugin parametrizes that argument directly with
one `PendingAttempt` per case, and runs the attempt from a `pytest_runtest_setup` hook (so an
infrastructure failure still errors the test). A function-scoped fixture would cost pytest's whole
fixture machinery per test, and a `request` argument alone ~50 us per test; a direct parameter
costs what any parametrized test costs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_lsrb.core.selection import Case, SelectableRow
    from pytest_lsrb.engine.runner import Attempt


class PendingAttempt:
    """A case, and its `Attempt` once the test's setup has run it; reads like the `Attempt`."""

    __slots__ = ("attempt", "case")

    def __init__(self, case: Case[SelectableRow]) -> None:
        self.case = case
        self.attempt: Attempt | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in self.__slots__:  # copy/pickle probes, unset slots
            raise AttributeError(name)
        attempt = self.attempt
        if attempt is None:
            raise AttributeError(
                f"the attempt of {self.case.test_id} has not run (it runs during the test's setup)"
            )
        return getattr(attempt, name)

    def __repr__(self) -> str:
        return f"PendingAttempt({self.case.test_id})"
