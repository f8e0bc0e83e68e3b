"""The numbers a report shows, derived from attempt records: pure functions over scored attempts.

The summary already holds the headline rates and the breakdowns by repository and Lean version;
what it does not hold (the whole pass@k curve, the latency distribution, breakdowns by tag) is
computed here from the records, with the same formulas (`metrics.py`, `summary.GroupCounts`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pytest_lsrb.core.metrics import pass_at_k_curve as curve_over_items
from pytest_lsrb.engine import outcomes
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.summary import GroupCounts
from pytest_lsrb.engine.task import Judgement
from pytest_lsrb.output.reader import RunDir
from pytest_lsrb.report.data import item_facets, judge_for


@dataclass(frozen=True)
class Scored:
    """One attempt with what the report derives from it (`success`: `outcomes.success`)."""

    record: AttemptRecord
    judgement: Judgement
    success: bool
    facets: Mapping[str, Any]

    @property
    def judged(self) -> bool:
        return outcomes.judged(self.record)

    @property
    def item_id(self) -> str:
        return str(self.record["item_id"])


def score(run: RunDir) -> list[Scored]:
    judge = judge_for(run.task_name)
    out = []
    for rec in run.records:
        out.append(
            Scored(
                record=rec,
                judgement=judge(rec),
                success=outcomes.success(rec),
                facets=item_facets(rec, run.index_rows.get(str(rec["item_id"]))),
            )
        )
    return out


def per_item_counts(scored: Iterable[Scored]) -> dict[str, tuple[int, int]]:
    """item_id -> (judged samples, successes): `outcomes.per_item_counts`."""
    return outcomes.per_item_counts(s.record for s in scored)


def pass_at_k_curve(scored: Sequence[Scored], samples: int) -> list[tuple[int, float]]:
    """Item-level pass@k for every k from 1 to `samples` (the run's samples per item), each over
    the same items (those with `samples` judged samples), as summary.json computes it."""
    ks = list(range(1, samples + 1))
    curve = curve_over_items(per_item_counts(scored), ks)
    return [(k, v) for k, v in curve.values.items() if v is not None]


def curve_from_summary(summary: Mapping[str, Any] | None) -> list[tuple[int, float]]:
    """The pass@k points a summary holds (used when the records are not at hand)."""
    points = []
    for key, value in (summary or {}).items():
        if key.startswith("verification_pass_at_k_") and isinstance(value, (int, float)):
            try:
                points.append((int(key.rsplit("_", 1)[1]), float(value)))
            except ValueError:
                continue
    return sorted(points)


def latencies(scored: Iterable[Scored]) -> list[float]:
    """Generation latencies of attempts that called the model (cached attempts took no time)."""
    out = []
    for s in scored:
        value = s.record.get("latency_ms")
        if isinstance(value, (int, float)) and math.isfinite(value) and not s.record.get("cached"):
            out.append(float(value))
    return out


def attempt_tokens(rec: AttemptRecord) -> int | None:
    """An attempt's prompt + completion tokens; None when its calls reported none."""
    p, c = rec.get("prompt_tokens"), rec.get("completion_tokens")
    if p is None and c is None:
        return None
    return int(p or 0) + int(c or 0)


def tokens_per_item(scored: Iterable[Scored]) -> list[float]:
    """Each item's tokens (prompt + completion over its samples), for the items whose calls
    reported any."""
    per_item: dict[str, int] = {}
    for s in scored:
        tokens = attempt_tokens(s.record)
        if tokens is not None:
            per_item[s.item_id] = per_item.get(s.item_id, 0) + tokens
    return [float(v) for v in per_item.values()]


def finished_at(record: AttemptRecord) -> datetime | None:
    """When the attempt finished (`finished_at`), or None when the record has no readable time."""
    return _when(record.get("finished_at"))


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def timeline(scored: Sequence[Scored], started: Any = None) -> list[tuple[float, int, int]]:
    """(minutes since the run started, attempts finished, of them successes) after each attempt,
    in the order they finished: a run's pace, its stalls (an outage) and its score over time.
    `started`: run.json's `started_at` (else the first attempt's time)."""
    times = sorted(
        ((t, s.judged and s.success) for s in scored if (t := finished_at(s.record)) is not None),
        key=lambda p: p[0],
    )
    if not times:
        return []
    origin = _when(started)
    if origin is None or origin > times[0][0]:
        origin = times[0][0]
    out, won = [], 0
    for done, (when, success) in enumerate(times, 1):
        won += bool(success)
        out.append(((when - origin).total_seconds() / 60.0, done, won))
    return out


@dataclass(frozen=True)
class KindCount:
    kind: str
    domain: str
    count: int


def generation_errors(scored: Iterable[Scored]) -> list[KindCount]:
    """Generation errors: no usable answer from the endpoint (transport, provider, harness). The
    model's unreadable answers are its output, not an error (`unreadable_answers`), as summary.json
    and the terminal count them (`outcomes.unreadable`)."""
    counts: Counter[tuple[str, str]] = Counter()
    for s in scored:
        if outcomes.generation_infrastructure(s.record):
            kind = str(s.record.get("generation_error_kind"))
            counts[(kind, str(s.record.get("generation_error_domain") or "unknown"))] += 1
    return _sorted_counts(counts)


def unreadable_answers(scored: Iterable[Scored]) -> int:
    """Answered attempts with nothing usable in the answer (`outcomes.unreadable`)."""
    return sum(outcomes.unreadable(s.record) for s in scored)


def verification_errors(scored: Iterable[Scored]) -> list[KindCount]:
    """Verification error kinds, with the Lean error subkind when there is one (lean_error/parse)."""
    counts: Counter[tuple[str, str]] = Counter()
    for s in scored:
        kind = s.record.get("verification_error_kind")
        if kind:
            sub = s.record.get("verification_error_subkind")
            label = f"{kind}/{sub}" if sub else str(kind)
            counts[(label, str(s.record.get("verification_error_domain") or "unknown"))] += 1
    return _sorted_counts(counts)


def verification_outcomes(scored: Iterable[Scored]) -> list[KindCount]:
    counts: Counter[tuple[str, str]] = Counter()
    for s in scored:
        if s.record.get("verification_attempted"):
            outcome = str(s.record.get("verification_outcome") or "unknown")
            counts[(outcome, str(s.record.get("verification_error_domain") or "none"))] += 1
    return _sorted_counts(counts)


def _sorted_counts(counts: Counter[tuple[str, str]]) -> list[KindCount]:
    return [KindCount(k, d, n) for (k, d), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


# -- breakdowns --------------------------------------------------------------------------------


# summary.json's own breakdowns, by the facet the report groups by.
SUMMARY_BREAKDOWNS = {"repo": "by_repository", "lean_version": "by_lean_version"}


def breakdown(run: RunDir, scored: Iterable[Scored], facet: str) -> dict[str, dict[str, Any]]:
    """Per group of `facet`: summary.json's `by_repository` / `by_lean_version` when the run's
    summary has them; else (tags, older runs, records without repository fields that the index
    join fills in) the same aggregation (`summary.GroupCounts`) over the records."""
    key = SUMMARY_BREAKDOWNS.get(facet)
    from_summary = (run.summary or {}).get(key) if key else None
    if isinstance(from_summary, dict) and from_summary and all(map(_group_ok, from_summary.values())):
        return {str(name): group for name, group in from_summary.items()}
    groups: dict[str, GroupCounts] = {}
    keys_of = facet_keys(facet)
    for s in scored:
        for name in keys_of(s):
            groups.setdefault(name, GroupCounts()).add(s.record)
    return {name: group.finish(run.samples) for name, group in sorted(groups.items())}


def _group_ok(group: Any) -> bool:
    """A summary group the report can show (summary.json is read data: it may be tampered)."""
    if not isinstance(group, dict):
        return False
    counts = [group.get(k) for k in ("attempts", "items", "judged_attempts")]
    rates = [group.get(k) for k in ("success_rate", "pass_at_1")]
    return all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts) and all(
        r is None or (isinstance(r, (int, float)) and not isinstance(r, bool) and 0 <= r <= 1) for r in rates
    )


NO_TAG = "(no tag)"


def facet_keys(facet: str) -> Callable[[Scored], list[str]]:
    def keys(s: Scored) -> list[str]:
        value = s.facets.get(facet)
        if isinstance(value, list):
            return [str(v) for v in value] or [NO_TAG]
        return [] if value is None else [str(value)]

    return keys


# -- LLM-SRBench ---------------------------------------------------------------------------------
# Table 1 itself is srbench.tables.table.table1 (the summary's own implementation).


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


@dataclass(frozen=True)
class PredictionSample:
    """A few (true, predicted) points of one problem's best attempt, for a scatter plot."""

    item_id: str
    sample_index: int
    split: str
    points: list[tuple[float, float]]
    nmse: float | None


SAMPLE_FIELDS = (("pred_sample_id", "nmse_id", "in-domain"), ("pred_sample_ood", "nmse_ood", "OOD"))


def prediction_samples(scored: Iterable[Scored], limit: int = 12) -> list[PredictionSample]:
    """Per problem, the sampled points of its attempt with the lowest NMSE; at most `limit` problems.

    Records without samples (a suite that does not store them) simply yield nothing.
    """
    best: dict[tuple[str, str], PredictionSample] = {}
    for s in scored:
        for field, nmse_field, split in SAMPLE_FIELDS:
            points = _points(s.record.get(field))
            if not points:
                continue
            nmse = _number(s.record.get(nmse_field))
            key = (s.item_id, split)
            current = best.get(key)
            rank = math.inf if nmse is None else nmse
            if current is None or rank < (math.inf if current.nmse is None else current.nmse):
                best[key] = PredictionSample(
                    s.item_id, int(s.record.get("sample_index") or 0), split, points, nmse
                )
    ordered = sorted(best.values(), key=lambda p: (p.item_id, p.split != "in-domain"))
    return ordered[:limit]


def _points(value: Any, cap: int = 500) -> list[tuple[float, float]]:
    if not isinstance(value, list):
        return []
    out = []
    for pair in value[:cap]:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            y, yhat = _number(pair[0]), _number(pair[1])
            if y is not None and yhat is not None:
                out.append((y, yhat))
    return out
