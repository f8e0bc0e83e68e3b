"""A metric's declaration (`Metric`): its key, label, direction, kind, aggregation, population
and per-attempt value, and how a run's value is made from its records. The table of every
declared metric (the built-ins, the installed packages') is `engine.metric`.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_lsrb.core.metrics import pass_at_k, percentile
from pytest_lsrb.engine.outcomes import Record, judged

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
    # The tasks whose runs have it (a family's metric: its task); empty: every run.
    tasks: tuple[str, ...] = ()

    def applies_to(self, task: str | None) -> bool:
        """Whether a run of `task` has this metric (summary.json writes it, null when no attempt
        gave a value)."""
        return not self.tasks or task in self.tasks

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
