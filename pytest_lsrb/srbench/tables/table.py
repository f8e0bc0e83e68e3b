"""The paper's Table 1 from attempt records: one row per method × problem set / domain, with
symbolic accuracy (%), Acc_0.1 (%) and median NMSE, in-domain and OOD. Streaming: it keeps
counters and the NMSE values only (for the medians).

As in the paper (and the reference's eval.py: one search per problem, one result), each problem
contributes one result: by default its sample 0; further samples of a problem (--lsrb-samples >
1) count in pass@k, not here. `--lsrb-sr-per-problem best_train` instead takes, of a problem's k
samples, the one with the lowest training MSE (best-of-k chosen without test data; ties and
failed searches go to the lower sample index); each row's `per_problem` says which rule, and how
many samples k it chose from. Rows: `lsr_transform`,
`lsr_synth_chem_react`, `lsr_synth_bio_pop_growth`, `lsr_synth_phys_osc`, `lsr_synth_matsci` (and
any other problem set, e.g. `llmsr`); no row pools the domains (the paper has none). A run is one
method (`method` in each row); records of several methods are keyed `<method>:<group>`.
Symbolic accuracy is over the problems with a ground truth (None when none has one): a verdict
that could not be reached (an undecided check, an unreadable or failed judge) counts as not a
match and is shown as `symbolic_undecided`. As in the reference, the equation a method returned is
what is scored, its fallback included (LLM-SR's starting skeleton, LaSR's PySR best, SGA's
primitive when no answer of the model beat it): its NMSE, Acc_0.1 and symbolic verdict count, and
the row's `fallback_results` (`fb`) says how many of its problems had one. No equation at all, or one
not finite on the test points, counts as +inf NMSE in the median and a miss in Acc_0.1. An attempt
in which the model never answered (`outcomes`: every call failed on the transport, the provider or
the harness, whatever fallback its search holds) is no result of the model's: it stays out of the
row's numbers, counted in its `infrastructure_attempts` (`inf`; summary.json's
`infrastructure_attempts` counts the run's), like every other model metric.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.engine.outcomes import INFRASTRUCTURE, status
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.equations.errors import UNSUPPORTED_KINDS
from pytest_lsrb.srbench.scoring.metrics import median_or_none
from pytest_lsrb.srbench.tables.analyses import Analyses

GROUP_ORDER: Final = (
    "lsr_transform",
    "lsr_synth_chem_react",
    "lsr_synth_bio_pop_growth",
    "lsr_synth_phys_osc",
    "lsr_synth_matsci",
)
PER_PROBLEM: Final = "sample 0"
# The fields GroupStats reads: all a best-of-k choice needs to keep of a record until the end.
_TABLE_FIELDS: Final = (
    "sr_method",
    "valid",
    "symbolic_match",
    "symbolic_method",
    "acc_tau_id",
    "nmse_id",
    "has_ood",
    "acc_tau_ood",
    "nmse_ood",
    "train_mse",
    "sample_index",
    "judge_model",
    "fallback_result",
)
# symbolic_method values of a record whose problem has no ground truth, or whose run judged none.
_NO_SA: Final = frozenset({"not_applicable", "skipped"})
# How the paper names each group (the HTML report's column heads); others show as spelled.
GROUP_LABELS: Final[dict[str, str]] = {
    "lsr_transform": "LSR-Transform",
    "lsr_synth_chem_react": "LSR-Synth Chemistry",
    "lsr_synth_bio_pop_growth": "LSR-Synth Biology",
    "lsr_synth_phys_osc": "LSR-Synth Physics",
    "lsr_synth_matsci": "LSR-Synth MatSci",
}
# Table 1's columns in the paper's order: (row key, terminal head, split).
COLUMNS: Final = (
    ("symbolic_accuracy_pct", "SA%", "id"),
    ("acc_tau_id_pct", "Acc0.1 ID%", "id"),
    ("median_nmse_id", "NMSE ID", "id"),
    ("acc_tau_ood_pct", "Acc0.1 OOD%", "ood"),
    ("median_nmse_ood", "NMSE OOD", "ood"),
)


# Who decided symbolic accuracy: the paper's rule written as code, or an LLM judge (by model).
RULE_JUDGE: Final = "rule"
_LLM_METHODS: Final = frozenset({"llm", "llm_error", "llm_unreadable"})


STRICT_RULE_JUDGE: Final = "rule:strict"  # --lsrb-sr-sa-scale strict: an additive constant is a term


def sa_judge(record: Mapping[str, Any]) -> str:
    """`rule` (srbench.scoring.symbolic), `rule:strict` (the same with an additive constant alone
    a term) or `llm:<judge model>`."""
    if record.get("symbolic_method") in _LLM_METHODS:
        return f"llm:{record.get('judge_model') or 'unknown'}"
    return STRICT_RULE_JUDGE if record.get("symbolic_scale") == "strict" else RULE_JUDGE


def group_label(group: str) -> str:
    return GROUP_LABELS.get(group, group)


def group_of(record: Mapping[str, Any]) -> str:
    """The Table 1 group of one record: the problem's `problem_group` (`lsr_synth_<domain>`)."""
    return str(record.get("problem_group") or "unknown")


