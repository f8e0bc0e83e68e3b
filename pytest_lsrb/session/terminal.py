"""What a run prints: its header, the model calls it plans, and the short metrics table at the end
(readable in a CI log)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_lsrb.core.durations import latency
from pytest_lsrb.core.errors import GENERATION_ERROR_DOMAINS, MODEL_DOMAINS, LsrbUsageError
from pytest_lsrb.engine.metric import summary_metrics
from pytest_lsrb.engine.outcomes import subset_note, unreadable_note
from pytest_lsrb.engine.task import Task, get_task

if TYPE_CHECKING:
    from pytest_lsrb.engine.plan import SuiteRun

PASS_AT_K = re.compile(r"^verification_pass_at_k_\d+$")


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    return str(value)


def _latency(ms: Any) -> str:
    """`412 ms`, `2.41 s`, `3m34s` (`core.durations.latency`); `-` when not measured."""
    return latency(float(ms)) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else "-"


def of(value: Any, denominator: Any, what: str) -> str:
    """A rate with what it is a rate of: `0.625 (of 8 answered)`."""
    return _fmt(value) if denominator is None else f"{_fmt(value)} (of {denominator} {what})"


def not_judged(summary: Mapping[str, Any]) -> str | None:
    """Attempts outside the model's metrics, or None when every attempt was judged."""
    infra, skipped = summary.get("infrastructure_attempts") or 0, summary.get("skipped_attempts") or 0
    if not infra and not skipped:
        return None
    parts = [f"{infra} infrastructure errors (tests errored)"] if infra else []
    parts += (
        [f"{skipped} skipped (no verdict to give: a replay profile's skip, no symbolic verdict)"]
        if skipped
        else []
    )
    return f"{' and '.join(parts)} of {summary.get('attempts')} attempts; none counts against the model"


def task_of(summary: Mapping[str, Any]) -> Task[Any] | None:
    try:
        return get_task(str((summary.get("config") or {}).get("task")))
    except LsrbUsageError:
        return None


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


