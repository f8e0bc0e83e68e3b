"""The report's equation-discovery methods section: Table 1 with every run's method side by side,
and the paper's analyses (search progress, Fig. 5 in-domain vs OOD, Fig. 6 symbolic accuracy vs
OOD accuracy, Fig. 4 LSR-Transform vs Feynman by complexity), all from the runs' `summary.json`.

`lsrb report RUN [MORE_RUNS...]`: the first run's page, with the other runs (say one per method:
direct, sga, lasr, llmsr on the same problems) beside it here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.report.analysis_charts import CategorySeries, LabelledPoint, category_chart, labelled_scatter
from pytest_lsrb.report.charts import PALETTE, esc, fmt_num
from pytest_lsrb.srbench.tables.analyses import COMPLEXITY_BUCKETS, COMPLEXITY_SETS, bucket_label
from pytest_lsrb.srbench.tables.table import COLUMNS as TABLE1_COLUMNS
from pytest_lsrb.srbench.tables.table import group_label, ordered_groups

# Table 1's columns and group order are srbench.tables.table's (the terminal's and the page's too).
COLUMNS = tuple((key, head) for key, head, _ in TABLE1_COLUMNS)


def run_label(run: RunDir) -> str:
    summary = run.summary or {}
    methods = "+".join(sorted((summary.get("sr_methods") or {}).keys())) or "?"
    return f"{methods} · {run.model}"


def _labelled(runs: Sequence[RunDir]) -> list[tuple[str, Mapping[str, Any]]]:
    out: list[tuple[str, Mapping[str, Any]]] = []
    for run in runs:
        summary = run.summary or {}
        if not summary.get("srbench_table"):
            continue
        label = run_label(run)
        if any(label == seen for seen, _ in out):
            label = f"{label} ({run.dir.name})"
        out.append((label, summary))
    return out


def _cell(value: Any, pct: bool) -> str:
    if value is None:
        return "–"
    return f"{value:.1f}" if pct else fmt_num(float(value))


def table1(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    groups: list[str] = []
    for _, summary in runs:
        for g in summary["srbench_table"]:
            if g not in groups:
                groups.append(g)
    order = ordered_groups(groups)
    head = "".join(f"<th colspan='{len(COLUMNS)}'>{esc(label)}</th>" for label, _ in runs)
    sub = "".join(f"<th>{esc(name)}</th>" for _ in runs for _, name in COLUMNS)
    body = []
    for g in order:
        cells = []
        for _, summary in runs:
            row = summary["srbench_table"].get(g) or {}
            cells += [f"<td class='num'>{_cell(row.get(k), k.endswith('_pct'))}</td>" for k, _ in COLUMNS]
        n = max((s["srbench_table"].get(g) or {}).get("attempts", 0) for _, s in runs)
        body.append(
            f"<tr><td>{esc(group_label(g))} <span class='note'>({n})</span></td>{''.join(cells)}</tr>"
        )
    return (
        "<div class='scroll'><table class='table1'><thead><tr><th rowspan='2'>group</th>"
        f"{head}</tr><tr>{sub}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _drawn(series: Sequence[CategorySeries]) -> bool:
    """Whether any series has a value to draw (an empty panel is not drawn)."""
    return any(v is not None for s in series for v in s.values)


def progress_chart(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    curves = [(label, m, c) for label, s in runs for m, c in (s.get("sr_search_progress") or {}).items()]
    calls = sorted({int(x) for _, _, c in curves for x in c.get("calls", [])})
    if not calls:
        return None
    series = []
    for i, (label, method, curve) in enumerate(curves):
        color = PALETTE[i % len(PALETTE)]
        at = {int(x): k for k, x in enumerate(curve.get("calls", []))}
        for key, kind, dashed in (("test_nmse_median", "test", False), ("train_nmse_median", "train", True)):
            vals = curve.get(key, [])
            series.append(
                CategorySeries(
                    f"{label} [{method}] {kind}",
                    [vals[at[c]] if c in at else None for c in calls],
                    color,
                    dashed,
                )
            )
    if not _drawn(series):
        return None
    return category_chart(
        [str(c) for c in calls],
        series,
        "Search progress: median NMSE of the best hypothesis so far",
        x_label="model calls",
        y_label="median NMSE (log)",
    )


def id_vs_ood_chart(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    groups = sorted({g for _, s in runs for g in (s.get("sr_id_vs_ood") or {})})
    series = []
    for i, (label, summary) in enumerate(runs):
        data = summary.get("sr_id_vs_ood") or {}
        color = PALETTE[i % len(PALETTE)]
        for key, kind, dashed in (("median_nmse_id", "in-domain", False), ("median_nmse_ood", "OOD", True)):
            series.append(
                CategorySeries(
                    f"{label} {kind}", [(data.get(g) or {}).get(key) for g in groups], color, dashed
                )
            )
    if not _drawn(series):
        return None
    return category_chart(
        [g.removeprefix("lsr_synth_") for g in groups],
        series,
        "In-domain vs OOD NMSE per domain (Fig. 5)",
        x_label="problem group",
        y_label="median NMSE (log)",
    )


def symbolic_vs_ood_chart(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    points = []
    for i, (label, summary) in enumerate(runs):
        for g, row in (summary.get("sr_symbolic_vs_ood") or {}).items():
            x, y = row.get("symbolic_accuracy_pct"), row.get("acc_tau_ood_pct")
            if x is not None and y is not None:
                points.append(
                    LabelledPoint(float(x), float(y), f"{label} · {g}", PALETTE[i % len(PALETTE)], label)
                )
    if not points:
        return None
    return labelled_scatter(
        points,
        "Symbolic accuracy vs OOD accuracy (Fig. 6)",
        x_label="symbolic accuracy",
        y_label="Acc0.1 OOD",
    )


def complexity_chart(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    buckets = [bucket_label(lo, hi) for lo, hi in COMPLEXITY_BUCKETS]
    series = []
    for i, (label, summary) in enumerate(runs):
        data = summary.get("sr_complexity")
        if not data:
            continue
        for problem_set, dashed in zip(COMPLEXITY_SETS, (False, True), strict=True):
            rows = data.get(problem_set) or {}
            values = [(rows.get(b) or {}).get("symbolic_accuracy_pct") for b in buckets]
            series.append(CategorySeries(f"{label} {problem_set}", values, PALETTE[i % len(PALETTE)], dashed))
    if not _drawn(series):
        return None
    return category_chart(
        buckets,
        series,
        "LSR-Transform vs Feynman by complexity (Fig. 4)",
        x_label="ground-truth size (nodes)",
        y_label="symbolic accuracy",
        log=False,
    )


def methods_section(runs: Sequence[RunDir]) -> str:
    labelled = _labelled(runs)
    if not labelled:
        return ""
    drawn = [
        ("Search progress", progress_chart(labelled)),
        ("In-domain vs OOD", id_vs_ood_chart(labelled)),
        ("Symbolic vs OOD accuracy", symbolic_vs_ood_chart(labelled)),
        ("Complexity", complexity_chart(labelled)),
    ]
    # A panel with nothing to draw is not drawn; one line says which and why.
    figures = [(caption, svg) for caption, svg in drawn if svg is not None]
    missing = [caption for caption, svg in drawn if svg is None]
    why = (
        f"<p class='note'>Not drawn, no data in these runs: {esc(', '.join(missing))}"
        + (
            " (Fig. 4 needs symbolic verdicts on both an LSR-Transform and a Feynman set)"
            if "Complexity" in missing
            else ""
        )
        + ".</p>"
        if missing
        else ""
    )
    figs = "".join(f"<figure><figcaption>{esc(c)}</figcaption>{svg}</figure>" for c, svg in figures)
    return (
        "<section id='methods'><h2>Discovery methods side by side (LLM-SRBench Table 1 and analyses)</h2>"
        "<p class='note'>One column group per run. SA: symbolic accuracy; Acc0.1: share of attempts with "
        "every prediction within 10 %; NMSE: median. Curves: the best hypothesis by training loss after "
        "each number of model calls (solid: test NMSE, dashed: training NMSE).</p>"
        f"{table1(labelled)}<div class='charts'>{figs}</div>{why}</section>"
    )