def _pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 2) if den else None


@dataclass
class GroupStats:
    attempts: int = 0  # problems (one result each)
    valid: int = 0
    fallback: int = 0  # results that are the method's fallback (`fallback_result`)
    infrastructure: int = 0  # attempts left out: the model never answered
    symbolic_applicable: int = 0
    symbolic_matches: int = 0
    symbolic_undecided: int = 0
    method: str = ""
    acc_id: int = 0
    ood_attempts: int = 0
    acc_ood: int = 0
    nmse_id: list[float | None] = field(default_factory=list)
    nmse_ood: list[float | None] = field(default_factory=list)
    judges: set[str] = field(default_factory=set)

    def add(self, rec: Mapping[str, Any]) -> None:
        self.attempts += 1
        self.method = self.method or str(rec.get("sr_method") or "")
        self.valid += bool(rec.get("valid"))
        match = rec.get("symbolic_match")
        verdict = rec.get("symbolic_method")
        if match is not None or (verdict is not None and verdict not in _NO_SA):
            self.judges.add(sa_judge(rec))
            self.symbolic_applicable += 1
            self.symbolic_matches += match is True
            self.symbolic_undecided += match is None
        # What the method returned, fallback included (the record's metrics are of that equation;
        # none found or not finite: nmse null, +inf in the median, and Acc false).
        self.fallback += bool(rec.get("fallback_result"))
        self.acc_id += bool(rec.get("acc_tau_id"))
        self.nmse_id.append(rec.get("nmse_id"))
        if rec.get("has_ood"):
            self.ood_attempts += 1
            self.acc_ood += bool(rec.get("acc_tau_ood"))
            self.nmse_ood.append(rec.get("nmse_ood"))

    def finish(self, per_problem: str = PER_PROBLEM) -> dict[str, Any]:
        return {
            "method": self.method,
            "per_problem": per_problem,
            "attempts": self.attempts,
            "fallback_results": self.fallback,
            "infrastructure_attempts": self.infrastructure,
            "valid_rate": round(self.valid / self.attempts, 4) if self.attempts else None,
            "symbolic_accuracy_pct": _pct(self.symbolic_matches, self.symbolic_applicable),
            "symbolic_applicable": self.symbolic_applicable,
            "symbolic_undecided": self.symbolic_undecided,
            "sa_judge": ", ".join(sorted(self.judges)) or None,
            "acc_tau_id_pct": _pct(self.acc_id, self.attempts),
            "acc_tau_ood_pct": _pct(self.acc_ood, self.ood_attempts),
            "median_nmse_id": median_or_none(self.nmse_id),
            "median_nmse_ood": median_or_none(self.nmse_ood) if self.ood_attempts else None,
        }


