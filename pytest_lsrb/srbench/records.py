"""The llm_srbench family's attempt record: the shared `AttemptRecord` plus the discovery run's
fields and the paper's metrics (published as the `srbench_attempt_record` JSON Schema)."""

from __future__ import annotations

from pytest_lsrb.engine.records import AttemptDict, AttemptFields, AttemptRecord


class SrbenchAttemptRecord(AttemptRecord):
    """One llm_srbench attempt: a discovery run and its best equation, scored."""

    equation: str | None = None  # the best equation found (also `proposal`)
    sr_method: str | None = None
    sr_budget: int | None = None
    sr_per_problem: str | None = None  # Table 1's rule: sample0 or best_train (best-of-k)
    problem_set: str | None = None
    problem_group: str | None = None  # Table 1's group (`lsr_transform`, `lsr_synth_<domain>`)
    domain: str | None = None
    has_ood: bool | None = None
    nmse_id: float | None = None
    nmse_ood: float | None = None
    acc_tau_id: bool | None = None
    acc_tau_ood: bool | None = None
    symbolic_match: bool | None = None  # None: the problem has no ground truth


class SrbenchFields(AttemptFields, total=False):
    """What the llm_srbench task's `run_attempt` returns: `SrbenchAttemptRecord`'s optional fields."""

    equation: str | None
    sr_method: str | None
    sr_budget: int | None
    sr_per_problem: str | None
    problem_set: str | None
    problem_group: str | None
    domain: str | None
    has_ood: bool | None
    nmse_id: float | None
    nmse_ood: float | None
    acc_tau_id: bool | None
    acc_tau_ood: bool | None
    symbolic_match: bool | None


class SrbenchAttemptDict(AttemptDict, SrbenchFields):
    """`SrbenchAttemptRecord` as a TypedDict: one llm_srbench record, a plain dict at run time."""
