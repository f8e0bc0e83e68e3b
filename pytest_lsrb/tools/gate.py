"""Regression gating: did the model get worse than a baseline run, beyond noise?

    pytest SUITE --lsrb-baseline=lsrb-out/last-week --lsrb-max-drop=pass_at_1=0.02 --lsrb-outcome=record
    lsrb compare BASELINE_DIR CURRENT_DIR --max-drop pass_at_1=0.02

Both read the two output directories' attempts.jsonl and pair the runs item by item.

Who counts and what succeeded is `engine.outcomes`' rule, the one summary.json uses: attempts
that ended in an infrastructure error or that a replay profile skips are not the model's answer;
they are left out on both sides and counted (pytest errors or skips their tests).

Metrics (higher is better), each with the summary key it equals on a whole run:
    pass_at_K            pass@K of the outcome (verification_pass_at_k_K): the item mean over the
                         items with the run's samples-per-item judged samples. Also spelled pass@K
                         or verification_pass_at_k_K.
    valid_rate           the answer was a well-formed tactic/proposal (of answered attempts)
    nonempty_rate        the answer was not empty (of answered attempts)
    success_rate         the verdict was a success (of judged attempts; verification_success_rate)
    field:NAME           any true/false record field over judged attempts, e.g. field:symbolic_match
Rates are pooled over the attempts of the compared items; the significance test pairs items.

Thresholds: `max-drop METRIC=X` fails when the metric fell by more than X below the baseline and
a paired one-sided test says the drop is not noise (p < alpha): exact McNemar when every per-item
score is 0 or 1 (one sample per item, or pass@K with K = samples), a paired bootstrap of the
per-item differences otherwise. `min METRIC=X` fails when the current run's value is below X (no
test: a floor). With a baseline and no max-drop, `pass_at_1=0` is checked: any significant drop.

A regression makes the session exit with EXIT_REGRESSION (6; pytest itself uses 0-5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.outcomes import JUDGED, Metric, Record, resolve_metric, status
from pytest_lsrb.output.files import write_json_atomic
from pytest_lsrb.output.reader import RunDir, read_run
from pytest_lsrb.output.runs import follow_latest
from pytest_lsrb.tools.significance import (
    holm_adjust,
    mcnemar_exact_p,
    mcnemar_min_detectable,
    normal_min_detectable,
    paired_bootstrap_ci,
    paired_bootstrap_p,
)

EXIT_REGRESSION: Final = 6
GATE_FILE: Final = "gate.json"
DEFAULT_ALPHA: Final = 0.05
DEFAULT_MAX_DROP: Final = "pass_at_1=0"
SHOWN_FLIPS: Final = 10  # items listed per direction in the terminal; gate.json has them all


# -- thresholds --------------------------------------------------------------------------------


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
    if base is not None:
        read_run(base, f"{prefix}baseline")  # fail now, not after the run
        if not drops:
            drops = parse_thresholds(DEFAULT_MAX_DROP, "max_drop", f"{prefix}max-drop")
    mins = parse_thresholds(minimum, "min", f"{prefix}min")
    return GateConfig(base, tuple(drops + mins), a)


# -- runs --------------------------------------------------------------------------------------


def by_item(run: RunDir) -> dict[str, list[dict[str, Any]]]:
    """A run's records grouped by item (each metric picks its own population from them)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rec in run.records:
        out.setdefault(str(rec["item_id"]), []).append(rec)
    return out


def unjudged(run: RunDir) -> int:
    """Attempts not held against the model (infrastructure errors, profile skips)."""
    return sum(status(r) != JUDGED for r in run.records)


