"""The paper's Table 1 from attempt records: per problem set / domain, symbolic accuracy (%),
Acc_0.1 (%) and median NMSE, in-domain and OOD. Streaming: it keeps counters and the NMSE
values only (for the medians).

Rows: `lsr_transform`, `lsr_synth_chem_react`, `lsr_synth_bio_pop_growth`, `lsr_synth_phys_osc`,
`lsr_synth_matsci` (and any other problem set, e.g. `llmsr`), plus `all`. Symbolic accuracy counts
only attempts whose problem has a ground truth (None when none has); an invalid equation counts
as +inf NMSE in the median and as a miss in Acc_0.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.srbench.analyses import Analyses
from pytest_lsrb.srbench.metrics import median_or_none

GROUP_ORDER: Final = (
    "lsr_transform",
    "lsr_synth_chem_react",
    "lsr_synth_bio_pop_growth",
    "lsr_synth_phys_osc",
    "lsr_synth_matsci",
)
ALL: Final = "all"


def _pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 2) if den else None


@dataclass
class GroupStats:
    attempts: int = 0
    valid: int = 0
    symbolic_applicable: int = 0
    symbolic_matches: int = 0
    acc_id: int = 0
    ood_attempts: int = 0
    acc_ood: int = 0
    nmse_id: list[float | None] = field(default_factory=list)
    nmse_ood: list[float | None] = field(default_factory=list)

    def add(self, rec: Mapping[str, Any]) -> None:
        self.attempts += 1
        self.valid += bool(rec.get("valid"))
        match = rec.get("symbolic_match")
        if match is not None:
            self.symbolic_applicable += 1
            self.symbolic_matches += bool(match)
        self.acc_id += bool(rec.get("acc_tau_id"))
        self.nmse_id.append(rec.get("nmse_id"))
        if rec.get("has_ood"):
            self.ood_attempts += 1
            self.acc_ood += bool(rec.get("acc_tau_ood"))
            self.nmse_ood.append(rec.get("nmse_ood"))

    def finish(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "valid_rate": round(self.valid / self.attempts, 4) if self.attempts else None,
            "symbolic_accuracy_pct": _pct(self.symbolic_matches, self.symbolic_applicable),
            "symbolic_applicable": self.symbolic_applicable,
            "acc_tau_id_pct": _pct(self.acc_id, self.attempts),
            "acc_tau_ood_pct": _pct(self.acc_ood, self.ood_attempts),
            "median_nmse_id": median_or_none(self.nmse_id),
            "median_nmse_ood": median_or_none(self.nmse_ood) if self.ood_attempts else None,
        }


class SrbenchSummary:
    """The llm_srbench summary section (a `SummaryAccumulator`)."""

    def __init__(self) -> None:
        self.groups: dict[str, GroupStats] = {}
        self.methods: dict[str, int] = {}
        self.judge_pairs = 0  # attempts where the sympy checker and the LLM judge both decided
        self.judge_agree = 0
        self.analyses = Analyses()  # search progress, ID vs OOD, symbolic vs OOD, complexity

    def add(self, record: Mapping[str, Any]) -> None:
        group = str(record.get("problem_group") or "unknown")
        for key in (group, ALL):
            self.groups.setdefault(key, GroupStats()).add(record)
        method = str(record.get("sr_method") or "unknown")
        self.methods[method] = self.methods.get(method, 0) + 1
        self.analyses.add(record)
        by_sympy, by_llm = record.get("symbolic_match_sympy"), record.get("symbolic_match_llm")
        if by_sympy is not None and by_llm is not None:
            self.judge_pairs += 1
            self.judge_agree += by_sympy == by_llm

    def finish(self) -> dict[str, Any]:
        order: list[str] = [g for g in GROUP_ORDER if g in self.groups]
        order += sorted(g for g in self.groups if g not in GROUP_ORDER and g != ALL)
        table = {g: self.groups[g].finish() for g in [*order, ALL] if g in self.groups}
        overall = table.get(ALL, GroupStats().finish())
        return {
            "srbench_table": table,
            "sr_methods": dict(sorted(self.methods.items())),
            "sr_symbolic_accuracy_pct": overall["symbolic_accuracy_pct"],
            "sr_acc_tau_id_pct": overall["acc_tau_id_pct"],
            "sr_acc_tau_ood_pct": overall["acc_tau_ood_pct"],
            "sr_median_nmse_id": overall["median_nmse_id"],
            "sr_median_nmse_ood": overall["median_nmse_ood"],
            "sr_judge_pairs": self.judge_pairs,
            "sr_judge_agreement": (
                round(self.judge_agree / self.judge_pairs, 4) if self.judge_pairs else None
            ),
            **self.analyses.finish(),
            "terminal_extra_keys": [
                "sr_symbolic_accuracy_pct",
                "sr_acc_tau_id_pct",
                "sr_acc_tau_ood_pct",
                "sr_median_nmse_id",
                "sr_median_nmse_ood",
                *(["sr_judge_agreement"] if self.judge_pairs else []),
            ],
        }


def table_lines(summary: Mapping[str, Any]) -> list[str]:
    """Table 1 as fixed-width text (for a terminal or a report)."""
    table = summary.get("srbench_table") or {}
    head = (
        f"{'group':<26} {'n':>4} {'SA%':>6} {'Acc0.1 ID%':>10} {'Acc0.1 OOD%':>11} "
        f"{'NMSE ID':>10} {'NMSE OOD':>10}"
    )
    lines = [head]

    def f(v: Any, width: int, fmt: str) -> str:
        return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"

    order = [g for g in GROUP_ORDER if g in table]
    order += sorted(g for g in table if g not in GROUP_ORDER and g != ALL)
    for group in [*order, *([ALL] if ALL in table else [])]:
        row = table[group]
        lines.append(
            f"{group:<26} {row['attempts']:>4} {f(row['symbolic_accuracy_pct'], 6, '.1f')} "
            f"{f(row['acc_tau_id_pct'], 10, '.1f')} {f(row['acc_tau_ood_pct'], 11, '.1f')} "
            f"{f(row['median_nmse_id'], 10, '.3g')} {f(row['median_nmse_ood'], 10, '.3g')}"
        )
    return lines
