"""The gate's thresholds and options: `max-drop METRIC=X`, `min METRIC=X`, `max METRIC=X`, the
baseline, alpha."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.metric import Metric, resolve_metric
from pytest_lsrb.output.reader import RunDir, read_run
from pytest_lsrb.output.runs import follow_latest

DEFAULT_ALPHA: Final = 0.05
DEFAULT_MAX_DROP: Final = "pass_at_1=0"


ThresholdKind = Literal["max_drop", "min", "max"]
_OPTION_NAMES: Final = {"max_drop": "max-drop", "min": "min", "max": "max"}


@dataclass(frozen=True)
class Threshold:
    metric: Metric
    kind: ThresholdKind
    value: float

    @property
    def label(self) -> str:
        return f"{'max drop' if self.kind == 'max_drop' else self.kind} {self.value:g}"


def parse_thresholds(text: str | None, kind: ThresholdKind, option: str) -> list[Threshold]:
    """`pass_at_1=0.02,valid_rate=0.05` -> thresholds; one sentence for a bad one.

    `max-drop` is how far the metric may move the wrong way (a fall for higher-is-better metrics,
    a rise for lower-is-better ones, `engine.metric`); `min` is a floor and takes higher-is-better
    metrics, `max` a ceiling and takes lower-is-better ones."""
    out: list[Threshold] = []
    for part in (p.strip() for p in (text or "").split(",") if p.strip()):
        name, sep, value = part.rpartition("=")
        if not sep or not name:
            raise LsrbUsageError(f"{option}: '{part}' should read METRIC=NUMBER, e.g. pass_at_1=0.02.")
        try:
            number = float(value)
        except ValueError:
            raise LsrbUsageError(f"{option}: '{value}' in '{part}' is not a number.") from None
        if not math.isfinite(number):
            raise LsrbUsageError(f"{option}: '{value}' in '{part}' is not a finite number.")
        try:
            metric = resolve_metric(name)
        except LsrbUsageError as exc:
            raise LsrbUsageError(f"{option}: {exc}") from None
        if kind == "max_drop" and metric.kind == "rate" and not 0.0 <= number <= 1.0:
            raise LsrbUsageError(f"{option}: the allowed drop in '{part}' must be in [0, 1].")
        if kind == "max_drop" and number < 0:
            raise LsrbUsageError(f"{option}: the allowed change in '{part}' must be 0 or more.")
        if kind == "min" and metric.direction == "lower":
            raise LsrbUsageError(
                f"{option}: {metric.name} is lower-is-better; give its ceiling with "
                f"{option.removesuffix('min')}max {metric.name}={value}."
            )
        if kind == "max" and metric.direction != "lower":
            raise LsrbUsageError(
                f"{option}: {metric.name} is higher-is-better; give its floor with "
                f"{option.removesuffix('max')}min {metric.name}={value}."
            )
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
    maximum: str | None = None,
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
    maxes = parse_thresholds(maximum, "max", f"{prefix}max")
    return GateConfig(base, tuple(drops + mins + maxes), a, baseline_run)
