"""One threshold checked: a paired drop test against the baseline, or a floor; Holm across the
drop tests; what each test could detect on the items at hand. The result of a gate run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from pytest_lsrb.engine.metric import Metric
from pytest_lsrb.engine.outcomes import Record, item_direction
from pytest_lsrb.tools.gate.thresholds import Threshold
from pytest_lsrb.tools.significance import (
    holm_adjust,
    mcnemar_exact_p,
    mcnemar_min_detectable,
    normal_min_detectable,
    paired_bootstrap_ci,
    paired_bootstrap_p,
    paired_bootstrap_quantile_p,
)

EXIT_REGRESSION: Final = 6


@dataclass
class MetricCheck:
    metric: str
    summary_key: str | None
    threshold: str
    kind: str
    limit: float
    baseline: float | None
    current: float | None
    change: float | None
    items: int
    test: str | None
    p_value: float | None
    regressed: bool
    down: list[str] = field(default_factory=list)
    up: list[str] = field(default_factory=list)
    # Holm-adjusted across the run's max-drop metrics; the verdict uses this one.
    p_adjusted: float | None = None
    # The smallest drop the test can call significant on these items (see min_detectable_drop).
    min_detectable: float | None = None
    ci: tuple[float, float] | None = None  # 95% paired bootstrap interval of `change`
    direction: str | None = "higher"  # the metric's (`engine.metric`): "lower" -> a rise is worse


@dataclass
class GateResult:
    baseline_dir: str | None
    current_dir: str
    alpha: float
    checks: list[MetricCheck]
    unjudged_baseline: int
    unjudged_current: int
    paired_items: int
    only_in_baseline: int
    only_in_current: int
    same_selection: bool | None
    baseline_name: str | None = None  # `output.reader.run_name`: adapter/model
    current_name: str = ""
    # the baseline named but not there, declared the first run (--lsrb-baseline-missing=pass)
    missing_baseline: str | None = None

    @property
    def regressed(self) -> bool:
        return any(c.regressed for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "regressed": self.regressed, "exit_status": self.exit_status}

    @property
    def exit_status(self) -> int:
        return EXIT_REGRESSION if self.regressed else 0


def compare_metric(
    threshold: Threshold,
    base: Mapping[str, Sequence[Record]],
    cur: Mapping[str, Sequence[Record]],
    alpha: float,
    samples: tuple[int, int] = (1, 1),
) -> MetricCheck:
    """One drop threshold checked on the items both runs judged (`samples`: each run's samples
    per item, which pass@K asks of an item), in the metric's direction (`engine.metric`): for a
    lower-is-better metric (an error rate, tokens, p95 latency, median NMSE) a "drop" is a rise."""
    metric = threshold.metric
    pairs: list[tuple[str, float, float]] = []
    for item_id in sorted(set(base) & set(cur)):
        b, c = metric.item_score(base[item_id], samples[0]), metric.item_score(cur[item_id], samples[1])
        if b is not None and c is not None:
            pairs.append((item_id, b, c))
    paired = {p[0] for p in pairs}
    base_paired = {i: r for i, r in base.items() if i in paired}
    cur_paired = {i: r for i, r in cur.items() if i in paired}
    b_mean = metric.value(base_paired, samples[0])[0]
    c_mean = metric.value(cur_paired, samples[1])[0]
    change = None if b_mean is None or c_mean is None else c_mean - b_mean
    sign = -1.0 if metric.direction == "lower" else 1.0  # sign * change < 0: got worse
    # One definition of an item that got worse, the report's "regressed" too.
    better = metric.direction or "higher"
    down = [
        i
        for i, b, c in sorted(pairs, key=lambda p: (sign * (p[2] - p[1]), p[0]))
        if item_direction(b, c, better) == "regressed"
    ]
    up = [
        i
        for i, b, c in sorted(pairs, key=lambda p: (sign * (p[1] - p[2]), p[0]))
        if item_direction(b, c, better) == "improved"
    ]
    binary = metric.quantile is None and all(v in (0.0, 1.0) for _, b, c in pairs for v in (b, c))
    diffs = [sign * (c - b) for _, b, c in pairs]
    test, p_value = _paired_test(metric, pairs, binary, diffs, len(down), len(up), base_paired, cur_paired)
    worse_by = None if change is None else -sign * change
    regressed = (
        worse_by is not None
        and p_value is not None
        and worse_by > threshold.value + 1e-12
        and p_value < alpha
    )
    return MetricCheck(
        p_adjusted=p_value,
        min_detectable=None if metric.quantile is not None else min_detectable_drop(diffs, binary, alpha),
        ci=None if metric.quantile is not None else _signed_ci(paired_bootstrap_ci(diffs), sign),
        metric=metric.name,
        summary_key=metric.summary_key,
        threshold=threshold.label,
        kind=threshold.kind,
        limit=threshold.value,
        baseline=b_mean,
        current=c_mean,
        change=change,
        items=len(pairs),
        test=test,
        p_value=p_value,
        regressed=regressed,
        down=down,
        up=up,
        direction=metric.direction,
    )


def _paired_test(
    metric: Metric,
    pairs: Sequence[tuple[str, float, float]],
    binary: bool,
    diffs: Sequence[float],
    down: int,
    up: int,
    base: Mapping[str, Sequence[Record]],
    cur: Mapping[str, Sequence[Record]],
) -> tuple[str | None, float | None]:
    """The paired one-sided test that the current run is worse: exact McNemar on 0/1 item scores, a
    paired bootstrap of the mean item difference otherwise, and for a quantile metric (p95
    latency, median NMSE) a paired bootstrap of the run-level quantile itself (items resampled
    together in both runs), since a mean of item differences says nothing about a quantile."""
    if not pairs:
        return None, None
    if binary:
        return "exact McNemar", mcnemar_exact_p(down, up)
    q = metric.quantile
    if q is None:
        return "paired bootstrap", paired_bootstrap_p(diffs)
    ids = [i for i, _, _ in pairs]
    b_values = [metric.values(base[i]) for i in ids]
    c_values = [metric.values(cur[i]) for i in ids]
    sign = -1.0 if metric.direction == "lower" else 1.0
    return "paired bootstrap (quantile)", paired_bootstrap_quantile_p(b_values, c_values, q, sign)


def _signed_ci(ci: tuple[float, float] | None, sign: float) -> tuple[float, float] | None:
    """The interval of the change (current - baseline) from that of the signed differences."""
    if ci is None or sign > 0:
        return ci
    return (-ci[1], -ci[0])


def min_detectable_drop(diffs: Sequence[float], binary: bool, alpha: float) -> float | None:
    """The smallest drop these items can show as significant at `alpha`.

    Exact McNemar (0/1 scores): k/n, where k is the fewest items that must go from pass to fail,
    with none the other way, for p < alpha (`mcnemar_min_detectable`); no drop at all can be
    significant on fewer than k items (None). Bootstrap: the normal-theory minimum detectable
    effect at 80% power for the spread of these differences.
    """
    if not diffs:
        return None
    if binary:
        k = mcnemar_min_detectable(len(diffs), alpha)
        return None if k is None else k / len(diffs)
    return normal_min_detectable(diffs, alpha)


def apply_holm(checks: list[MetricCheck], alpha: float) -> None:
    """Several metrics tested at once: adjust their p-values (Holm) and decide on those."""
    tested = [c for c in checks if c.kind == "max_drop" and c.p_value is not None]
    if len(tested) < 2:
        return
    for check, adjusted in zip(tested, holm_adjust([c.p_value or 1.0 for c in tested]), strict=True):
        check.p_adjusted = adjusted
        check.regressed = check.regressed and adjusted < alpha
        if check.min_detectable is not None and check.test == "exact McNemar":
            k = mcnemar_min_detectable(check.items, alpha / len(tested))
            check.min_detectable = None if k is None else k / check.items


def check_minimum(threshold: Threshold, cur: Mapping[str, Sequence[Record]], samples: int = 1) -> MetricCheck:
    """A floor (`min`, higher-is-better metrics) or a ceiling (`max`, lower-is-better): no test,
    the run's value against the number."""
    value, items = threshold.metric.value(cur, samples)
    if threshold.kind == "max":
        failed = value is None or value > threshold.value + 1e-12
    else:
        failed = value is None or value < threshold.value - 1e-12
    return MetricCheck(
        metric=threshold.metric.name,
        summary_key=threshold.metric.summary_key,
        threshold=threshold.label,
        kind=threshold.kind,
        limit=threshold.value,
        baseline=None,
        current=value,
        change=None,
        items=items,
        test=None,
        p_value=None,
        regressed=failed,
        direction=threshold.metric.direction,
    )
