"""Every metric declared once, in one table every consumer reads: the summary writes the keys
declared here (`engine.summary`, streaming; a test holds each gateable declaration's `value`
equal to the summary's number on the same records), and the gate, `lsrb compare`, the terminal,
the report, the several-model table and `lsrb list` read their labels, directions and kinds from
here; nobody else spells a metric. What a declaration is: `engine.metric_declaration`.

A package adds its own metric as an entry point of `pytest_lsrb.metrics` whose value is a
`Metric` (its name is the metric's key): every consumer reads the same table (`all_metrics`), so
summary.json writes it like a built-in (`engine.summary`), and the gate, `lsrb compare`, the
terminal, the report and `lsrb list` know it, in every process, with nothing imported by hand.
A built-in key wins over a plug-in's (`lsrb list` says it is shadowed). `register_metric` (a
plugin's `pytest_configure`) still adds one to the process that calls it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import BUILT_IN, METRICS_GROUP, Entry, Registry
from pytest_lsrb.engine.metric_declaration import (
    Aggregation,
    Direction,
    Kind,
    Metric,
    PerRecord,
    Population,
    every,
    quantile,
)
from pytest_lsrb.engine.outcomes import (
    Record,
    answered,
    generation_infrastructure,
    judged,
    success,
    unreadable,
)

__all__ = [  # (the declaration's names too: where callers have always imported them)
    "ALIASES",
    "METRICS",
    "Aggregation",
    "Direction",
    "Kind",
    "Metric",
    "PerRecord",
    "Population",
    "all_metrics",
    "declared",
    "every",
    "find",
    "metric_registry",
    "plugged",
    "quantile",
    "register_family",
    "register_metric",
    "resolve_metric",
    "summary_metrics",
]


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

METRICS: dict[str, Metric] = {}  # the built-ins and `register_metric`'s (entry points: `plugged`)
ALIASES: dict[str, str] = {"verification_success_rate": "success_rate"}
REGISTERED: Final = "register_metric"
ORIGINS: dict[str, str] = {}  # key -> where it was declared (`built-in`, `register_metric`)


def register_metric(metric: Metric, origin: str = REGISTERED) -> Metric:
    """Declare `metric` in this process (its key must be new); returns it."""
    if metric.key in METRICS or metric.key in ALIASES:
        raise ValueError(f"metric {metric.key!r} is declared already")
    METRICS[metric.key] = metric
    ORIGINS[metric.key] = origin
    return metric


for _m in (
    Metric("attempts", "attempts", None, "count", "run"),
    Metric("items", "items", None, "count", "run"),
    Metric("valid_rate", "valid rate", "higher", "rate", "rate", answered, _field("valid")),
    Metric("nonempty_rate", "non-empty rate", "higher", "rate", "rate", answered, _field("nonempty")),
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
):
    register_metric(_m, BUILT_IN)


# -- metrics from installed packages -----------------------------------------------------------


class MetricRegistry(Registry):
    """The metrics' registry: the declared ones as its built-ins, then the entry points of
    `pytest_lsrb.metrics` (`lsrb list` shows both, and where each comes from)."""

    def __init__(self) -> None:
        super().__init__(
            {key: "pytest_lsrb.engine.metric" for key in METRICS},
            group=METRICS_GROUP,
            what="metric",
            where="--lsrb-min/--lsrb-max/--lsrb-max-drop, lsrb compare",
        )

    def entries(self) -> Iterator[Entry]:
        for entry in super().entries():
            declared_here = entry.origin == BUILT_IN and entry.name in ORIGINS
            yield replace(entry, origin=ORIGINS[entry.name]) if declared_here else entry


def metric_registry() -> MetricRegistry:
    return MetricRegistry()


def plugged() -> dict[str, tuple[Metric, Entry]]:
    """The installed packages' metrics, each with its entry (read anew: a package put on the path
    mid-session is seen); one sentence for an entry point that loads no `Metric` or names it by
    another key. A key a declared metric has is left out (the declared one wins)."""
    found: dict[str, tuple[Metric, Entry]] = {}
    for entry, value in metric_registry().load_entry_points():
        where = f"the metric '{entry.name}' of {entry.origin.removeprefix('entry point ').strip('()')}"
        if not isinstance(value, Metric):
            raise LsrbUsageError(
                f"{where} ('{entry.target}') is a {type(value).__name__}, not a pytest_lsrb.Metric."
            )
        if value.key != entry.name:
            raise LsrbUsageError(
                f"{where} ('{entry.target}') declares the key '{value.key}': an entry point of "
                f"{METRICS_GROUP} is named by its metric's key."
            )
        if value.key not in ALIASES:
            found[value.key] = (value, entry)
    return found


def all_metrics() -> dict[str, Metric]:
    """Every metric this installation knows by key: the declared ones, then the plug-ins'."""
    return {**METRICS, **{key: metric for key, (metric, _) in plugged().items()}}


