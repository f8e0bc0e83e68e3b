"""Several models' runs of one suite compared (`lsrb run SUITE --lsrb-model a --lsrb-model b …`,
`tools.lineup`): a table of each run's headline metrics (pass@k, success, valid rate; for
llm_srbench also Table 1 in the paper's layout, one row per model), and the paired test between
each pair on the items both judged. The test is the gate's (`tools.gate.checks.compare_metric`:
exact McNemar on 0/1 item scores, a paired bootstrap otherwise) on pass@1 by the one judging rule
(`engine.outcomes`), with Holm's adjustment across the pairs."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_lsrb.engine.metric import declared, resolve_metric
from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.report.compare import fmt_value
from pytest_lsrb.tools.gate.checks import MetricCheck, compare_metric
from pytest_lsrb.tools.gate.compare import by_item
from pytest_lsrb.tools.gate.thresholds import Threshold
from pytest_lsrb.tools.significance import holm_adjust

# The headline metrics the table shows, when a run has them (pass@k rows are added by pattern).
TABLE_KEYS = (
    "success_rate",
    "valid_rate",
    "generation_error_rate",
    "latency_ms_p50",
    "prompt_tokens",
    "completion_tokens",
    "cost",
)
PAIRED_METRIC = "pass_at_1"


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    check: MetricCheck
    p_holm: float | None


def pairs(runs: Sequence[tuple[str, RunDir]], alpha: float = 0.05) -> list[Pair]:
    """The paired test of every pair of runs, in the order given, Holm-adjusted across pairs."""
    threshold = Threshold(resolve_metric(PAIRED_METRIC), "max_drop", 0.0)
    grouped = [(label, by_item(run), run.samples) for label, run in runs]
    checks = [
        (a[0], b[0], compare_metric(threshold, a[1], b[1], alpha, (a[2], b[2])))
        for a, b in itertools.combinations(grouped, 2)
    ]
    tested = [i for i, (_, _, c) in enumerate(checks) if c.p_value is not None]
    adjusted = holm_adjust([checks[i][2].p_value or 0.0 for i in tested])
    holm: dict[int, float] = dict(zip(tested, adjusted, strict=True))
    return [Pair(a, b, c, holm.get(i)) for i, (a, b, c) in enumerate(checks)]


def _p(value: float | None) -> str:
    return "-" if value is None else (f"{value:.3g}" if value >= 0.001 else "<0.001")


def table_lines(runs: Sequence[tuple[str, RunDir]]) -> list[str]:
    """One row per run: its folder's name, model, attempts, and the headline metrics."""
    summaries = [run.summary or {} for _, run in runs]
    metrics = [m for m in declared(*summaries) if m.key in TABLE_KEYS or m.k is not None]
    head = ["run", "model", "attempts", *(m.label for m in metrics)]
    rows = []
    for (label, run), summary in zip(runs, summaries, strict=True):
        model = str(run.config.get("model") or summary.get("config", {}).get("model") or "")
        done = f"{summary.get('attempts', len(run.records))}/{summary.get('attempts_expected', '?')}"
        cells = [fmt_value(_num(summary.get(m.key)), m.kind) for m in metrics]
        rows.append([label, model, done, *cells])
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    return [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]
    ]


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def pair_lines(found: Sequence[Pair], alpha: float = 0.05) -> list[str]:
    metric = PAIRED_METRIC.replace("_at_", "@")
    lines = [f"paired test on {metric}, items both runs judged (alpha {alpha:g}, Holm):"]
    for pair in found:
        c = pair.check
        if c.p_value is None:
            lines.append(f"  {pair.first} vs {pair.second}: no item judged in both runs")
            continue
        change = "-" if c.change is None else f"{c.change:+.3f}"
        verdict = "differ" if pair.p_holm is not None and pair.p_holm < alpha else "no significant difference"
        lines.append(
            f"  {pair.first} vs {pair.second}: {fmt_value(c.baseline, 'rate')} -> "
            f"{fmt_value(c.current, 'rate')} ({change}) on {c.items} items, {c.test} "
            f"p={_p(c.p_value)} (Holm {_p(pair.p_holm)}): {verdict}; "
            f"{len(c.up)} items better, {len(c.down)} worse"
        )
    return lines


def lineup_lines(runs: Sequence[tuple[str, RunDir]], alpha: float = 0.05) -> list[str]:
    """The comparison printed at the end of a several-models command."""
    from pytest_lsrb.report import table1_lines

    lines = ["models compared:", *table_lines(runs)]
    if any((run.summary or {}).get("srbench_table") for _, run in runs):
        renamed = [_as_label(label, run) for label, run in runs]
        lines += ["", *table1_lines(renamed, "paper")]
    if len(runs) > 1:
        lines += ["", *pair_lines(pairs(runs, alpha), alpha)]
    return lines


def _as_label(label: str, run: RunDir) -> RunDir:
    """The run with its Table 1 rows named by the run's label (one row per model)."""
    summary = dict(run.summary or {})
    table = summary.get("srbench_table")
    if isinstance(table, dict):
        summary["srbench_table"] = {
            f"{label}:{key.rpartition(':')[2]}": {**row, "method": label} for key, row in table.items()
        }
    return RunDir(run.dir, run.header, summary, run.records, list(run.warnings), run.index_rows)
