"""The controller's side of a run's budgets (`engine.budget`): it opens each session's ledger,
says on the progress line what was spent, and reads back the stop for the run's last line."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_lsrb.engine.plan import SuiteRun

if TYPE_CHECKING:
    from pytest_lsrb.engine.budget import BudgetStop


def open_budget(run: SuiteRun) -> None:
    """A run with a budget (`engine.budget`): open this session's ledger. A new run starts from
    nothing; a resumed one from what its earlier sessions spent (the ledger's, every request in
    flight at a crash counted at its worst case until it is settled: `engine.ledger`), or what its
    records say the requests cost (a run begun without a budget), whichever is more."""
    from pytest_lsrb.engine.budget import Ledger, limits_of

    if not limits_of(run.config.values).any:
        return
    ledger = Ledger(run.config.output_dir)
    at_least = None
    if run.config.resume:
        from pytest_lsrb.output.files import ATTEMPTS_FILE, iter_attempts

        prompt = completion = 0
        path = run.config.output_dir / ATTEMPTS_FILE
        for record in iter_attempts(path) if path.is_file() else ():
            if not record.get("cached"):  # every record, superseded ones too: each was paid for
                prompt += int(record.get("prompt_tokens") or 0)
                completion += int(record.get("completion_tokens") or 0)
        at_least = (prompt, completion)
    ledger.open_session(time.time(), at_least)


def budget_uncounted(run: SuiteRun) -> str | None:
    """A sentence when a cost or token budget could not count some answers (no `usage`)."""
    from pytest_lsrb.engine.budget import Ledger, limits_of

    limits = limits_of(run.config.values)
    if limits.max_cost is None and limits.max_total_tokens is None:
        return None
    unreported = Ledger(run.config.output_dir).read().unreported
    if not unreported:
        return None
    return (
        f"{unreported} answer(s) came without token usage from the server; the run's cost and "
        "token budgets counted nothing for them."
    )


def budget_note_of(run: SuiteRun) -> Callable[[], str | None] | None:
    """What the progress line says of the run's budgets (read from the ledger when shown)."""
    from pytest_lsrb.engine.budget import Ledger, SessionClock, budget_note, limits_of

    limits = limits_of(run.config.values)
    if not limits.any:
        return None
    ledger, clock = Ledger(run.config.output_dir), SessionClock()
    return lambda: budget_note(limits, ledger.read(), clock)


def budget_stop(run: SuiteRun) -> BudgetStop | None:
    """The budget that stopped this session of the run, if one did, with what was spent when
    every request in flight then had settled."""
    from pytest_lsrb.engine.budget import BudgetStop, Ledger, limits_of, settled_stop

    limits = limits_of(run.config.values)
    if not limits.any:
        return None
    spent = Ledger(run.config.output_dir).read()
    return settled_stop(BudgetStop.from_json(spent.stopped), limits, spent)
