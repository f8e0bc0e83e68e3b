"""Every metric declared once: its key, label, direction, kind, aggregation and population.

The summary writes the keys declared here (`engine.summary`, streaming; a test holds each gateable
declaration's `value` equal to the summary's number on the same records), and the gate, `lsrb
compare`, the terminal comparison, the report and the several-model table read their labels,
directions and kinds from here; nobody else spells a metric.

A declaration with a per-record value (`per_record`) can be gated: the gate pairs the two runs
item by item (`item_score`) and tests the direction-aware change (`tools.gate.checks`). One without
(`wall_time_s`, Table 1's cells) is shown and compared, never tested.

Aggregations:
    rate       the share of the population's attempts whose value is true (pooled over items)
    mean       the mean of the population's values (pooled over items)
    item_mean  pass@k: the mean over items of each item's unbiased pass@k
    median,    the quantile of the population's values over the whole run (an item's own score,
    p95        for pairing, is the mean of its values)
    run        a run-level number with no per-attempt definition (shown, not gated)

A lab adds its own metric with `register_metric(Metric(...))` (or a family with
`register_family`) before the session starts, e.g. from a plugin's `pytest_configure`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.metrics import pass_at_k, percentile
from pytest_lsrb.engine.outcomes import (
    Record,
    answered,
    generation_infrastructure,
    judged,
    success,
    unreadable,
)

Direction = Literal["higher", "lower"] | None
Kind = Literal["rate", "ms", "s", "count", "number", "tokens"]
Aggregation = Literal["rate", "mean", "item_mean", "median", "p95", "run"]
Population = Callable[[Record], bool]
PerRecord = Callable[[Record], float | bool | None]


def every(record: Record) -> bool:
    """Every attempt, whoever's its outcome (error and latency rates are over all of them)."""
    return True


@dataclass(frozen=True)
class Metric:
    """One metric, declared once. `key` is its summary key (the one spelling)."""

    key: str
    label: str
    direction: Direction
    kind: Kind
    aggregation: Aggregation
    population: Population = judged
    per_record: PerRecord | None = None
    k: int | None = None  # pass@k
    timing: bool = False  # measures the machine, not the model: compared as timing, never a verdict
    in_summary: bool = True  # summary.json has `key` (False: computed from records only)

    @property
    def name(self) -> str:
        """The gate's spelling (`pass_at_1`, `valid_rate`, `field:x`)."""
        return f"pass_at_{self.k}" if self.k is not None else self.key

    @property
    def summary_key(self) -> str | None:
        return self.key if self.in_summary else None

    @property
    def gateable(self) -> bool:
        return self.per_record is not None

    @property
    def quantile(self) -> float | None:
        return {"median": 0.5, "p95": 0.95}.get(self.aggregation)

    def values(self, records: Iterable[Record]) -> list[float]:
        """The population's per-attempt values (None values left out)."""
        if self.per_record is None:
            return []
        out = []
        for rec in records:
            if self.population(rec):
                v = self.per_record(rec)
                if v is not None and not (isinstance(v, float) and math.isnan(v)):
                    out.append(float(v))
        return out

    def item_counts(self, records: Sequence[Record]) -> tuple[int, int]:
        """(attempts in the population, how many count) for one item (0/1 metrics)."""
        values = self.values(records)
        return len(values), int(sum(v != 0 for v in values))

    def item_score(self, records: Sequence[Record], samples: int) -> float | None:
        """This item's score; None when it has too few samples (pass@k needs `samples`, the run's
        samples per item, so every k uses the same items) or no value."""
        if self.k is not None:
            return self.score_counts(*self.item_counts(records), samples)
        values = self.values(records)
        return sum(values) / len(values) if values else None

    def score_counts(self, n: int, c: int, samples: int) -> float | None:
        """`item_score` of an item with `n` attempts in the population, `c` of them counting."""
        if n == 0:
            return None
        if self.k is None:
            return c / n
        need = max(self.k, samples)
        return pass_at_k(n, c, self.k) if n >= need else None

    def value(self, by_item: Mapping[str, Sequence[Record]], samples: int) -> tuple[float | None, int]:
        """The run's value over `by_item` and the number of items it covers."""
        if self.k is not None:
            scores = [s for recs in by_item.values() if (s := self.item_score(recs, samples)) is not None]
            return (sum(scores) / len(scores) if scores else None), len(scores)
        pooled: list[float] = []
        items = 0
        for recs in by_item.values():
            vals = self.values(recs)
            pooled += vals
            items += bool(vals)
        if not pooled:
            return None, items
        q = self.quantile
        if q is not None:
            return quantile(pooled, q), items
        return sum(pooled) / len(pooled), items

    def worse(self, before: float, after: float) -> bool:
        """Whether `after` is worse than `before` in this metric's direction."""
        return after < before if self.direction != "lower" else after > before


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of `values` by summary.json's own rule (`core.metrics.percentile`)."""
    found = percentile(sorted(values), q * 100)
    return math.nan if found is None else found


