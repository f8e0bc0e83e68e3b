"""What `lsrb view` shows, as JSON-ready data: the runs under a folder, one run as it goes, and two
runs compared item by item.

Nothing is counted here: a run is read as `lsrb report` reads it (`report.data.load_run`, with
its provisional summary while the run has not finished), its attempts are the report's item rows
(`report.items.item_payload`), its numbers the summary's under the metric declarations' labels
(`report.compare.metric_deltas`), two runs are compared by `report.compare.compare` (the gate's
flips), and the attempts in flight are the run's live files (`output.live`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.durations import duration
from pytest_lsrb.output.live import read_live
from pytest_lsrb.output.owner import held
from pytest_lsrb.output.reader import run_name
from pytest_lsrb.report import aggregate as agg
from pytest_lsrb.report.compare import Delta, compare, fmt_delta, fmt_value, metric_deltas
from pytest_lsrb.report.data import answer_field, load_run
from pytest_lsrb.report.items import item_payload
from pytest_lsrb.view.runs import Found

MAX_ROWS: Final = 2000  # attempts sent to the page (the newest); the report has them all


def shown(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.1f}%" if kind == "rate" else fmt_value(value, kind)  # type: ignore[arg-type]


def headline(summary: Mapping[str, Any] | None) -> dict[str, Any]:
    """The numbers a run's header shows, from its summary (or the provisional one)."""
    s = summary or {}
    return {
        "attempts": s.get("attempts") or 0,
        "expected": s.get("attempts_expected"),
        "judged": s.get("judged_attempts") or 0,
        "success_rate": s.get("success_rate"),
        "prompt_tokens": s.get("prompt_tokens") or 0,
        "completion_tokens": s.get("completion_tokens") or 0,
        "generation_errors": s.get("generation_error_kinds") or {},
        "unreadable": s.get("unreadable_answers") or 0,
        "infrastructure": s.get("infrastructure_attempts") or 0,
    }


def run_listing(found: list[Found]) -> list[dict[str, Any]]:
    """One line per run under the folder, from its run.json and summary.json alone (a run that
    has not finished: its attempts counted as lines); a file that cannot be read is left out."""
    out = []
    for f in found:
        head, summary = _json(f.dir / "run.json"), _json(f.dir / "summary.json")
        config = head.get("config") if isinstance(head.get("config"), dict) else {}
        line = {
            "name": f.name,
            "suite": head.get("suite") or summary.get("suite") or "?",
            "model": run_name(config or summary.get("config") or {}),
            "status": "running" if held(f.dir) else ("finished" if summary else "stopped"),
            "started": head.get("started_at"),
            **headline(summary or None),
        }
        if not summary:
            line["attempts"] = _lines(f.dir / "attempts.jsonl")
            line["expected"] = head.get("attempts_expected")
        out.append(line)
    return out


def _json(path: Path, limit: int = 8 << 20) -> dict[str, Any]:
    try:
        if path.is_symlink() or path.stat().st_size > limit:
            return {}
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return 0


class RunCache:
    """The part of a run's state read from its files, kept while they do not change (a page
    polls every few seconds; a run's attempts.jsonl is read again only when it grew)."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    @staticmethod
    def _stamp(run_dir: Path) -> tuple[Any, ...]:
        out: list[Any] = []
        for name in ("run.json", "attempts.jsonl", "summary.json"):
            try:
                st = (run_dir / name).stat()
                out.append((st.st_size, st.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    def state(self, found: Found) -> dict[str, Any]:
        stamp = self._stamp(found.dir)
        kept = self._kept.get(found.dir)
        if kept is None or kept[0] != stamp:
            kept = (stamp, run_files_state(found))
            self._kept[found.dir] = kept
        return {**kept[1], **live_state(found.dir)}


def run_files_state(found: Found) -> dict[str, Any]:
    run = load_run(found.dir)
    scored = agg.score(run)
    payload = item_payload(scored, answer_field(run.task_name))
    metrics = [
        {"label": d.metric.label, "value": shown(d.current, d.metric.kind)}
        for d in metric_deltas(None, run.summary)
        if d.current is not None and d.metric.key not in ("prompt_tokens", "completion_tokens")
    ]
    return {
        "name": found.name,
        "suite": run.suite,
        "model": run.name,
        "started": run.header.get("started_at"),
        "warnings": run.warnings[:20],
        "headline": headline(run.summary),
        "metrics": metrics,
        "columns": payload["columns"],
        "rows": payload["rows"][-MAX_ROWS:],
        "rows_total": len(payload["rows"]),
        "finished": (found.dir / "summary.json").exists(),
    }


def live_state(run_dir: Path) -> dict[str, Any]:
    """Whether the run is going on now, and its attempts of several calls in flight (the search
    progress: calls of the budget, the best score so far, elapsed)."""
    now = time.time()
    flying = []
    for a in read_live(run_dir, now):
        flying.append({**a, "elapsed": duration(max(0.0, now - a["started"]))})
    return {"running": held(run_dir), "in_flight": flying}


def change(d: Delta) -> str:
    """A delta as the report's cards say it: a rate's in percentage points."""
    if d.metric.kind == "rate" and d.delta is not None:
        return f"{d.delta * 100:+.1f} pp" if d.delta else "±0"
    return fmt_delta(d)


def comparison_state(baseline: Found, current: Found) -> dict[str, Any]:
    """Two runs item by item: metric deltas, the items whose pass@1 moved (the gate's flips),
    and every attempt of the current run beside the baseline's answer and outcome."""
    base, cur = load_run(baseline.dir), load_run(current.dir)
    comparison = compare(base, cur)
    payload = item_payload(
        comparison.current_scored, answer_field(cur.task_name), comparison.baseline_scored, comparison.flips
    )
    cols = {name: i for i, name in enumerate(payload["columns"])}
    rows = [
        {
            "item": r[cols["item"]],
            "k": r[cols["k"]],
            "before": r[cols["base"]],
            "after": r[cols["outcome"]],
            "before_answer": r[cols["base_answer"]],
            "after_answer": r[cols["answer"]],
            "verdict": r[cols["verdict"]],
            "flip": r[cols["flip"]],
        }
        for r in payload["rows"]
    ]
    now_items = {s.item_id for s in comparison.current_scored}
    only_before = sorted({s.item_id for s in comparison.baseline_scored} - now_items)
    return {
        "baseline": {"name": baseline.name, "model": base.name, "hash": base.selected_rows_hash},
        "current": {"name": current.name, "model": cur.name, "hash": cur.selected_rows_hash},
        "deltas": [
            {
                "label": d.metric.label,
                "baseline": shown(d.baseline, d.metric.kind),
                "current": shown(d.current, d.metric.kind),
                "change": change(d),
                "verdict": d.verdict,
            }
            for d in comparison.deltas
        ],
        "regressed": [f.item_id for f in comparison.flips if f.direction == "regressed"],
        "improved": [f.item_id for f in comparison.flips if f.direction == "improved"],
        "rows": rows[:MAX_ROWS],
        "rows_total": len(rows),
        "only_in_baseline": only_before,
    }
