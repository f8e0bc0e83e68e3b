"""Metric `mean_abs_error`: how far the number the model chose is from the right one, over the
judged attempts that chose one (lower is better). Declared once here and named by an entry point
of `pytest_lsrb.metrics`: summary.json, the gate (`--lsrb-max mean_abs_error=5`), `lsrb compare`,
the terminal, the report and `lsrb list` all know it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_lsrb import Metric, judged


def abs_error(record: Mapping[str, Any]) -> float | None:
    """The record's `abs_error` (the task writes it); None where the answer chose no number."""
    value = record.get("abs_error")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


MEAN_ABS_ERROR = Metric(
    key="mean_abs_error",
    label="mean absolute error",
    direction="lower",
    kind="number",
    aggregation="mean",
    population=judged,
    per_record=abs_error,
    tasks=("mcmath",),  # only this family's runs have it
)
