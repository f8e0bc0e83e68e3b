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
# A baseline named but not there: `fail` (the gate fails: a CI cache that lost it cannot pass by
# accident) or `pass` (declared: this run is the first, there is nothing to compare it with).
BASELINE_MISSING: Final = ("fail", "pass")


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
    # A baseline named but not there, with --lsrb-baseline-missing=pass: the first run, declared.
    missing_baseline: Path | None = None

    @property
    def active(self) -> bool:
        return bool(self.thresholds) or self.missing_baseline is not None


def baseline_absent(path: Path) -> bool:
    """Nothing where the baseline was to be: no such path, or an empty folder (what a cache
    restore that found nothing leaves, or a folder made for it). A folder with something in it
    that is no run is not "missing": reading it fails in its own sentence."""
    if not path.exists() and not path.is_symlink():
        return True
    try:
        return path.is_dir() and not any(path.iterdir())
    except OSError:
        return False


def gate_config(
    baseline: str | None,
    max_drop: str | None,
    minimum: str | None,
    alpha: float | None,
    maximum: str | None = None,
    *,
    prefix: str = "--lsrb-",
    missing: str | None = None,
) -> GateConfig:
    """Validate the gate's options (before any model is called). `missing`: what a baseline that
    is not there does (`BASELINE_MISSING`; default `fail`)."""
    a = DEFAULT_ALPHA if alpha is None else float(alpha)
    if not 0.0 < a <= 1.0:
        raise LsrbUsageError(f"{prefix}alpha must be in (0, 1] (got {a:g}).")
    missing = missing or BASELINE_MISSING[0]
    if missing not in BASELINE_MISSING:
        raise LsrbUsageError(f"{prefix}baseline-missing must be fail or pass (got '{missing}').")
    base = follow_latest(Path(baseline).expanduser()) if baseline else None
    drops = parse_thresholds(max_drop, "max_drop", f"{prefix}max-drop")
    if base is None and drops:
        raise LsrbUsageError(f"{prefix}max-drop compares against a baseline; pass {prefix}baseline too.")
    mins = parse_thresholds(minimum, "min", f"{prefix}min")
    maxes = parse_thresholds(maximum, "max", f"{prefix}max")
    if base is not None and baseline_absent(base):
        if missing == "fail":
            raise LsrbUsageError(
                f"{prefix}baseline: there is no baseline run at {base}, so there is nothing to compare "
                f"with and the gate fails; if this is the first run, declare it with "
                f"{prefix}baseline-missing=pass."
            )
        # the first run, declared: nothing to compare with; the floors and ceilings still hold
        return GateConfig(None, tuple(mins + maxes), a, None, missing_baseline=base)
    baseline_run = None
    if base is not None:
        baseline_run = read_run(base, f"{prefix}baseline")  # fail now, not after the run
        if not drops:
            drops = parse_thresholds(DEFAULT_MAX_DROP, "max_drop", f"{prefix}max-drop")
    return GateConfig(base, tuple(drops + mins + maxes), a, baseline_run)