def generation_rows(summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """`generation errors` (no usable answer from the endpoint: transport, provider, harness) and,
    apart, `unreadable answers` (the endpoint answered; nothing usable was in it: the model's own),
    each counted once (`outcomes.unreadable`), as summary.json, the report and the gate count them."""
    kinds = summary.get("generation_error_kinds")
    kinds = kinds if isinstance(kinds, dict) else {}
    unread = summary.get("unreadable_answers")
    if unread is None:  # a summary written before the two were apart: its kinds hold both
        unread = sum(n for k, n in kinds.items() if GENERATION_ERROR_DOMAINS.get(k) in MODEL_DOMAINS)
        kinds = {k: n for k, n in kinds.items() if GENERATION_ERROR_DOMAINS.get(k) not in MODEL_DOMAINS}
    rows: list[tuple[str, Any]] = [("generation errors", kinds or "none")]
    if unread:
        rows.append(("unreadable answers", unreadable_note(int(unread), summary.get("answered_attempts"))))
    return rows


def cut_rows(summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The share of answers the endpoint cut at --lsrb-max-tokens, when any was: a cut answer is
    the model's (it answered), but a limit too small for the task makes every score meaningless."""
    cut, said = summary.get("answers_cut_by_max_tokens") or 0, summary.get("answers_with_finish_reason") or 0
    if not cut or not said:
        return []
    limit = (summary.get("config") or {}).get("max_tokens")
    at = f" of {limit}" if limit else ""
    return [
        (
            "cut by max tokens",
            f"{cut} of {said} answers ({100.0 * cut / said:.1f} %) stopped at the limit{at} tokens "
            "(judged as cut: a limit below what the task's answer needs makes the score say nothing)",
        )
    ]


def headline_rows(summary: Mapping[str, Any], verified: bool) -> list[tuple[str, Any]]:
    """The run's own figure where its protocol names one (`headline` in summary.json: SorryDB's
    multi_tactic counts a sorry when any of its 12 tactics verifies, so its row is pass@12 and the
    `success` above is one tactic's share)."""
    head = summary.get("headline")
    if not isinstance(head, Mapping) or not isinstance(head.get("metric"), str):
        return []
    value, items = summary.get(head["metric"]), summary.get("verification_pass_at_k_items")
    row = f'; the leaderboard\'s "{head["row"]}" row' if head.get("row") else ""
    checked = "" if verified else ", valid answers, not verified"
    text = f"{_fmt(value)} (of {items} items{checked}): {head.get('protocol')}'s figure{row}"
    return [(f"headline {head.get('label')}", text)]


def attempts_line(summary: dict[str, Any], samples: Any) -> str:
    """`37/37 (37 items, 1 samples each)`; an unfinished run says of how many items:
    `1/40 (1 of 20 items, 2 samples each)`."""
    items, expected = summary["items"], summary.get("items_expected")
    of_items = f"{items} of {expected}" if expected is not None and items != expected else f"{items}"
    return f"{summary['attempts']}/{summary['attempts_expected']} ({of_items} items, {samples} samples each)"


def summary_lines(summary: dict[str, Any], out_dir: Path) -> list[str]:
    cfg = summary.get("config", {})
    rows: list[tuple[str, Any]] = [
        ("attempts", attempts_line(summary, cfg.get("samples"))),
        (
            "selected_rows_hash",
            f"{summary['selected_rows_hash'][:16]}  shard {summary['shard_index']}/{summary['shard_count']}",
        ),
        ("valid_rate", of(summary.get("valid_rate"), summary.get("answered_attempts"), "answered")),
        ("nonempty_rate", of(summary.get("nonempty_rate"), summary.get("answered_attempts"), "answered")),
        (
            "latency p50/p95",
            f"{_latency(summary.get('latency_ms_p50'))} / {_latency(summary.get('latency_ms_p95'))}",
        ),
        *generation_rows(summary),
        ("tokens in/out", token_totals(summary)),
        *cut_rows(summary),
    ]
    served = summary.get("served_models") or {}
    asked = cfg.get("model")
    if served and (len(served) > 1 or (asked and asked not in served)):
        rows.append(("served model", f"{_fmt(served)} (asked for {asked or 'the default'})"))
    judged = summary.get("judged_attempts")
    left_out = subset_note(summary)  # synthetic: the goals that never reached Lean
    verified = summary.get("verification_success_rate") is not None
    success = summary.get("success_rate", summary.get("verification_success_rate"))
    shown = of(success, judged, "judged" + left_out)
    rows.append(("success", shown if verified else f"{shown}: valid answers, not verified"))
    rows += headline_rows(summary, verified)
    if verified:
        rows.append(("verification errors", summary.get("verification_error_kinds")))
    items = summary.get("verification_pass_at_k_items")
    rows += [
        (f"pass@{k.rsplit('_', 1)[1]}", of(v, items, "items with every sample judged" + left_out))
        for k, v in summary.items()
        if PASS_AT_K.match(k)
    ]
    unjudged = not_judged(summary)
    if unjudged:
        rows.append(("NOT JUDGED", unjudged))
    task = task_of(summary)
    rows += task.terminal_rows(summary) if task is not None else []
    # the declared metrics the engine does not write itself (a plug-in's), as summary.json has them
    rows += [(m.label, summary[m.key]) for m in summary_metrics(cfg.get("task")) if m.key in summary]
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
    from pytest_lsrb.output.reader import run_name

    cfg = summary.get("config", {})
    title = f"lsrb: {summary['suite']} · {run_name(cfg)}"
    terminalreporter.write_sep("=", title)
    for line in summary_lines(summary, out_dir):
        terminalreporter.write_line(line)
    task = task_of(summary)
    for line in task.terminal_lines(summary) if task is not None else []:
        terminalreporter.write_line(line)


def header_lines(run: SuiteRun) -> list[str]:
    """pytest's report header: the suite, adapter, selection and the calls the run plans."""
    v = run.config.values
    adapter = run.config.extra_identity.get("adapter") or v["adapter"]  # a user's own: its class
    return [
        f"lsrb: suite {run.spec.name}, adapter {adapter}, "
        f"{len({c.item_id for c in run.cases})} items x {v['samples']} samples "
        f"(shard {v['shard_index']}/{v['shard_count']}), seed {v['seed']}, "
        f"selected_rows_hash {run.selected_hash[:12]}",
        planned_calls_line(run),
    ]


def planned_calls_line(run: SuiteRun) -> str:
    """How many model calls the run plans (what `--collect-only` tells before spending any)."""
    calls = run.task.calls_per_attempt(run.config.values)
    attempts = len(run.cases)
    bound = "at most " if calls > 1 else ""
    return (
        f"lsrb: {attempts} attempts planned, {bound}{attempts * calls:,} model calls "
        f"({calls:,} per attempt{'; a cached answer costs none' if run.config['cache_dir'] else ''})"
    )