# -- per-record values -----------------------------------------------------------------------------


def _field(name: str) -> PerRecord:
    return lambda r: bool(r.get(name))


def _number(name: str) -> PerRecord:
    def read(r: Record) -> float | None:
        v = r.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return read


def _tokens(r: Record) -> float | None:
    p, c = r.get("prompt_tokens"), r.get("completion_tokens")
    return None if p is None and c is None else float(int(p or 0) + int(c or 0))


def _verified_latency(r: Record) -> float | None:
    return _number("verification_latency_ms")(r) if r.get("verification_attempted") else None


# -- the declarations ---------------------------------------------------------------------------

METRICS: dict[str, Metric] = {}
ALIASES: dict[str, str] = {"verification_success_rate": "success_rate"}


def register_metric(metric: Metric) -> Metric:
    """Declare `metric` (its key must be new); returns it."""
    if metric.key in METRICS or metric.key in ALIASES:
        raise ValueError(f"metric {metric.key!r} is declared already")
    METRICS[metric.key] = metric
    return metric


for _m in (
    Metric("attempts", "attempts", None, "count", "run"),
    Metric("items", "items", None, "count", "run"),
    Metric("valid_rate", "valid rate", "higher", "rate", "rate", answered, _field("valid")),
    Metric("nonempty_rate", "non-empty rate", "higher", "rate", "rate", answered, _field("nonempty")),
    Metric(
        "contains_sorry_rate",
        "contains sorry rate",
        "lower",
        "rate",
        "rate",
        answered,
        _field("contains_sorry"),
    ),
    Metric(  # no usable answer from the endpoint (infrastructure), of every attempt
        "generation_error_rate",
        "generation errors",
        "lower",
        "rate",
        "rate",
        every,
        generation_infrastructure,
    ),
    Metric(  # the model's own: answered, nothing usable in it (`outcomes.unreadable`)
        "unreadable_answer_rate",
        "unreadable answers",
        "lower",
        "rate",
        "rate",
        answered,
        unreadable,
    ),
    Metric(
        "verification_attempted_rate",
        "verification attempted",
        None,
        "rate",
        "rate",
        every,
        _field("verification_attempted"),
    ),
    Metric("success_rate", "success", "higher", "rate", "rate", judged, success),
    Metric(
        "verification_error_rate",
        "verification error rate",
        "lower",
        "rate",
        "rate",
        every,
        lambda r: bool(r.get("verification_error_kind")),
    ),
    Metric(
        "latency_ms_mean",
        "latency mean",
        "lower",
        "ms",
        "mean",
        every,
        _number("latency_ms"),
        timing=True,
    ),
    Metric(
        "latency_ms_p50",
        "latency p50",
        "lower",
        "ms",
        "median",
        every,
        _number("latency_ms"),
        timing=True,
    ),
    Metric("latency_ms_p95", "latency p95", "lower", "ms", "p95", every, _number("latency_ms"), timing=True),
    Metric(
        "verification_latency_ms_p50",
        "verification latency p50",
        "lower",
        "ms",
        "median",
        judged,
        _verified_latency,
        timing=True,
    ),
    Metric("wall_time_s", "wall time", "lower", "s", "run", timing=True),
    Metric("prompt_tokens", "prompt tokens", None, "tokens", "run"),
    Metric("cost", "cost", "lower", "number", "run"),  # with --lsrb-price (engine.cost)
    Metric("completion_tokens", "completion tokens", None, "tokens", "run"),
    Metric(
        "tokens_per_attempt",
        "tokens per attempt",
        "lower",
        "tokens",
        "mean",
        answered,
        _tokens,
        in_summary=False,
    ),
    Metric(
        "median_nmse_id",
        "median NMSE (ID)",
        "lower",
        "number",
        "median",
        judged,
        _number("nmse_id"),
        in_summary=False,
    ),
    Metric(
        "median_nmse_ood",
        "median NMSE (OOD)",
        "lower",
        "number",
        "median",
        judged,
        _number("nmse_ood"),
        in_summary=False,
    ),
):
    register_metric(_m)


