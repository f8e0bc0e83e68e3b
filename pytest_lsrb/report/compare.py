"""Comparing a run with a baseline: metric deltas and the items that flipped.

`format_comparison` is pure (summaries and flips in, lines out) so the terminal summary at the end
of a session and `lsrb report --baseline` show the same comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_lsrb.core.durations import latency
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.metric import Kind, Metric, declared, resolve_metric
from pytest_lsrb.engine.outcomes import item_direction
from pytest_lsrb.output.files import SUMMARY_FILE, read_json
from pytest_lsrb.output.reader import RunDir, run_name
from pytest_lsrb.report.aggregate import Scored, per_item_counts, score
from pytest_lsrb.report.data import load_run


def headline_metrics(*summaries: Mapping[str, Any] | None) -> list[Metric]:
    """The declared metrics (`engine.metric`) present in any of the summaries, in display order."""
    return declared(*summaries)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Delta:
    metric: Metric
    baseline: float | None
    current: float | None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def verdict(self) -> Literal["better", "worse", "same", "timing", ""]:
        """better/worse in the metric's direction; a timing metric's change is the machine's, not
        the model's: labelled `timing`, never a verdict."""
        d = self.delta
        if d is None or self.metric.direction is None:
            return ""
        if self.metric.timing:
            return "timing"
        if abs(d) <= 1e-12 * max(1.0, abs(self.baseline or 0.0)):
            return "same"
        return "worse" if self.metric.worse(self.baseline or 0.0, self.current or 0.0) else "better"


