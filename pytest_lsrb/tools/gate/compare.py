"""Two runs compared: read both output directories, pair them item by item and check every
threshold (`lsrb compare`, and the gate after a run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.outcomes import JUDGED, status
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.output.reader import RunDir, read_run
from pytest_lsrb.tools.gate.checks import GateResult, apply_holm, check_minimum, compare_metric
from pytest_lsrb.tools.gate.thresholds import GateConfig


def by_item(run: RunDir) -> dict[str, list[AttemptRecord]]:
    """A run's records grouped by item (each metric picks its own population from them)."""
    out: dict[str, list[AttemptRecord]] = {}
    for rec in run.records:
        out.setdefault(str(rec["item_id"]), []).append(rec)
    return out


def unjudged(run: RunDir) -> int:
    """Attempts not held against the model (infrastructure errors, profile skips)."""
    return sum(status(r) != JUDGED for r in run.records)


def evaluate(config: GateConfig, current: RunDir, baseline: RunDir | None) -> GateResult:
    if baseline is not None:
        check_compatible(config, baseline.head, current.head.get("suite"), current.samples, str(baseline.dir))
    cur = by_item(current)
    base = by_item(baseline) if baseline is not None else {}
    checks = []
    for t in config.thresholds:
        if t.kind in ("min", "max"):
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
        baseline_name=baseline.name if baseline else None,
        current_name=current.name,
        missing_baseline=str(config.missing_baseline) if config.missing_baseline is not None else None,
    )


def compare_dirs(config: GateConfig, current_dir: Path, current: RunDir | None = None) -> GateResult:
    """The gate's verdict; each run read once (the baseline when the options were checked)."""
    if current is None:
        current = read_run(current_dir, "current run")
    baseline = config.baseline_run
    if baseline is None and config.baseline:
        baseline = read_run(config.baseline, "baseline")
    return evaluate(config, current, baseline)


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