# -- families: keys a suite adds, recognised by pattern --------------------------------------------

Family = Callable[[str], Metric | None]
FAMILIES: list[Family] = []


def register_family(family: Family) -> Family:
    """Declare a family of metrics recognised by their key (returns None for other keys)."""
    FAMILIES.append(family)
    return family


_PASS_AT: Final = re.compile(r"^(?:pass_at_|pass@|pass_at_k_|verification_pass_at_k_)(\d+)$")


@register_family
def pass_at(key: str) -> Metric | None:
    m = _PASS_AT.match(key)
    if not m:
        return None
    k = int(m.group(1))
    if k < 1:
        raise LsrbUsageError(f"metric '{key}': pass@k needs k >= 1.")
    return Metric(
        f"verification_pass_at_k_{k}", f"pass@{k}", "higher", "rate", "item_mean", judged, success, k
    )


_TABLE: Final = (
    (re.compile(r"^(symbolic_accuracy|acc_tau|acc_0)\w*$"), "higher", "rate"),
    (re.compile(r"^r2\w*$"), "higher", "number"),
    (re.compile(r"^nmse\w*$"), "lower", "number"),
)


@register_family
def srbench_table(key: str) -> Metric | None:
    """llm_srbench's Table 1 cells in summary.json (run-level: shown and compared, not gated)."""
    for pattern, direction, kind in _TABLE:
        if pattern.match(key):
            return Metric(key, key, direction, kind, "run")  # type: ignore[arg-type]
    return None


@register_family
def record_field(key: str) -> Metric | None:
    """`field:NAME`: any true/false record field, over judged attempts."""
    if key.startswith("field:") and len(key) > 6:
        return Metric(key, key, "higher", "rate", "rate", judged, _field(key[6:]), in_summary=False)
    return None


KNOWN_METRICS: Final = (
    "pass_at_K, valid_rate, success_rate, generation_error_rate, unreadable_answer_rate, "
    "tokens_per_attempt, latency_ms_p95, "
    "median_nmse_id, ... (docs/gating.md) or field:NAME"
)


def find(key: str) -> Metric | None:
    """The declaration of `key` (declared, an alias, or a family's), or None."""
    key = ALIASES.get(key, key)
    if key in METRICS:
        return METRICS[key]
    for family in FAMILIES:
        found = family(key)
        if found is not None:
            return found
    return None


def resolve_metric(name: str) -> Metric:
    """The metric the gate or compare is asked for; one sentence for an unknown or ungateable one."""
    text = name.strip()
    found = find(text)
    if found is None:
        raise LsrbUsageError(f"unknown metric '{name}' (expected {KNOWN_METRICS}).")
    if not found.gateable:
        raise LsrbUsageError(
            f"metric '{name}' is a run-level number with no per-attempt value: it is shown and "
            "compared, but cannot be tested item by item."
        )
    return found


def declared(*summaries: Mapping[str, Any] | None) -> list[Metric]:
    """The declared metrics present (as numbers) in any of the summaries, in display order: the
    declarations' order, then each family's keys (pass@k by k)."""
    present: set[str] = set()
    for s in summaries:
        present |= {k for k, v in (s or {}).items() if _is_number(v)}
    out = [m for m in METRICS.values() if m.in_summary and m.key in present]
    extra: list[tuple[int, int, str, Metric]] = []
    for key in sorted(present - set(METRICS)):
        for rank, family in enumerate(FAMILIES):
            found = family(key)
            if found is not None and found.in_summary:
                extra.append((rank, found.k or 0, key, replace(found, key=key)))
                break
    return out + [m for *_, m in sorted(extra, key=lambda e: e[:3])]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