def metric_deltas(baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> list[Delta]:
    out = []
    for m in headline_metrics(baseline, current):
        b, c = (baseline or {}).get(m.key), (current or {}).get(m.key)
        out.append(Delta(m, _float(b), _float(c)))
    return out


# The gate's default metric: the report's "regressed" is the gate's "got worse" on it.
_PASS_AT_1 = resolve_metric("pass_at_1")


@dataclass(frozen=True)
class Flip:
    """An item whose score on pass@1 (the share of its judged samples that succeeded) changed
    between the runs: `outcomes.item_direction`, the gate's definition."""

    item_id: str
    before: tuple[int, int]  # (samples, successes) in the baseline
    after: tuple[int, int]
    direction: Literal["regressed", "improved"]


def find_flips(
    baseline: Mapping[str, tuple[int, int]],
    current: Mapping[str, tuple[int, int]],
    samples: tuple[int, int] = (1, 1),
) -> list[Flip]:
    """Items both runs scored on pass@1 (with `samples` judged samples, as the gate asks) whose
    score changed; regressions first, then by id."""
    flips = []
    for item in baseline.keys() & current.keys():
        b = _PASS_AT_1.score_counts(*baseline[item], samples[0])
        c = _PASS_AT_1.score_counts(*current[item], samples[1])
        direction = None if b is None or c is None else item_direction(b, c)
        if direction is not None:
            flips.append(Flip(item, baseline[item], current[item], direction))
    return sorted(flips, key=lambda f: (f.direction != "regressed", f.item_id))


def flips_between(
    baseline: Sequence[Scored], current: Sequence[Scored], samples: tuple[int, int] = (1, 1)
) -> list[Flip]:
    return find_flips(per_item_counts(baseline), per_item_counts(current), samples)


def config_changes(baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> list[str]:
    """Run-config keys whose values differ (the shard and the index path are not changes)."""
    b = (baseline or {}).get("config") or {}
    c = (current or {}).get("config") or {}
    if not isinstance(b, dict) or not isinstance(c, dict):
        return []
    skip = {"shard_index", "index"}
    return sorted(k for k in set(b) | set(c) if k not in skip and b.get(k) != c.get(k))


# -- terminal ----------------------------------------------------------------------------------


def fmt_value(value: float | None, kind: Kind) -> str:
    if value is None:
        return "-"
    if kind in ("count", "tokens"):
        return f"{value:.0f}"
    if kind == "ms":
        return latency(value)  # `412 ms`, `2.41 s`, `3m34s`: never a bare 213901.9
    if kind == "s":
        return latency(value * 1000.0)
    if kind == "number" and (abs(value) >= 1e4 or (value != 0 and abs(value) < 1e-3)):
        return f"{value:.3g}"
    return f"{value:.3f}"


def fmt_delta(delta: Delta) -> str:
    d = delta.delta
    if d is None:
        return "-"
    return ("+" if d > 0 else "") + fmt_value(d, delta.metric.kind) if d != 0 else "0"


def _names(flips: Sequence[Flip], limit: int, width: int = 96) -> str:
    """Up to `limit` item ids, as many as fit in `width` characters, then how many more."""
    shown: list[str] = []
    used = 0
    for f in flips[:limit]:
        if shown and used + len(f.item_id) + 2 > width:
            break
        shown.append(f.item_id)
        used += len(f.item_id) + 2
    more = len(flips) - len(shown)
    return ", ".join(shown) + (f" … and {more} more" if more > 0 else "")


def format_comparison(
    baseline_summary: Mapping[str, Any] | None,
    current_summary: Mapping[str, Any] | None,
    flipped_items: Sequence[Flip] | None,
    *,
    max_names: int = 8,
) -> list[str]:
    """A compact comparison for a CI log (one screen): deltas of the headline metrics and flips.

    `flipped_items=None` leaves the flips out (for a caller that lists them itself, like the gate).
    """
    base, cur = baseline_summary or {}, current_summary or {}

    def who(s: Mapping[str, Any]) -> str:
        raw = s.get("config")
        cfg: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        return f"{run_name(cfg)} ({str(s.get('selected_rows_hash') or '')[:8] or '-'})"

    lines = [f"baseline {who(base)}  ->  current {who(cur)}"]
    bh, ch = base.get("selected_rows_hash"), cur.get("selected_rows_hash")
    if bh and ch and bh != ch:
        lines.append(
            "note: the runs selected different items (selected_rows_hash differs); "
            "deltas compare different sets."
        )
    changed = config_changes(base, cur)
    if changed:
        lines.append("config changed: " + ", ".join(changed))
    deltas = metric_deltas(base, cur)
    if deltas:
        width = max(len(d.metric.label) for d in deltas)
        lines.append(f"{'metric'.ljust(width)}  {'baseline':>10}  {'current':>10}  {'delta':>10}")
        for d in deltas:
            lines.append(
                f"{d.metric.label.ljust(width)}  {fmt_value(d.baseline, d.metric.kind):>10}  "
                f"{fmt_value(d.current, d.metric.kind):>10}  {fmt_delta(d):>10}  {d.verdict}".rstrip()
            )
    if flipped_items is None:
        return lines
    regressed = [f for f in flipped_items if f.direction == "regressed"]
    improved = [f for f in flipped_items if f.direction == "improved"]
    lines.append(f"items flipped: {len(regressed)} regressed, {len(improved)} improved")
    if regressed:
        lines.append("  regressed: " + _names(regressed, max_names))
    if improved:
        lines.append("  improved:  " + _names(improved, max_names))
    return lines


@dataclass
class Comparison:
    baseline: RunDir
    current: RunDir
    baseline_scored: list[Scored]
    current_scored: list[Scored]
    deltas: list[Delta]
    flips: list[Flip]

    def lines(self) -> list[str]:
        return format_comparison(self.baseline.summary, self.current.summary, self.flips)

    def pass_rate_change(self) -> tuple[float, float, float, int] | None:
        """The change of the per-item success rate over the items both runs judged, with its 95%
        paired bootstrap interval: (change, low, high, items); None without shared items."""
        from pytest_lsrb.tools.significance import paired_bootstrap_ci

        base, cur = per_item_counts(self.baseline_scored), per_item_counts(self.current_scored)
        diffs = [
            cur[i][1] / cur[i][0] - base[i][1] / base[i][0]
            for i in sorted(set(base) & set(cur))
            if base[i][0] and cur[i][0]
        ]
        interval = paired_bootstrap_ci(diffs)
        if interval is None:
            return None
        return sum(diffs) / len(diffs), interval[0], interval[1], len(diffs)


def compare(baseline: RunDir, current: RunDir) -> Comparison:
    b, c = score(baseline), score(current)
    return Comparison(
        baseline,
        current,
        b,
        c,
        metric_deltas(baseline.summary, current.summary),
        flips_between(b, c, (baseline.samples, current.samples)),
    )


def comparison_lines(baseline_dir: Path, current_dir: Path) -> list[str]:
    """The terminal comparison of two output directories (what a session end prints)."""
    return compare(load_run(baseline_dir), load_run(current_dir)).lines()


def write_comparison(
    terminalreporter: Any,
    baseline_dir: Path,
    summary: dict[str, Any],
    baseline: Mapping[str, Any] | None = None,
) -> None:
    """Headline metric deltas against the baseline run (the gate lists the flipped items).
    `baseline`: its summary as the gate already read it (None: read it here)."""
    if baseline is None:
        try:
            baseline = read_json(baseline_dir / SUMMARY_FILE)
        except LsrbUsageError as exc:  # the gate already read the attempts; say why, don't crash
            terminalreporter.write_line(f"lsrb: no baseline summary to compare with ({exc})")
            return
    terminalreporter.write_sep("-", f"lsrb: compared with {baseline_dir}")
    for line in format_comparison(baseline, summary, None):
        terminalreporter.write_line(line)
