"""`lsrb report`: one self-contained HTML page about a run, optionally compared with a baseline.

- data.py     reads an output directory (run.json, attempts.jsonl, summary.json)
- aggregate.py derives the numbers (pass@k curve, breakdowns, LLM-SRBench Table 1, errors)
- compare.py  metric deltas, flipped items and the terminal comparison (`format_comparison`)
- charts.py   SVG charts; items.py the item table's embedded data; page.py the HTML page
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.report.compare import Flip, comparison_lines, find_flips, format_comparison
from pytest_lsrb.report.data import load_run
from pytest_lsrb.report.page import Page, build_report


def write_report(output_dir: Path, out_file: Path, baseline_dir: Path | None = None) -> Path:
    """Read the run (and baseline), write the HTML page to `out_file`, return its path."""
    current = load_run(output_dir)
    baseline = load_run(baseline_dir) if baseline_dir is not None else None
    html = build_report(current, baseline)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(html, encoding="utf-8", errors="replace")
    return out_file


def report_command(
    output_dir: Path, out_file: Path | None, baseline_dir: Path | None, others: Sequence[Path] = ()
) -> list[str]:
    """What `lsrb report` does; returns the lines it prints (the comparison, when there is a baseline).
    `others`: more runs for the side-by-side discovery-methods section."""
    current = load_run(output_dir)
    baseline = load_run(baseline_dir) if baseline_dir is not None else None
    more = [load_run(d) for d in others]
    target = out_file if out_file is not None else output_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    page = Page(current, baseline, more)
    target.write_text(page.html(), encoding="utf-8", errors="replace")
    lines = [
        *current.warnings,
        *(baseline.warnings if baseline else []),
        *(w for r in more for w in r.warnings),
    ]
    if baseline is not None:
        lines += format_comparison(baseline.summary, current.summary, page.flips)
    lines.append(f"wrote {target} ({len(current.records)} attempts)")
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
    "write_report",
]
