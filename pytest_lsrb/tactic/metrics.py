"""The Lean tactic family's own metric, declared here and registered as an entry point of
`pytest_lsrb.metrics` (pyproject.toml), as a lab's package registers one: the engine names it
nowhere, and summary.json, the gate, `lsrb compare`, the terminal and the report read it from the
one metric table (`engine.metric`)."""

from __future__ import annotations

from typing import Final

from pytest_lsrb.engine.metric_declaration import Metric
from pytest_lsrb.engine.outcomes import Record, answered
from pytest_lsrb.tactic.options import TASK_NAME


def _contains_sorry(record: Record) -> bool:
    return bool(record.get("contains_sorry"))


# Of the answered attempts, those whose answer holds sorry/admit/native_decide (`tactic.guard`).
CONTAINS_SORRY_RATE: Final = Metric(
    "contains_sorry_rate",
    "contains sorry rate",
    "lower",
    "rate",
    "rate",
    answered,
    _contains_sorry,
    tasks=(TASK_NAME,),
)