class SrbenchSummary:
    """The llm_srbench summary section (a `SummaryAccumulator`)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], GroupStats] = {}
        self.rule = "sample0"
        # best_train: per (method, group, problem) the best record so far and how many were seen
        self.best: dict[tuple[str, str, str], tuple[dict[str, Any], int]] = {}
        self.methods: dict[str, int] = {}
        self.judge_pairs = 0  # attempts where the sympy checker and the LLM judge both decided
        self.judge_agree = 0
        self.analyses = Analyses()  # search progress, ID vs OOD, symbolic vs OOD, complexity
        self.release_note: str | None = None  # the official release's counts line, when loaded
        self.infrastructure: dict[tuple[str, str], int] = {}  # (method, group) -> attempts left out
        self.fit_cap_hits = 0  # candidate fits that reached --lsrb-sr-fit-time-limit, every attempt
        self.fit_cap_attempts = 0  # attempts with at least one
        # Candidates refused as a form the equation language does not express (our limit, not
        # the model's error: `equations.UNSUPPORTED_KINDS`), and the attempts with any.
        self.unsupported = 0
        self.unsupported_attempts = 0

    def add(self, record: AttemptRecord) -> None:
        method = str(record.get("sr_method") or "unknown")
        self.methods[method] = self.methods.get(method, 0) + 1
        note = record.get("sr_release_note")
        self.release_note = self.release_note or (str(note) if note else None)
        if record.get("sr_per_problem") == "best_train":
            self.rule = "best_train"
        raw = record.get("fit_time_limit_hits")
        hits = raw if isinstance(raw, int) else 0
        self.fit_cap_hits += hits
        self.fit_cap_attempts += hits > 0
        refused = unsupported_candidates(record)
        self.unsupported += refused
        self.unsupported_attempts += refused > 0
        if status(record) == INFRASTRUCTURE:  # not the model's result (see the module's note)
            key2 = (method, group_of(record))
            self.infrastructure[key2] = self.infrastructure.get(key2, 0) + 1
        elif self.rule == "best_train":
            key = (method, group_of(record), str(record.get("item_id")))
            kept, seen = self.best.get(key, (None, 0))
            slim = {k: record.get(k) for k in _TABLE_FIELDS}
            self.best[key] = (slim if kept is None or _rank(slim) < _rank(kept) else kept, seen + 1)
        elif int(record.get("sample_index") or 0) == 0:  # one result per problem: its sample 0
            self.groups.setdefault((method, group_of(record)), GroupStats()).add(record)
        self.analyses.add(record)
        by_sympy, by_llm = record.get("symbolic_match_sympy"), record.get("symbolic_match_llm")
        if by_sympy is not None and by_llm is not None:
            self.judge_pairs += 1
            self.judge_agree += by_sympy == by_llm

    def table(self) -> dict[str, dict[str, Any]]:
        """Table 1: one row per (method,) group in the paper's order, then any other group."""
        groups = self.groups
        per_problem = PER_PROBLEM
        if self.rule == "best_train":
            groups = {}
            k = max((seen for _, seen in self.best.values()), default=0)
            per_problem = f"best of {k} samples by training MSE"
            for (method, group, _), (record, _) in self.best.items():
                groups.setdefault((method, group), GroupStats()).add(record)
        groups = dict(groups)
        for key, n in self.infrastructure.items():
            groups[key] = stats = dataclasses.replace(groups.get(key) or GroupStats(), infrastructure=n)
            stats.method = stats.method or key[0]
        several = len({m for m, _ in groups}) > 1
        rows = {(f"{m}:{g}" if several else g): stats for (m, g), stats in groups.items()}
        return {key: rows[key].finish(per_problem) for key in ordered_groups(rows)}

    def finish(self) -> dict[str, Any]:
        return {
            "srbench_table": self.table(),
            "sr_release_note": self.release_note,
            "sr_methods": dict(sorted(self.methods.items())),
            "sr_fit_time_limit_hits": self.fit_cap_hits,
            "sr_fit_time_limit_attempts": self.fit_cap_attempts,
            "sr_unsupported_candidates": self.unsupported,
            "sr_unsupported_attempts": self.unsupported_attempts,
            "sr_judge_pairs": self.judge_pairs,
            "sr_judge_agreement": (
                round(self.judge_agree / self.judge_pairs, 4) if self.judge_pairs else None
            ),
            **self.analyses.finish(),
        }


def unsupported_candidates(record: Mapping[str, Any]) -> int:
    """How many of an attempt's candidates were refused as forms the language does not express:
    counted from its `candidate_errors` (search methods), else its one proposal's error kind."""
    errors = record.get("candidate_errors")
    if isinstance(errors, Mapping):
        return sum(int(n) for kind, n in errors.items() if kind in UNSUPPORTED_KINDS and isinstance(n, int))
    return int(record.get("proposal_error_kind") in UNSUPPORTED_KINDS)


def _rank(record: Mapping[str, Any]) -> tuple[float, int]:
    """best_train's order: the lowest finite training MSE, then the lower sample index."""
    mse = record.get("train_mse")
    value = float(mse) if isinstance(mse, (int, float)) and math.isfinite(mse) else math.inf
    return (value, int(record.get("sample_index") or 0))