def summary_metrics(task: str | None) -> list[Metric]:
    """The metrics summary.json computes from a run's records that the engine's own summary does
    not write (a plug-in's, `register_metric`'s): those with a per-record value, for `task`."""
    return [
        m
        for key, m in all_metrics().items()
        if ORIGINS.get(key) != BUILT_IN and m.per_record is not None and m.in_summary and m.applies_to(task)
    ]


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


@register_family
def record_field(key: str) -> Metric | None:
    """`field:NAME`: any true/false record field, over judged attempts."""
    if key.startswith("field:") and len(key) > 6:
        return Metric(key, key, "higher", "rate", "rate", judged, _field(key[6:]), in_summary=False)
    return None


KNOWN_METRICS: Final = (
    "pass_at_K, valid_rate, success_rate, generation_error_rate, unreadable_answer_rate, "
    "tokens_per_attempt, latency_ms_p95, ... (docs/gating.md) or field:NAME"
)


def find(key: str, metrics: Mapping[str, Metric] | None = None) -> Metric | None:
    """The declaration of `key` (declared, a plug-in's, an alias, or a family's), or None;
    `metrics`: `all_metrics()` when the caller has read it already."""
    key = ALIASES.get(key, key)
    known = all_metrics() if metrics is None else metrics
    if key in known:
        return known[key]
    for family in FAMILIES:
        found = family(key)
        if found is not None:
            return found
    return None


def resolve_metric(name: str) -> Metric:
    """The metric the gate or compare is asked for; one sentence for an unknown or ungateable one."""
    text = name.strip()
    known = all_metrics()
    found = find(text, known)
    if found is None:
        installed = sorted(set(known) - set(METRICS))  # the families' own and the packages'
        more = f"; of the installed families: {', '.join(installed)}" if installed else ""
        raise LsrbUsageError(f"unknown metric '{name}' (expected {KNOWN_METRICS}{more}).")
    if not found.gateable:
        raise LsrbUsageError(
            f"metric '{name}' is a run-level number with no per-attempt value: it is shown and "
            "compared, but cannot be tested item by item."
        )
    return found


def declared(*summaries: Mapping[str, Any] | None) -> list[Metric]:
    """The declared metrics present (as numbers) in any of the summaries, in display order: the
    declarations' order (the plug-ins' after the built-ins), then each family's keys (pass@k by k)."""
    present: set[str] = set()
    for s in summaries:
        present |= {k for k, v in (s or {}).items() if _is_number(v)}
    known = all_metrics()
    out = [m for m in known.values() if m.in_summary and m.key in present]
    extra: list[tuple[int, int, str, Metric]] = []
    for key in sorted(present - set(known)):
        for rank, family in enumerate(FAMILIES):
            found = family(key)
            if found is not None and found.in_summary:
                extra.append((rank, found.k or 0, key, replace(found, key=key)))
                break
    return out + [m for *_, m in sorted(extra, key=lambda e: e[:3])]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
