"""The llm_srbench family's attempt record: the shared `AttemptRecord` plus the discovery run's
fields and the paper's metrics (published as the `srbench_attempt_record` JSON Schema)."""

from __future__ import annotations

from typing import Any

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
    sr_release_note: str | None = None  # the official release's counts per split (and what it lacks)
    has_ood: bool | None = None
    nmse_id: float | None = None
    nmse_ood: float | None = None
    acc_tau_id: bool | None = None
    acc_tau_ood: bool | None = None
    symbolic_match: bool | None = None  # None: the problem has no ground truth
    # The discovery run (every method)
    skeleton: str | None = None  # the best program with its parameters as symbols
    params: list[float] | None = None  # its fitted parameters
    train_mse: float | None = None
    train_nmse: float | None = None
    search_trace_length: int | None = None  # candidates scored
    proposal_error_kind: str | None = None  # why the best answer is not a usable equation
    result_is_starting_skeleton: bool | None = None  # the result is the method's own starting skeleton
    model_valid_candidates: int | None = None  # usable candidates the model proposed
    candidate_errors: dict[str, Any] | None = None  # why candidates were refused, by kind
    generation_errors: dict[str, Any] | None = None  # failed model calls, by kind
    finish_reasons: dict[str, Any] | None = None
    model_answers: list[Any] | None = None  # bounded trace of the model's answers
    best_found_at_call: int | None = None
    best_from_model: bool | None = None
    best_nmse_by_call: list[Any] | None = None
    search_progress: list[Any] | None = None  # [call, nmse_train, nmse_id, nmse_ood] per call
    truth_complexity: int | None = None  # node count of the ground truth
    fit_method: str | None = None
    fit_status: str | None = None
    stop_reason: str | None = None
    wall_time_s: float | None = None
    # Method-specific (llmsr, lasr, sga)
    buffer_resets: int | None = None
    iterations: int | None = None
    concepts: list[Any] | None = None  # LaSR's concept library
    llm_calls_by_kind: dict[str, Any] | None = None
    llm_used_by_kind: dict[str, Any] | None = None
    operator_counts: dict[str, Any] | None = None
    pareto_front: list[Any] | None = None
    sga_temperatures: list[Any] | None = None
    # Scoring: the reference's metrics per split, the policy, and the symbolic check
    metrics_policy: str | None = None
    sr_success: str | None = None
    tau: float | None = None
    mse_id: float | None = None
    mse_ood: float | None = None
    r2_id: float | None = None
    r2_ood: float | None = None
    kendall_tau_id: float | None = None
    kendall_tau_ood: float | None = None
    mape_id: float | None = None
    mape_ood: float | None = None
    frac_within_tau_id: float | None = None
    frac_within_tau_ood: float | None = None
    num_points_id: int | None = None
    num_points_ood: int | None = None
    num_valid_points_id: int | None = None
    num_valid_points_ood: int | None = None
    pred_sample_id: list[Any] | None = None  # a bounded sample of (true, predicted) pairs
    pred_sample_ood: list[Any] | None = None
    symbolic_method: str | None = None  # how the symbolic verdict was reached (or undecided)
    symbolic_residual: float | None = None
    symbolic_scale: str | None = None  # the rule's overall factor (--lsrb-sr-sa-scale) where it judged
    # The LLM judge (--lsrb-sr-judge=llm)
    judge_model: str | None = None
    judge_raw_output: str | None = None  # an excerpt (`core.excerpts`), its length when cut:
    judge_raw_output_chars: int | None = None
    # the whole lengths of `raw_output` and `proposal` when the record keeps an excerpt
    raw_output_chars: int | None = None
    proposal_chars: int | None = None
    judge_latency_ms: float | None = None
    judge_model_calls: int | None = None
    judge_error_kind: str | None = None


class SrbenchFields(AttemptFields, total=False):
    """What the llm_srbench task's `run_attempt` returns: `SrbenchAttemptRecord`'s optional fields."""

    equation: str | None
    sr_method: str | None
    sr_budget: int | None
    sr_per_problem: str | None
    problem_set: str | None
    problem_group: str | None
    domain: str | None
    sr_release_note: str | None
    has_ood: bool | None
    nmse_id: float | None
    nmse_ood: float | None
    acc_tau_id: bool | None
    acc_tau_ood: bool | None
    symbolic_match: bool | None
    # The discovery run (every method)
    skeleton: str | None
    params: list[float] | None
    train_mse: float | None
    train_nmse: float | None
    search_trace_length: int | None
    proposal_error_kind: str | None
    result_is_starting_skeleton: bool | None
    model_valid_candidates: int | None
    candidate_errors: dict[str, Any] | None
    generation_errors: dict[str, Any] | None
    finish_reasons: dict[str, Any] | None
    model_answers: list[Any] | None
    best_found_at_call: int | None
    best_from_model: bool | None
    best_nmse_by_call: list[Any] | None
    search_progress: list[Any] | None
    truth_complexity: int | None
    fit_method: str | None
    fit_status: str | None
    stop_reason: str | None
    wall_time_s: float | None
    # Method-specific (llmsr, lasr, sga)
    buffer_resets: int | None
    iterations: int | None
    concepts: list[Any] | None
    llm_calls_by_kind: dict[str, Any] | None
    llm_used_by_kind: dict[str, Any] | None
    operator_counts: dict[str, Any] | None
    pareto_front: list[Any] | None
    sga_temperatures: list[Any] | None
    # Scoring: the reference's metrics per split, the policy, and the symbolic check
    metrics_policy: str | None
    sr_success: str | None
    tau: float | None
    mse_id: float | None
    mse_ood: float | None
    r2_id: float | None
    r2_ood: float | None
    kendall_tau_id: float | None
    kendall_tau_ood: float | None
    mape_id: float | None
    mape_ood: float | None
    frac_within_tau_id: float | None
    frac_within_tau_ood: float | None
    num_points_id: int | None
    num_points_ood: int | None
    num_valid_points_id: int | None
    num_valid_points_ood: int | None
    pred_sample_id: list[Any] | None
    pred_sample_ood: list[Any] | None
    symbolic_method: str | None
    symbolic_residual: float | None
    symbolic_scale: str | None
    # The LLM judge (--lsrb-sr-judge=llm)
    judge_model: str | None
    judge_raw_output: str | None
    judge_raw_output_chars: int | None
    raw_output_chars: int | None
    proposal_chars: int | None
    judge_latency_ms: float | None
    judge_model_calls: int | None
    judge_error_kind: str | None


class SrbenchAttemptDict(AttemptDict, SrbenchFields):
    """`SrbenchAttemptRecord` as a TypedDict: one llm_srbench record, a plain dict at run time."""
