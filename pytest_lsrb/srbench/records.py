"""The llm_srbench family's attempt record: the shared `AttemptRecord` plus the discovery run's
fields and the paper's metrics (published as the `srbench_attempt_record` JSON Schema)."""

from __future__ import annotations

from pytest_lsrb.engine.records import AttemptRecord


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
