"""summary.json: aggregate metrics computed from attempt records.

Computed by streaming attempts.jsonl, so memory holds per-item counters and latencies, never the
records themselves. When a resumed run redid an attempt, the last record for it wins.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from pytest_lsrb.core.metrics import latency_stats, pass_at_k_curve, pass_at_k_ladder, rate
from pytest_lsrb.engine.metric import summary_metrics
from pytest_lsrb.engine.metric_declaration import Metric, quantile
from pytest_lsrb.engine.outcomes import (
    JUDGED,
    SKIPPED,
    UNJUDGED_VERIFICATION_DOMAINS,
    generation_infrastructure,
    verdict,
    verifying,
)
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.task import SummaryAccumulator

if TYPE_CHECKING:
    from pytest_lsrb.engine.task import Task

SUMMARY_SCHEMA_VERSION: Final = 1
# Summary keys that measure time; excluded when comparing runs.
SUMMARY_TIMING_KEYS: Final[frozenset[str]] = frozenset(
    {
        "latency_ms_mean",
        "latency_ms_p50",
        "latency_ms_p95",
        "verification_latency_ms_mean",
        "verification_latency_ms_p50",
        "verification_latency_ms_p95",
        "wall_time_s",
        "finished_at",
    }
)


class Summarizer:
    """Accumulates records one at a time; `finish` returns the summary's metric fields.

    Who counts where is `outcomes`' rule: rates over the model's answers (valid_rate,
    nonempty_rate) have the answered attempts as denominator, rates over verdicts (success, pass@k)
    the judged ones; infrastructure errors and profile skips are counted, never held against the
    model.
    """

    def __init__(
        self,
        samples_per_item: int,
        task_acc: SummaryAccumulator | None = None,
        metrics: Sequence[Metric] = (),
    ) -> None:
        self.samples_per_item = samples_per_item
        self.task_acc = task_acc
        # the declared metrics the engine does not write itself (a plug-in's): `summary_metrics`
        self.tallies = [MetricTally(m, samples_per_item) for m in metrics]
        self.n = 0
        self.answered = 0
        self.judged = 0
        self.infrastructure = 0
        self.skipped = 0
        self.valid = 0
        self.nonempty = 0
        self.model_calls = 0
        self.cached = 0
        self.latencies = array("d")
        # [prompt, completion] tokens of every attempt, and of those answered from the cache
        self.tokens = [0, 0]
        self.cached_tokens = [0, 0]
        self.tokens_reported = 0  # attempts whose calls reported any token count
        self.served_models: Counter[str] = Counter()
        # answers whose endpoint said why it stopped, and those it cut at the token limit
        self.finished = [0, 0]
        # generation errors (the endpoint's: infrastructure) and, apart, unreadable answers (the
        # model's own: `outcomes.unreadable`), each counted once
        self.gen_kinds: Counter[str] = Counter()
        self.gen_domains: Counter[str] = Counter()
        self.unreadable = 0
        self.successes = 0  # judged attempts the rule calls a success (`outcomes.verdict`)
        self.ver_attempted = 0
        self.ver_success = 0
        self.ver_errors = 0
        self.ver_latencies = array("d")
        self.ver_kinds: Counter[str] = Counter()
        self.ver_domains: Counter[str] = Counter()
        # item_id -> its judged samples and their successes, in one int (`count_item`)
        self.per_item: dict[str, int] = {}
        self.ver_unjudged = 0
        self.any_verification = False

    def add(self, rec: AttemptRecord) -> None:
        self.n += 1
        st, won = verdict(rec)
        answered = not generation_infrastructure(rec)
        if answered:
            self.answered += 1
            self.valid += bool(rec.get("valid"))
            self.nonempty += bool(rec.get("nonempty"))
        self.model_calls += int(rec.get("model_calls") or 0)
        self.cached += bool(rec.get("cached"))
        self.latencies.append(float(rec.get("latency_ms") or 0.0))
        served = rec.get("served_model")
        if served:
            self.served_models[str(served)] += 1
        said, cut = finish_counts(rec)
        self.finished[0] += said
        self.finished[1] += cut
        p_tok, c_tok = rec.get("prompt_tokens"), rec.get("completion_tokens")
        if p_tok is not None or c_tok is not None:
            self.tokens_reported += 1
            counted = (int(p_tok or 0), int(c_tok or 0))
            self.tokens[0] += counted[0]
            self.tokens[1] += counted[1]
            if rec.get("cached"):
                self.cached_tokens[0] += counted[0]
                self.cached_tokens[1] += counted[1]
        kind = rec.get("generation_error_kind")
        if kind and not answered:
            self.gen_kinds[kind] += 1
            self.gen_domains[str(rec.get("generation_error_domain"))] += 1
        elif kind:
            self.unreadable += 1
        if not self.any_verification and verifying(rec):
            self.any_verification = True
        vkind = rec.get("verification_error_kind")
        if vkind:
            self.ver_errors += 1
            self.ver_kinds[vkind] += 1
            self.ver_domains[str(rec.get("verification_error_domain"))] += 1
            self.ver_unjudged += rec.get("verification_error_domain") in UNJUDGED_VERIFICATION_DOMAINS
        count_item(self.per_item, str(rec["item_id"]), st == JUDGED, won)
        if st == JUDGED:
            self.judged += 1
            self.successes += won
            if rec.get("verification_attempted"):  # the checker ran and decided
                self.ver_attempted += 1
                self.ver_success += won
                self.ver_latencies.append(float(rec.get("verification_latency_ms") or 0.0))
        elif st == SKIPPED:
            self.skipped += 1
        else:
            self.infrastructure += 1
        if self.task_acc is not None:
            self.task_acc.add(rec)
        for tally in self.tallies:
            tally.add(rec)

    def finish(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "attempts": self.n,
            "items": len(self.per_item),
            "answered_attempts": self.answered,
            "judged_attempts": self.judged,
            "infrastructure_attempts": self.infrastructure,
            "skipped_attempts": self.skipped,
            "valid_rate": rate(self.valid, self.answered),
            "nonempty_rate": rate(self.nonempty, self.answered),
            "model_calls": self.model_calls,
            "cached_attempts": self.cached,
            **latency_stats(self.latencies, "latency_ms"),
            "prompt_tokens": self.tokens[0],
            "completion_tokens": self.tokens[1],
            "cached_prompt_tokens": self.cached_tokens[0],
            "cached_completion_tokens": self.cached_tokens[1],
            "token_counted_attempts": self.tokens_reported,
            "served_models": dict(sorted(self.served_models.items())),
            "answers_with_finish_reason": self.finished[0],
            "answers_cut_by_max_tokens": self.finished[1],
            "generation_error_rate": rate(sum(self.gen_kinds.values()), self.n),
            "generation_error_kinds": dict(sorted(self.gen_kinds.items())),
            "generation_error_domains": dict(sorted(self.gen_domains.items())),
            "unreadable_answers": self.unreadable,
            "unreadable_answer_rate": rate(self.unreadable, self.answered),
            "verification_attempted_rate": rate(self.ver_attempted, self.n),
            "success_rate": rate(self.successes, self.judged),
            # Verification success does not apply to a run without a verifier: null, never 0.
            "verification_success_rate": rate(self.ver_success, self.judged)
            if self.any_verification
            else None,
            "verification_success_rate_of_attempted": rate(self.ver_success, self.ver_attempted),
            "verification_error_rate": rate(self.ver_errors, self.n),
            **latency_stats(self.ver_latencies, "verification_latency_ms"),
            "verification_error_kinds": dict(sorted(self.ver_kinds.items())),
            "verification_error_domains": dict(sorted(self.ver_domains.items())),
            "verification_unjudged": self.ver_unjudged,
        }
        # pass@k of the judging rule's success, in every mode (under `none` a valid answer is the
        # success, as the gate and compare count it). Sorted: float sums then do not depend on the
        # order attempts finished (xdist, shards).
        curve = pass_at_k_curve(judged_items(self.per_item), pass_at_k_ladder(self.samples_per_item))
        for k, value in curve.values.items():
            out[f"verification_pass_at_k_{k}"] = value
        out["verification_pass_at_k_items"] = curve.items
        if self.task_acc is not None:
            out.update(self.task_acc.finish())
        for tally in self.tallies:  # (a key the engine or the task writes is theirs)
            out.setdefault(tally.metric.key, tally.value())
        return out


# The finish reason of an answer the endpoint cut at the request's token limit (OpenAI's
# `finish_reason`, Ollama's `done_reason`; llama.cpp and vLLM say the same).
CUT_AT_LIMIT: Final = "length"


def finish_counts(rec: AttemptRecord) -> tuple[int, int]:
    """(answers of the attempt whose endpoint said why it stopped, those cut at the token limit):
    one call's `finish_reason`, or a multi-call attempt's `finish_reasons` tally."""
    reasons = rec.get("finish_reasons")
    if isinstance(reasons, Mapping):
        counts = [int(n) for n in reasons.values() if isinstance(n, int)]
        cut = reasons.get(CUT_AT_LIMIT)
        return sum(counts), int(cut) if isinstance(cut, int) else 0
    reason = rec.get("finish_reason")
    if not isinstance(reason, str):
        return 0, 0
    return 1, int(reason == CUT_AT_LIMIT)


def summarizer_for(task: Task[Any], samples_per_item: int) -> Summarizer:
    """The summary of a run of `task`: the engine's metrics, the task's sections and every
    declared metric of the run's that neither writes (a plug-in's)."""
    return Summarizer(
        samples_per_item, task.summary_accumulator(samples_per_item), summary_metrics(task.name)
    )


class MetricTally:
    """One declared metric's value over a run, from its records one at a time: what
    `Metric.value` gives on the same records grouped by item (tests/engine/test_metric_plugins.py
    holds the two equal), without keeping the records. Pooled rates and means keep a sum, quantiles
    the values, pass@k each item's (attempts, counted)."""

    def __init__(self, metric: Metric, samples_per_item: int) -> None:
        self.metric = metric
        self.samples = samples_per_item
        self.total = 0.0
        self.count = 0
        self.pooled = array("d")  # (quantiles only)
        self.per_item: dict[str, tuple[int, int]] = {}  # (pass@k only)

    def add(self, record: AttemptRecord) -> None:
        metric = self.metric
        if metric.per_record is None or not metric.population(record):
            return
        value = metric.per_record(record)
        if value is None or value != value:  # (None and NaN are no value: `Metric.values`)
            return
        if metric.k is not None:
            item = str(record["item_id"])
            n, c = self.per_item.get(item, (0, 0))
            self.per_item[item] = (n + 1, c + (value != 0))
        elif metric.quantile is not None:
            self.pooled.append(float(value))
        else:
            self.total += float(value)
            self.count += 1

    def value(self) -> float | None:
        metric = self.metric
        if metric.k is not None:
            scores = [
                s
                for _, (n, c) in sorted(self.per_item.items())
                if (s := metric.score_counts(n, c, self.samples)) is not None
            ]
            return sum(scores) / len(scores) if scores else None
        if metric.quantile is not None:
            return quantile(self.pooled, metric.quantile) if self.pooled else None
        return self.total / self.count if self.count else None


