"""The gate in a pytest run: its options checked against the baseline before any model call, and
the verdict after the run (gate.json, the session's exit status)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_lsrb.output.files import write_json_atomic
from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.tools.gate.checks import EXIT_REGRESSION, GateResult
from pytest_lsrb.tools.gate.compare import check_compatible, compare_dirs
from pytest_lsrb.tools.gate.terminal import GATE_FILE
from pytest_lsrb.tools.gate.thresholds import GateConfig, gate_config

if TYPE_CHECKING:
    from pytest_lsrb.engine.options import RunConfig


def preflight(run: RunConfig, suite: str) -> GateConfig | None:
    """The gate's config from a run's options, checked against the baseline before the run.

    None when no gate option is set.
    """
    values = run.values
    config = gate_config(
        values.get("baseline"),
        values.get("max_drop"),
        values.get("min"),
        values.get("alpha"),
        values.get("max"),
        missing=values.get("baseline_missing"),
    )
    if not config.active:
        return None
    if config.baseline_run is not None:
        check_compatible(config, config.baseline_run.head, suite, run.samples, str(config.baseline))
    return config


def finish_session(
    config: GateConfig, output_dir: Path, exitstatus: int, current: RunDir | None = None
) -> tuple[GateResult, int]:
    """Evaluate after the run, write gate.json, and give the session's new exit status.

    `current`: the run as the session holds it (its records taken as they were written), so
    attempts.jsonl is not read back; None reads it. A regression replaces 0 (all passed) or 1
    (some tests failed); interrupted, internal and usage errors keep their own codes.
    """
    result = compare_dirs(config, output_dir, current)
    write_json_atomic(output_dir / GATE_FILE, result.to_json())
    if result.regressed and exitstatus in (0, 1):
        return result, EXIT_REGRESSION
    return result, exitstatus
