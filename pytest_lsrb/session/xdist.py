"""The xdist glue: what the controller and its workers hand each other.

- controller -> worker (workerinput): the run directory the controller chose, so every process
  writes under one run.
- worker -> controller, per test (on the test report): the attempt's record, as the bytes of its
  attempts.jsonl line.
- worker -> controller, at the end (workeroutput): record lines of answers fetched ahead for
  tests the worker never ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_lsrb.engine.records import AttemptDict

RECORD_ATTR = "lsrb_record"
RUN_DIR_KEY = "lsrb_run_dir"  # workerinput: the run directory the controller chose
UNTAKEN_KEY = "lsrb_untaken"  # workeroutput: record lines of answers fetched for tests never run


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def given_run_dir(config: pytest.Config) -> Path | None:
    """Worker: the run directory its controller chose (None in the controller or without xdist)."""
    workerinput = getattr(config, "workerinput", {})
    return Path(workerinput[RUN_DIR_KEY]) if RUN_DIR_KEY in workerinput else None


def give_run_dir(node: Any, run_dir: Path) -> None:
    """Controller: tell a worker about to start where the run writes."""
    node.workerinput[RUN_DIR_KEY] = str(run_dir)


def put_record(report: pytest.TestReport, record: AttemptDict) -> None:
    """Worker: put `record` on the report xdist is about to send to the controller."""
    from pytest_lsrb.output.files import record_line

    # Sent as the bytes of its attempts.jsonl line: one item for execnet to carry instead of a
    # dict of dozens, and valid UTF-8 whatever the model wrote (execnet cannot send a str
    # holding a lone surrogate).
    setattr(report, RECORD_ATTR, record_line(record)[0])


def take_record(report: pytest.TestReport) -> Any:
    """Take the record line a worker sent on `report` off it (None when it carries none)."""
    return report.__dict__.pop(RECORD_ATTR, None)


def send_untaken(config: pytest.Config, records: list[AttemptDict]) -> None:
    """Worker: hand the records of answers fetched for tests never run on with its output."""
    from pytest_lsrb.output.files import record_line

    workeroutput = config.workeroutput  # type: ignore[attr-defined]
    workeroutput.setdefault(UNTAKEN_KEY, []).extend(record_line(r)[0] for r in records)


def untaken_lines(node: Any) -> list[bytes]:
    """Controller: the record lines a finished worker sent with its output."""
    lines = getattr(node, "workeroutput", {}).get(UNTAKEN_KEY) or []
    return [line for line in lines if isinstance(line, bytes)]