def ordered_groups(groups: Iterable[str]) -> list[str]:
    """The paper's group order (per method when keys are `<method>:<group>`), then the others."""

    def rank(key: str) -> tuple[str, int, str]:
        method, _, group = key.rpartition(":")
        position = GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER)
        return (method, position, group)

    return sorted(set(groups), key=rank)


def table1(records: Iterable[AttemptRecord]) -> dict[str, dict[str, Any]]:
    """Table 1 of these records: what summary.json's `srbench_table` holds for them (the one
    implementation, read by the summary, the terminal and the HTML report)."""
    acc = SrbenchSummary()
    for rec in records:
        acc.add(rec)
    return acc.table()


def table_lines(summary: Mapping[str, Any]) -> list[str]:
    """Table 1 as fixed-width text (for a terminal or a report), after who judged SA and the
    release's counts: n problems (sample 0 each), `u` = undecided verdicts counted in SA%'s
    denominator, `fb` = results that are the method's fallback (scored, as in the reference),
    `inf` = attempts left out because the model never answered (infrastructure)."""
    table = summary.get("srbench_table") or {}
    widths = [max(len(head), 6) for _, head, _ in COLUMNS]
    lines = [
        f"{'method':<18} {'group':<26} {'n':>4} {'u':>3} {'fb':>4} {'inf':>4} "
        + " ".join(f"{head:>{w}}" for (_, head, _), w in zip(COLUMNS, widths, strict=True))
    ]

    def f(key: str, v: Any, width: int) -> str:
        fmt = ".1f" if key.endswith("_pct") else ".3g"
        return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"

    for group in ordered_groups(table):
        row = table[group]
        cells = " ".join(f(key, row.get(key), w) for (key, _, _), w in zip(COLUMNS, widths, strict=True))
        name = group.rpartition(":")[2]
        undecided = row.get("symbolic_undecided", 0)
        fb, inf = row.get("fallback_results", 0), row.get("infrastructure_attempts", 0)
        counts = f"{row['attempts']:>4} {undecided:>3} {fb:>4} {inf:>4}"
        lines.append(f"{row.get('method', ''):<18} {name:<26} {counts} {cells}")
    rules = sorted({str(row.get("per_problem") or PER_PROBLEM) for row in table.values()})
    lines.append(f"({TABLE_LEGEND})")
    lines.append(f"(one result per problem: {', '.join(rules)})")
    if any(row.get("median_nmse_ood") is not None for row in table.values()):
        lines.append(f"({OOD_NMSE_NOTE})")
    return [*_header_lines(summary), *lines]


def _header_lines(summary: Mapping[str, Any]) -> list[str]:
    """Who judged SA and how often that judge agrees with labels from the paper's wording, and
    (an official release) the problems per split against the paper's."""
    table = summary.get("srbench_table") or {}
    judges = sorted({j for row in table.values() for j in str(row.get("sa_judge") or "").split(", ") if j})
    rules = {
        RULE_JUDGE: (
            "the paper's rule (the forms, every constant a side writes free, are equal; "
            "srbench.scoring.symbolic)"
        ),
        STRICT_RULE_JUDGE: "the paper's rule with an additive constant a term (--lsrb-sr-sa-scale strict)",
    }
    reached = bool(judges)
    judges = judges or configured_judges(summary.get("config") or {})
    named = [(rules.get(j) or f"LLM judge {j.removeprefix('llm:')}") + _agreement_note(j) for j in judges]
    if not named:
        out = ["SA judged by: none (--lsrb-sr-judge=none)"]
    elif reached:
        out = [f"SA judged by: {'; '.join(named)}"]
    else:  # the judge was set, but no attempt reached it: say who would have judged, and why none did
        out = [
            f"SA judged by: {'; '.join(named)}; no attempt had a verdict (no ground truth, or "
            "no equation of the model's reached the judge)"
        ]
    note = summary.get("sr_release_note")
    if note:
        out.append(str(note))
    return out


def configured_judges(config: Mapping[str, Any]) -> list[str]:
    """The SA judges a run was configured with (`--lsrb-sr-judge`, `--lsrb-sr-sa-scale`,
    `--lsrb-sr-judge-model`), in `sa_judge`'s names: who judges whatever the attempts' outcomes."""
    judge = config.get("sr_judge")
    rule = STRICT_RULE_JUDGE if config.get("sr_sa_scale") == "strict" else RULE_JUDGE
    llm = f"llm:{config.get('sr_judge_model') or 'unknown'}"
    return {"sympy": [rule], "llm": [llm], "both": sorted([rule, llm])}.get(str(judge), [])


