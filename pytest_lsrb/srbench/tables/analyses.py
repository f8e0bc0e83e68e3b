"""The paper's analyses from attempt records, beside Table 1 in `summary.json` (streaming).

- `sr_search_progress` — per discovery method, the median over attempts of the best hypothesis's
  training, in-domain test and OOD NMSE after c model calls, at c in `CHECKPOINTS` (up to the
  most calls any attempt made); the best is the one with the lowest training loss so far
  (`search_progress` in each record, `srbench.scoring.progress`). An attempt counts at c once it has a
  hypothesis by then; `attempts` says how many do.
- `sr_id_vs_ood` — per problem group with OOD data (the paper's Fig. 5): median in-domain and
  OOD NMSE over the same attempts, and how many.
- `sr_symbolic_vs_ood` — per group (Fig. 6, one point per method and group): symbolic accuracy
  and OOD Acc_0.1 / median OOD NMSE, from the attempts with a ground truth and OOD data.
- `sr_complexity` — LSR-Transform against the original Feynman problems by the ground truth's
  size (`truth_complexity`, expression-tree nodes) in `COMPLEXITY_BUCKETS` (Fig. 4): symbolic
  accuracy, Acc_0.1 and median NMSE in-domain. Only when both sets were run.

Invalid equations count as +inf NMSE in medians, as in Table 1.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.srbench.scoring.metrics import median_or_none

CHECKPOINTS: Final = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
COMPLEXITY_BUCKETS: Final = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 30), (31, None))
COMPLEXITY_SETS: Final = ("lsr_transform", "feynman")


def _pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 2) if den else None


def _nmse(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.inf


def bucket_label(lo: int, hi: int | None) -> str:
    return f"{lo}+" if hi is None else f"{lo}-{hi}"


def bucket_of(complexity: int) -> str:
    for lo, hi in COMPLEXITY_BUCKETS:
        if complexity >= lo and (hi is None or complexity <= hi):
            return bucket_label(lo, hi)
    return bucket_label(*COMPLEXITY_BUCKETS[0])


@dataclass
class _Curve:
    """Per checkpoint: the attempts' NMSEs (train, test, OOD) of their best-so-far hypothesis."""

    values: dict[int, list[tuple[float, float, float]]] = field(default_factory=dict)
    attempts: int = 0
    max_calls: int = 0

    def add(self, points: list[list[Any]], calls: int) -> None:
        self.attempts += 1
        self.max_calls = max(self.max_calls, calls)
        if not points:
            return
        steps = [int(p[0]) for p in points]
        for c in CHECKPOINTS:
            i = bisect.bisect_right(steps, c) - 1
            if i < 0:
                continue
            _, train, test, ood = points[i][:4]
            self.values.setdefault(c, []).append((_nmse(train), _nmse(test), _nmse(ood)))

    def finish(self) -> dict[str, Any]:
        calls = [c for c in CHECKPOINTS if c in self.values and c <= max(self.max_calls, 0)]
        names = ("train_nmse_median", "test_nmse_median", "ood_nmse_median")
        cols = {
            name: [median_or_none([v[k] for v in self.values[c]]) for c in calls]
            for k, name in enumerate(names)
        }
        return {
            "calls": calls,
            "attempts": [len(self.values[c]) for c in calls],
            **cols,
            "runs": self.attempts,
        }


@dataclass
class _Pair:
    attempts: int = 0
    id: list[float | None] = field(default_factory=list)
    ood: list[float | None] = field(default_factory=list)
    symbolic: int = 0
    symbolic_n: int = 0
    acc_ood: int = 0

    def add(self, rec: Mapping[str, Any]) -> None:
        self.attempts += 1
        self.id.append(_nmse(rec.get("nmse_id")))
        self.ood.append(_nmse(rec.get("nmse_ood")))
        self.acc_ood += bool(rec.get("acc_tau_ood"))
        match = rec.get("symbolic_match")
        if match is not None:
            self.symbolic_n += 1
            self.symbolic += bool(match)


@dataclass
class _Bucket:
    attempts: int = 0
    symbolic: int = 0
    symbolic_n: int = 0
    acc: int = 0
    nmse: list[float | None] = field(default_factory=list)

    def add(self, rec: Mapping[str, Any]) -> None:
        self.attempts += 1
        self.acc += bool(rec.get("acc_tau_id"))
        self.nmse.append(_nmse(rec.get("nmse_id")))
        match = rec.get("symbolic_match")
        if match is not None:
            self.symbolic_n += 1
            self.symbolic += bool(match)

    def finish(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "symbolic_accuracy_pct": _pct(self.symbolic, self.symbolic_n),
            "acc_tau_id_pct": _pct(self.acc, self.attempts),
            "median_nmse_id": median_or_none(self.nmse),
        }


class Analyses:
    """A summary accumulator for the analyses (fed by `SrbenchSummary`)."""

    def __init__(self) -> None:
        self.curves: dict[str, _Curve] = {}
        self.pairs: dict[str, _Pair] = {}
        self.buckets: dict[tuple[str, str], _Bucket] = {}

    def add(self, rec: Mapping[str, Any]) -> None:
        method = str(rec.get("sr_method") or "unknown")
        points = rec.get("search_progress")
        if isinstance(points, list):
            calls = rec.get("model_calls")
            self.curves.setdefault(method, _Curve()).add(points, int(calls) if isinstance(calls, int) else 0)
        group = str(rec.get("problem_group") or "unknown")
        if rec.get("has_ood"):
            self.pairs.setdefault(group, _Pair()).add(rec)
        complexity = rec.get("truth_complexity")
        problem_set = rec.get("problem_set")
        if problem_set in COMPLEXITY_SETS and isinstance(complexity, int):
            key = (str(problem_set), bucket_of(complexity))
            self.buckets.setdefault(key, _Bucket()).add(rec)

    def finish(self) -> dict[str, Any]:
        pairs = dict(sorted(self.pairs.items()))
        sets = {s for s, _ in self.buckets}
        return {
            "sr_search_progress": {m: c.finish() for m, c in sorted(self.curves.items())},
            "sr_id_vs_ood": {
                g: {
                    "attempts": p.attempts,
                    "median_nmse_id": median_or_none(p.id),
                    "median_nmse_ood": median_or_none(p.ood),
                }
                for g, p in pairs.items()
            },
            "sr_symbolic_vs_ood": {
                g: {
                    "symbolic_accuracy_pct": _pct(p.symbolic, p.symbolic_n),
                    "acc_tau_ood_pct": _pct(p.acc_ood, p.attempts),
                    "median_nmse_ood": median_or_none(p.ood),
                    "attempts": p.symbolic_n,
                }
                for g, p in pairs.items()
                if p.symbolic_n
            },
            "sr_complexity": (
                {
                    s: {
                        bucket_label(lo, hi): self.buckets[(s, bucket_label(lo, hi))].finish()
                        for lo, hi in COMPLEXITY_BUCKETS
                        if (s, bucket_label(lo, hi)) in self.buckets
                    }
                    for s in COMPLEXITY_SETS
                }
                if len(sets) == len(COMPLEXITY_SETS)
                else None
            ),
        }