# -- comparison --------------------------------------------------------------------------------


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
    per item, which pass@K asks of an item)."""
    metric = threshold.metric
    pairs: list[tuple[str, float, float]] = []
    for item_id in sorted(set(base) & set(cur)):
        b, c = metric.item_score(base[item_id], samples[0]), metric.item_score(cur[item_id], samples[1])
        if b is not None and c is not None:
            pairs.append((item_id, b, c))
    paired = {p[0] for p in pairs}
    b_mean = metric.value({i: r for i, r in base.items() if i in paired}, samples[0])[0]
    c_mean = metric.value({i: r for i, r in cur.items() if i in paired}, samples[1])[0]
    change = None if b_mean is None or c_mean is None else c_mean - b_mean
    down = [i for i, b, c in sorted(pairs, key=lambda p: (p[2] - p[1], p[0])) if c < b]
    up = [i for i, b, c in sorted(pairs, key=lambda p: (p[1] - p[2], p[0])) if c > b]
    binary = all(v in (0.0, 1.0) for _, b, c in pairs for v in (b, c))
    diffs = [c - b for _, b, c in pairs]
    if not pairs:
        test, p_value = None, None
    elif binary:
        test, p_value = "exact McNemar", mcnemar_exact_p(len(down), len(up))
    else:
        test, p_value = "paired bootstrap", paired_bootstrap_p(diffs)
    regressed = (
        change is not None and p_value is not None and -change > threshold.value + 1e-12 and p_value < alpha
    )
    return MetricCheck(
        p_adjusted=p_value,
        min_detectable=min_detectable_drop(diffs, binary, alpha),
        ci=paired_bootstrap_ci(diffs),
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
    )


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
    value, items = threshold.metric.value(cur, samples)
    return MetricCheck(
        metric=threshold.metric.name,
        summary_key=threshold.metric.summary_key,
        threshold=threshold.label,
        kind="min",
        limit=threshold.value,
        baseline=None,
        current=value,
        change=None,
        items=items,
        test=None,
        p_value=None,
        regressed=value is None or value < threshold.value - 1e-12,
    )


def evaluate(config: GateConfig, current: RunDir, baseline: RunDir | None) -> GateResult:
    if baseline is not None:
        check_compatible(config, baseline.head, current.head.get("suite"), current.samples, str(baseline.dir))
    cur = by_item(current)
    base = by_item(baseline) if baseline is not None else {}
    checks = []
    for t in config.thresholds:
        if t.kind == "min":
            checks.append(check_minimum(t, cur, current.samples))
        elif baseline is not None:
            checks.append(compare_metric(t, base, cur, config.alpha, (baseline.samples, current.samples)))
    apply_holm(checks, config.alpha)
    b_items = {i for i, recs in base.items() if any(status(r) == JUDGED for r in recs)}
    c_items = {i for i, recs in cur.items() if any(status(r) == JUDGED for r in recs)}
    b_hash = baseline.head.get("selected_rows_hash") if baseline else None
    c_hash = current.head.get("selected_rows_hash")
    return GateResult(
        baseline_dir=str(baseline.dir) if baseline else None,
        current_dir=str(current.dir),
        alpha=config.alpha,
        checks=checks,
        unjudged_baseline=unjudged(baseline) if baseline else 0,
        unjudged_current=unjudged(current),
        paired_items=len(b_items & c_items),
        only_in_baseline=len(b_items - c_items),
        only_in_current=len(c_items - b_items) if baseline else 0,
        same_selection=None if not (b_hash and c_hash) else b_hash == c_hash,
    )


def compare_dirs(config: GateConfig, current_dir: Path) -> GateResult:
    current = read_run(current_dir, "current run")
    baseline = read_run(config.baseline, "baseline") if config.baseline else None
    return evaluate(config, current, baseline)


# -- report ------------------------------------------------------------------------------------


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2g}" if value < 0.001 else f"{value:.4f}"


def title(result: GateResult) -> str:
    verdict = "REGRESSION" if result.regressed else "ok"
    against = f" against baseline {result.baseline_dir}" if result.baseline_dir else ""
    return f"lsrb gate: {verdict}{against}"


def result_lines(result: GateResult) -> list[str]:
    """The gate's terminal section (without its title line)."""
    holm = any(c.p_adjusted != c.p_value for c in result.checks)
    p_label = "p (Holm)" if holm else "p"
    header = (
        "metric",
        "baseline",
        "current",
        "change",
        "95% CI",
        "limit",
        "items",
        p_label,
        "test",
        "verdict",
    )
    rows = [header]
    for c in result.checks:
        test = c.test or "-"
        if c.test:
            test += f" ({len(c.down)} down, {len(c.up)} up)"
        rows.append(
            (
                c.metric,
                _num(c.baseline),
                _num(c.current),
                _num(c.change, signed=True),
                "-" if c.ci is None else f"[{c.ci[0]:+.3f}, {c.ci[1]:+.3f}]",
                c.threshold,
                str(c.items),
                _p(c.p_adjusted if c.kind == "max_drop" else None),
                test,
                "REGRESSED" if c.regressed else "ok",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for c in result.checks:
        if c.regressed and c.kind == "max_drop":
            lines.append(
                f"{c.metric} fell by {-(c.change or 0.0):.3f} (from {_num(c.baseline)} to "
                f"{_num(c.current)}; allowed {c.limit:g}), p = {_p(c.p_adjusted)} < alpha {result.alpha:g}"
            )
        elif c.regressed:
            lines.append(f"{c.metric} is {_num(c.current)}, below the minimum {c.limit:g}")
    lines += sensitivity_lines(result, holm)
    drops = [c for c in result.checks if c.kind == "max_drop"]
    flips = next((c for c in drops if c.regressed), drops[0] if drops else None)
    if flips is not None:
        for label, ids in (("got worse", flips.down), ("got better", flips.up)):
            if ids:
                shown = ", ".join(ids[:SHOWN_FLIPS])
                more = f" (+{len(ids) - SHOWN_FLIPS} more in {GATE_FILE})" if len(ids) > SHOWN_FLIPS else ""
                lines.append(f"items that {label} on {flips.metric} ({len(ids)}): {shown}{more}")
    if result.baseline_dir:
        notes = [f"{result.paired_items} items in both runs"]
        if result.only_in_baseline or result.only_in_current:
            notes.append(f"{result.only_in_baseline} only in the baseline, {result.only_in_current} only now")
        if result.same_selection is False:
            notes.append("the runs selected different rows (selected_rows_hash differs)")
        lines.append("compared: " + "; ".join(notes))
    if result.unjudged_baseline or result.unjudged_current:
        lines.append(
            "left out (infrastructure errors, profile skips): "
            f"{result.unjudged_baseline} attempts in the baseline, "
            f"{result.unjudged_current} now"
        )
    if result.regressed:
        lines.append(f"exit status {EXIT_REGRESSION}: a model regression")
    return lines


def sensitivity_lines(result: GateResult, holm: bool) -> list[str]:
    """What each drop test could detect with the items at hand, and a warning when a limit is finer."""
    lines: list[str] = []
    tested = [c for c in result.checks if c.kind == "max_drop"]
    for c in tested:
        if not c.items:
            continue
        at = f"p < {result.alpha:g}" + (f", Holm over {len(tested)} metrics" if holm else "")
        if c.min_detectable is None:
            lines.append(
                f"WARNING: {c.metric}: {c.items} items are too few for any drop to be significant ({at}); "
                "this gate cannot fail on it"
            )
            continue
        how = "even with no item improving" if c.test == "exact McNemar" else "at 80% power"
        lines.append(
            f"{c.metric}: the smallest drop detectable on {c.items} items is "
            f"{c.min_detectable:.3f} ({at}, {how})"
        )
        if c.limit + 1e-12 < c.min_detectable:
            lines.append(
                f"WARNING: {c.metric}: the allowed drop {c.limit:g} is below that; a drop between "
                f"{c.limit:g} and {c.min_detectable:.3f} passes as noise. Use more items (or samples)."
            )
    return lines


def write_terminal(terminalreporter: Any, result: GateResult) -> None:
    terminalreporter.write_sep("=", title(result), red=result.regressed, green=not result.regressed)
    for line in result_lines(result):
        terminalreporter.write_line(line)


# -- the plugin's side -------------------------------------------------------------------------


def preflight(values: Mapping[str, Any], suite: str) -> GateConfig | None:
    """The gate's config from a run's options, checked against the baseline before the run.

    None when no gate option is set.
    """
    config = gate_config(
        values.get("baseline"), values.get("max_drop"), values.get("min"), values.get("alpha")
    )
    if not config.active:
        return None
    if config.baseline is not None:
        header = read_run(config.baseline, "--lsrb-baseline").head
        samples = int(values.get("samples") or 1)
        check_compatible(config, header, suite, samples, str(config.baseline))
    return config


def check_compatible(
    config: GateConfig, baseline_header: Mapping[str, Any], suite: str | None, samples: int, where: str
) -> None:
    base_suite = baseline_header.get("suite")
    if base_suite and suite and base_suite != suite:
        raise LsrbUsageError(f"the baseline {where} is a run of suite {base_suite}, not {suite}.")
    base_samples = int((baseline_header.get("config") or {}).get("samples") or 1)
    for t in config.thresholds:
        k = t.metric.k
        if k is not None and t.kind == "max_drop" and k > min(base_samples, samples):
            raise LsrbUsageError(
                f"metric {t.metric.name} needs at least {k} samples per item; the baseline {where} "
                f"has {base_samples} and the current run {samples}."
            )


def finish_session(config: GateConfig, output_dir: Path, exitstatus: int) -> tuple[GateResult, int]:
    """Evaluate after the run, write gate.json, and give the session's new exit status.

    A regression replaces 0 (all passed) or 1 (some tests failed); interrupted, internal and
    usage errors keep their own codes.
    """
    result = compare_dirs(config, output_dir)
    write_json_atomic(output_dir / GATE_FILE, result.to_json())
    if result.regressed and exitstatus in (0, 1):
        return result, EXIT_REGRESSION
    return result, exitstatus