def _agreement_note(judge: str) -> str:
    """The judge's measured agreement on held-out labelled pairs (`lsrb srbench judge-agreement
    --pairs fresh --write`, else `--pairs heldout`), or that it was never measured."""
    from pytest_lsrb.srbench.scoring.agreement import measured_agreement

    key = "sympy" if judge == RULE_JUDGE else judge
    row = measured_agreement(key) if judge != STRICT_RULE_JUDGE else None
    if not row or not row.get("total"):
        return " [agreement with labels from the paper's wording: not measured]"
    return (
        f" [agrees on {100 * float(row['agreement']):.1f}% of {row['total']} held-out pairs "
        f"({row['pairs']}), {row['false_accepts']} false accepts: pairs built from the problems' "
        "truths and labelled by the paper's wording before scoring, not human verdicts; the "
        "paper's 94.6% is GPT-4o's agreement with human raters]"
    )


# The paper's Table 1 layout: per group a block of (row key, head).
PAPER_BLOCK: Final = (
    ("symbolic_accuracy_pct", "SA"),
    ("acc_tau_id_pct", "Acc0.1"),
    ("median_nmse_id", "NMSE"),
)
PAPER_NMSE: Final = (
    "NMSE = median over the problems of the in-domain test NMSE of the method's returned equation, "
    "fallback included (none, or not finite, counts +inf)"
)
# Why OOD NMSEs of 1e3-1e5 are no fault: NMSE divides by the variance of the split's own targets,
# and an LSR-Synth OOD split is the last tenth of one sweep, where the target barely moves
# (chemistry's concentration has all but settled: its variance is 1e3-1e7 times the in-domain).
OOD_NMSE_NOTE: Final = (
    "OOD NMSE divides by the variance of the OOD targets, the last tenth of one sweep in the "
    "release, where the target barely moves: values of 1e3-1e5 are that split's own scale"
)
TABLE_LEGEND: Final = (
    "fb = scored results that are the method's fallback, no model answer in them; "
    "inf = attempts left out, the model never answered"
)


def paper_table_lines(summary: Mapping[str, Any], *, header: bool = True) -> list[str]:
    """Table 1 in the paper's layout: one row per method, a column block (SA %, Acc0.1 %, NMSE)
    per group in the paper's order; the NMSE aggregate is named under it. `header`: start with
    who judged SA and the release's counts (as `table_lines` does)."""
    table = summary.get("srbench_table") or {}
    by_method: dict[str, dict[str, Mapping[str, Any]]] = {}
    for key, row in table.items():
        method = str(row.get("method") or key.rpartition(":")[0] or "-")
        by_method.setdefault(method, {})[key.rpartition(":")[2]] = row
    groups = ordered_groups({g for rows in by_method.values() for g in rows})
    width = _CELL * len(PAPER_BLOCK)
    head = f"{'method':<18}" + "".join(f" | {group_label(g)[:width]:<{width}}" for g in groups)
    sub = f"{'':<18}" + "".join(" | " + "".join(f"{h:>{_CELL}}" for _, h in PAPER_BLOCK) for _ in groups)
    lines = [*(_header_lines(summary) if header else []), "Table 1 (the paper's layout)", head, sub]
    for method in sorted(by_method):
        cells = []
        for g in groups:
            row = by_method[method].get(g)
            cells.append(" | " + "".join(_paper_cell(key, row) for key, _ in PAPER_BLOCK))
        lines.append(f"{method:<18}" + "".join(cells))
    lines.append(f"({PAPER_NMSE})")
    for method in sorted(by_method):
        rows = by_method[method].values()
        fb = sum(int(r.get("fallback_results") or 0) for r in rows)
        inf = sum(int(r.get("infrastructure_attempts") or 0) for r in rows)
        if fb or inf:
            lines.append(
                f"({method}: {fb} result(s) are the method's fallback, scored and flagged; "
                f"{inf} attempt(s) left out, the model never answered)"
            )
    return lines


_CELL: Final = 10


def _paper_cell(key: str, row: Mapping[str, Any] | None) -> str:
    value = None if row is None else row.get(key)
    if value is None:
        return f"{'-':>{_CELL}}"
    return f"{value:>{_CELL}.2f}" if key.endswith("_pct") else f"{value:>{_CELL}.2e}"
