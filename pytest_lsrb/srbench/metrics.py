"""llm_srbench's own gateable metrics, declared here and registered as entry points of
`pytest_lsrb.metrics` (pyproject.toml), as a lab's package registers one: the engine names them
nowhere. The median NMSE over judged attempts, in-domain and OOD, for `--lsrb-max`,
`--lsrb-max-drop` and `lsrb compare` (computed from the records: summary.json's own NMSE figures
are Table 1's, per problem set and domain, `srbench_table`)."""

from __future__ import annotations

from typing import Final

from pytest_lsrb.engine.metric_declaration import Metric
from pytest_lsrb.engine.outcomes import Record, judged
from pytest_lsrb.srbench.option_table import TASK_NAME


def _nmse_id(record: Record) -> float | None:
    return _number(record, "nmse_id")


def _nmse_ood(record: Record) -> float | None:
    return _number(record, "nmse_ood")


def _number(record: Record, name: str) -> float | None:
    value = record.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


MEDIAN_NMSE_ID: Final = Metric(
    "median_nmse_id", "median NMSE (ID)", "lower", "number", "median", judged, _nmse_id,
    in_summary=False, tasks=(TASK_NAME,),
)  # fmt: skip
MEDIAN_NMSE_OOD: Final = Metric(
    "median_nmse_ood", "median NMSE (OOD)", "lower", "number", "median", judged, _nmse_ood,
    in_summary=False, tasks=(TASK_NAME,),
)  # fmt: skip