# Per item, its judged samples and their successes as one int: judged << 32 | successes. An item
# seen only in attempts that were not judged is there with 0 (it counts among the items). One int
# per item and none per attempt: no list is made for each of a run's 10,000 items, three times.
_JUDGED_ONE: Final = 1 << 32


# The few values those ints take (an item's first samples), one object each: a run's 100,000 items
# then share them instead of holding an int object apiece, in each of the summary's maps.
_SHARED_BELOW: Final = 64 * _JUDGED_ONE
_shared: dict[int, int] = {}


def count_item(per_item: dict[str, int], item_id: str, judged: bool, won: bool) -> None:
    value = per_item.get(item_id, 0) + ((_JUDGED_ONE + won) if judged else 0)
    per_item[item_id] = _shared.setdefault(value, value) if value < _SHARED_BELOW else value


def judged_items(per_item: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """{item: (judged samples, successes)} of the items with any judged sample, sorted by item:
    float sums then do not depend on the order attempts finished (xdist, shards)."""
    return {k: (v >> 32, v & (_JUDGED_ONE - 1)) for k, v in sorted(per_item.items()) if v >= _JUDGED_ONE}


class GroupCounts:
    """One group's attempts (a repository, a Lean version, a tag), by `outcomes`' rule: the same
    numbers the whole run's summary gives, over this group's attempts. summary.json's
    by_repository and by_lean_version, and the report's breakdowns, are these."""

    def __init__(self) -> None:
        self.attempts = 0
        self.judged = 0
        self.successes = 0
        self.per_item: dict[str, int] = {}  # `count_item`'s

    def add(self, record: AttemptRecord) -> None:
        st, won = verdict(record)
        self.count(str(record["item_id"]), st == JUDGED, won)

    def count(self, item_id: str, judged: bool, won: bool) -> None:
        """`add` for a record whose verdict the caller has already read (`outcomes.verdict`)."""
        self.attempts += 1
        count_item(self.per_item, item_id, judged, won)
        if judged:
            self.judged += 1
            self.successes += won

    def finish(self, samples_per_item: int) -> dict[str, Any]:
        curve = pass_at_k_curve(judged_items(self.per_item), pass_at_k_ladder(samples_per_item))
        return {
            "attempts": self.attempts,
            "items": len(self.per_item),
            "judged_attempts": self.judged,
            "success_rate": rate(self.successes, self.judged),
            "pass_at_1": curve.values[1],
            "pass_at_k_items": curve.items,
        }
