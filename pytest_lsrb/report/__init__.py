"""`lsrb report`: one self-contained HTML page about a run, optionally compared with a baseline.

- data.py     reads an output directory (run.json, attempts.jsonl, summary.json)
- aggregate.py derives the numbers (pass@k curve, breakdowns, LLM-SRBench Table 1, errors)
- compare.py  metric deltas, flipped items and the terminal comparison (`format_comparison`)
- charts.py   SVG charts; items.py the item table's embedded data; page.py the HTML page
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_lsrb.core.nofollow import create_nofollow
from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.report.compare import Flip, comparison_lines, find_flips, format_comparison
from pytest_lsrb.report.data import load_run
from pytest_lsrb.report.page import Page, build_report
from pytest_lsrb.srbench.tables.table import paper_table_lines, table_lines


def write_report(output_dir: Path, out_file: Path, baseline_dir: Path | None = None) -> Path:
    """Read the run (and baseline), write the HTML page to `out_file`, return its path."""
    current = load_run(output_dir)
    baseline = load_run(baseline_dir) if baseline_dir is not None else None
    html = build_report(current, baseline)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    create_nofollow(out_file, html.encode("utf-8", "replace"))  # (a run dir: never through a link)
    return out_file


def table1_lines(runs: Sequence[RunDir], layout: str) -> list[str]:
    """LLM-SRBench Table 1 of `runs` for the terminal: `ours` (one row per method x group, each
    run's own table), `paper` (the paper's layout: one row per method, every run's methods in one
    table; a method two runs share is named with its run's folder) or `both`."""
    tables = [(r, (r.summary or {}).get("srbench_table")) for r in runs]
    missing = [f"no Table 1 for {r.dir}: its summary.json has no srbench_table" for r, t in tables if not t]
    present = [(r, t) for r, t in tables if t]
    if not present:
        return missing
    lines: list[str] = [*missing]
    if layout in ("ours", "both"):
        for run, _ in present:
            lines += [f"Table 1 of {run.dir}", *table_lines(run.summary or {}), ""]
    if layout in ("paper", "both"):
        merged: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for _, table in present:
            for method in {str(row.get("method") or k.rpartition(":")[0]) for k, row in table.items()}:
                seen[method] = seen.get(method, 0) + 1
        for run, table in present:
            for key, row in table.items():
                method = str(row.get("method") or key.rpartition(":")[0])
                named = f"{method} ({run.dir.name})" if seen[method] > 1 else method
                merged[f"{named}:{key.rpartition(':')[2]}"] = {**row, "method": named}
        note = next(((r.summary or {}).get("sr_release_note") for r, _ in present), None)
        lines += paper_table_lines({"srbench_table": merged, "sr_release_note": note})
    return lines


def report_command(
    output_dir: Path,
    out_file: Path | None,
    baseline_dir: Path | None,
    others: Sequence[Path] = (),
    table1: str | None = None,
) -> list[str]:
    """What `lsrb report` does; returns the lines it prints (the comparison, when there is a baseline).
    `others`: more runs for the side-by-side discovery-methods section; `table1`: also print
    LLM-SRBench Table 1 of the run and `others` in that layout (`table1_lines`)."""
    current = load_run(output_dir)
    baseline = load_run(baseline_dir) if baseline_dir is not None else None
    more = [load_run(d) for d in others]
    target = out_file if out_file is not None else output_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    page = Page(current, baseline, more)
    create_nofollow(target, page.html().encode("utf-8", "replace"))  # (never through a link)
    lines = [
        *current.warnings,
        *(baseline.warnings if baseline else []),
        *(w for r in more for w in r.warnings),
    ]
    if baseline is not None:
        lines += format_comparison(baseline.summary, current.summary, page.flips)
    lines.append(f"wrote {target} ({len(current.records)} attempts)")
    if table1 is not None:
        lines += table1_lines([current, *more], table1)
    return lines


__all__ = [
    "Flip",
    "RunDir",
    "build_report",
    "comparison_lines",
    "find_flips",
    "format_comparison",
    "load_run",
    "report_command",
    "table1_lines",
    "write_report",
]
