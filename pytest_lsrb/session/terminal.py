"""The short metrics table printed at the end of a run (readable in a CI log)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    return str(value)


def token_totals(summary: dict[str, Any]) -> str:
    """`12,345 / 678` plus cached tokens and the cost when the run has them."""
    if not summary.get("token_counted_attempts"):
        return "not reported by the endpoint"
    text = f"{int(summary.get('prompt_tokens') or 0):,} / {int(summary.get('completion_tokens') or 0):,}"
    cached_in, cached_out = (
        summary.get("cached_prompt_tokens") or 0,
        summary.get("cached_completion_tokens") or 0,
    )
    if cached_in or cached_out:
        text += f" (from the cache: {int(cached_in):,} / {int(cached_out):,})"
    if summary.get("cost") is not None:
        text += f"; cost {summary['cost']:.4f} at --lsrb-price"
    return text


def summary_lines(summary: dict[str, Any], out_dir: Path) -> list[str]:
    cfg = summary.get("config", {})
    rows: list[tuple[str, Any]] = [
        (
            "attempts",
            f"{summary['attempts']}/{summary['attempts_expected']} "
            f"({summary['items']} items, {cfg.get('samples')} samples each)",
        ),
        (
            "selected_rows_hash",
            f"{summary['selected_rows_hash'][:16]}  shard {summary['shard_index']}/{summary['shard_count']}",
        ),
        ("valid_rate", summary.get("valid_rate")),
        ("nonempty_rate", summary.get("nonempty_rate")),
        ("contains_sorry_rate", summary.get("contains_sorry_rate")),
        (
            "latency_ms p50/p95",
            f"{_fmt(summary.get('latency_ms_p50'))} / {_fmt(summary.get('latency_ms_p95'))}",
        ),
        ("generation errors", summary.get("generation_error_kinds")),
        ("tokens in/out", token_totals(summary)),
    ]
    served = summary.get("served_models") or {}
    asked = cfg.get("model")
    if served and (len(served) > 1 or (asked and asked not in served)):
        rows.append(("served model", f"{_fmt(served)} (asked for {asked or 'the default'})"))
    if cfg.get("verification", "none") != "none":
        rows += [
            ("verification success", summary.get("verification_success_rate")),
            ("verification errors", summary.get("verification_error_kinds")),
        ]
        from pytest_lsrb.tactic.verifiers.base import unjudged_note  # the Lean package: only when verifying

        unjudged = unjudged_note(summary)
        if unjudged:
            rows.append(("NOT JUDGED", unjudged))
        rows += [(k, v) for k, v in summary.items() if k.startswith("verification_pass_at_k_")]
    for key in summary.get("terminal_extra_keys", []):
        rows.append((key, summary.get(key)))
    try:
        shown = os.path.relpath(out_dir)
    except ValueError:
        shown = str(out_dir)
    if shown.startswith(".."):
        shown = str(out_dir)
    rows.append(("output", f"{shown}/ (attempts.jsonl, summary.json)"))
    width = max(len(k) for k, _ in rows)
    return [f"{k.ljust(width)}  {_fmt(v)}" for k, v in rows]


def write_summary(terminalreporter: Any, summary: dict[str, Any], out_dir: Path) -> None:
    cfg = summary.get("config", {})
    title = f"lsrb: {summary['suite']} · {cfg.get('adapter')}/{cfg.get('model') or 'default'}"
    terminalreporter.write_sep("=", title)
    for line in summary_lines(summary, out_dir):
        terminalreporter.write_line(line)
    if summary.get("srbench_table"):
        from pytest_lsrb.srbench.table import table_lines

        terminalreporter.write_line("")
        for line in table_lines(summary):
            terminalreporter.write_line(line)


def write_comparison(terminalreporter: Any, baseline_dir: Path, summary: dict[str, Any]) -> None:
    """Headline metric deltas against the baseline run (the gate lists the flipped items)."""
    from pytest_lsrb.core.errors import LsrbUsageError
    from pytest_lsrb.output.files import SUMMARY_FILE, read_json
    from pytest_lsrb.report.compare import format_comparison

    try:
        baseline = read_json(baseline_dir / SUMMARY_FILE)
    except LsrbUsageError as exc:  # the gate already read the attempts; say why, don't crash
        terminalreporter.write_line(f"lsrb: no baseline summary to compare with ({exc})")
        return
    terminalreporter.write_sep("-", f"lsrb: compared with {baseline_dir}")
    for line in format_comparison(baseline, summary, None):
        terminalreporter.write_line(line)
