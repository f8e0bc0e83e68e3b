"""The gate's thresholds and options: `max-drop METRIC=X`, `min METRIC=X`, the baseline, alpha."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.outcomes import Metric, resolve_metric
from pytest_lsrb.output.reader import RunDir, read_run
from pytest_lsrb.output.runs import follow_latest

DEFAULT_ALPHA: Final = 0.05
DEFAULT_MAX_DROP: Final = "pass_at_1=0"


@dataclass(frozen=True)
class Threshold:
    metric: Metric
    kind: Literal["max_drop", "min"]
    value: float

    @property
    def label(self) -> str:
        return f"{'max drop' if self.kind == 'max_drop' else 'min'} {self.value:g}"


def parse_thresholds(text: str | None, kind: Literal["max_drop", "min"], option: str) -> list[Threshold]:
    """`pass_at_1=0.02,valid_rate=0.05` -> thresholds; one sentence for a bad one."""
    out: list[Threshold] = []
    for part in (p.strip() for p in (text or "").split(",") if p.strip()):
        name, sep, value = part.rpartition("=")
        if not sep or not name:
            raise LsrbUsageError(f"{option}: '{part}' should read METRIC=NUMBER, e.g. pass_at_1=0.02.")
        try:
            number = float(value)
        except ValueError:
            raise LsrbUsageError(f"{option}: '{value}' in '{part}' is not a number.") from None
        if kind == "max_drop" and not 0.0 <= number <= 1.0:
            raise LsrbUsageError(f"{option}: the allowed drop in '{part}' must be in [0, 1].")
        try:
            metric = resolve_metric(name)
        except LsrbUsageError as exc:
            raise LsrbUsageError(f"{option}: {exc}") from None
        out.append(Threshold(metric, kind, number))
    return out


@dataclass(frozen=True)
class GateConfig:
    baseline: Path | None
    thresholds: tuple[Threshold, ...]
    alpha: float = DEFAULT_ALPHA
    # The baseline as read when the options were checked: read once, used by every later step.
    baseline_run: RunDir | None = field(default=None, compare=False, repr=False)

    @property
    def active(self) -> bool:
        return bool(self.thresholds)


def gate_config(
    baseline: str | None,
    max_drop: str | None,
    minimum: str | None,
    alpha: float | None,
    *,
    prefix: str = "--lsrb-",
) -> GateConfig:
    """Validate the gate's options (before any model is called)."""
    a = DEFAULT_ALPHA if alpha is None else float(alpha)
    if not 0.0 < a <= 1.0:
        raise LsrbUsageError(f"{prefix}alpha must be in (0, 1] (got {a:g}).")
    base = follow_latest(Path(baseline).expanduser()) if baseline else None
    drops = parse_thresholds(max_drop, "max_drop", f"{prefix}max-drop")
    if base is None and drops:
        raise LsrbUsageError(f"{prefix}max-drop compares against a baseline; pass {prefix}baseline too.")
    baseline_run = None
    if base is not None:
        baseline_run = read_run(base, f"{prefix}baseline")  # fail now, not after the run
        if not drops:
            drops = parse_thresholds(DEFAULT_MAX_DROP, "max_drop", f"{prefix}max-drop")
    mins = parse_thresholds(minimum, "min", f"{prefix}min")
    return GateConfig(base, tuple(drops + mins), a, baseline_run)
