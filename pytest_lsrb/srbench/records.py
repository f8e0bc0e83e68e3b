"""The llm_srbench family's attempt record: the shared `AttemptRecord` plus the discovery run's
fields and the paper's metrics (published as the `srbench_attempt_record` JSON Schema).

Every part of an llm_srbench attempt builds its fields as `SrbenchFields` (the discovery method's
`DiscoveryResult.record_fields`, the scorer's `score`, the LLM judge's, the search progress), so
mypy checks each key and type against this one definition. Add a field here, with a docstring
under it (`engine.records` says what follows from it)."""

from __future__ import annotations

from typing import Any

from pydantic import with_config

from pytest_lsrb.adapters.usage import Count
from pytest_lsrb.engine.records import RECORD_CONFIG, AttemptFields, AttemptRecord


@with_config(RECORD_CONFIG)
class SrbenchFields(AttemptFields, total=False):
    """What the llm_srbench task's `run_attempt` returns: the shared fields and these."""

    equation: str | None
    """The best equation found, with its fitted parameters (also `proposal`)."""
    sr_method: str | None
    """The discovery method (`direct`, `llmsr`, `lasr`, `sga`)."""
    sr_budget: Count | None
    """The method's budget of model calls (--lsrb-sr-budget, else the method's own)."""
    sr_per_problem: str | None
    """Table 1's rule for several samples: `sample0` or `best_train` (best-of-k)."""
    problem_set: str | None
    """The problem set (`lsr_transform`, `lsr_synth`, ...)."""
    problem_group: str | None
    """Table 1's group (`lsr_transform`, `lsr_synth_<domain>`)."""
    domain: str | None
    """The scientific domain (chemistry, biology, physics, material science)."""
    sr_release_note: str | None
    """The official release's counts per split (and what it lacks)."""
    has_ood: bool | None
    """The problem has out-of-domain test data."""
    nmse_id: float | None
    """NMSE on the in-domain test data, under `metrics_policy` (null: not finite)."""
    nmse_ood: float | None
    """NMSE on the out-of-domain test data (null: not finite, or no OOD data)."""
    acc_tau_id: bool | None
    """Acc_τ in-domain: every test point within relative error τ (the paper's Acc_0.1)."""
    acc_tau_ood: bool | None
    """Acc_τ on the OOD data."""
    symbolic_match: bool | None
    """The equation has the truth's form (the paper's symbolic accuracy); null: no verdict (no
    ground truth, or the check did not decide)."""
    symbolic_match_sympy: bool | None
    """With --lsrb-sr-judge=both: the sympy rule's verdict."""
    symbolic_match_llm: bool | None
    """With --lsrb-sr-judge=both: the LLM judge's verdict."""
    # -- the discovery run (every method)
    skeleton: str | None
    """The best program with its parameters as symbols."""
    params: list[float | None] | None
    """Its fitted parameters (a non-finite one is written as null)."""
    train_mse: float | None
    """MSE of the best program on the training data."""
    train_nmse: float | None
    """NMSE of the best program on the training data."""
    search_trace_length: Count | None
    """Candidates scored."""
    proposal_error_kind: str | None
    """Why the best answer is not a usable equation."""
    result_is_starting_skeleton: bool | None
    """The result is the method's own starting skeleton (no answer of the model fitted better)."""
    fallback_result: bool | None
    """The scored equation is the method's fallback, no model answer contributed to it (LLM-SR,
    Direct and SGA: their starting skeleton stood; LaSR: no answer of the model entered the
    search). Scored as the reference scores it: NMSE, Acc_τ and symbolic accuracy of what the
    method returned, so Table 1 counts it, flagged (its `fb` column)."""
    model_valid_candidates: Count | None
    """Usable candidates the model proposed."""
    candidate_errors: dict[str, Any] | None
    """Why candidates were refused: kind -> candidates."""
    generation_errors: dict[str, Any] | None
    """Failed model calls: kind -> calls."""
    model_answers: list[Any] | None
    """A bounded trace of the model's answers: `{call, status, answer}`."""
    best_found_at_call: int | None
    """The model call that gave the best program (0: the starting skeleton)."""
    best_from_model: bool | None
    """The best program came from a model call."""
    best_nmse_by_call: list[Any] | None
    """`[call, train NMSE]` at each new best."""
    search_progress: list[Any] | None
    """`[call, nmse_train, nmse_id, nmse_ood]` at each new best (`scoring.progress`)."""
    truth_complexity: int | None
    """Node count of the ground truth."""
    fit_method: str | None
    """How the best program's parameters were fitted (`fitting`)."""
    fit_status: str | None
    """How that fit ended."""
    fit_time_limit_hits: Count | None
    """Candidate fits that reached --lsrb-sr-fit-time-limit (30 s, the reference's cap): invalid
    candidates, as the reference scores a program past its timeout. A loaded machine shows here
    (summary.json: `sr_fit_time_limit_hits`). LaSR's fits have no such cap."""
    stop_reason: str | None
    """Why the search stopped (`budget`, `time_limit`, `iterations`, `fatal_error`, ...)."""
    wall_time_s: float | None
    """Wall time of the search, in seconds (a timing field)."""
    # -- method-specific (llmsr, lasr, sga)
    buffer_resets: int | None
    """LLM-SR: times the experience buffer was reset."""
    iterations: int | None
    """LaSR: iterations of the evolutionary search."""
    lasr_backend: str | None
    """LaSR: the search engine, when not the built-in one (`pysr`)."""
    concepts: list[Any] | None
    """LaSR's concept library."""
    llm_calls_by_kind: dict[str, Any] | None
    """LaSR: model calls by operation (`mutate`, `crossover`, `gen_random`, `concepts`, ...)."""
    llm_used_by_kind: dict[str, Any] | None
    """LaSR: answers of those calls the search used, by operation."""
    operator_counts: dict[str, Any] | None
    """LaSR: evolutionary operators applied, by kind."""
    pareto_front: list[Any] | None
    """LaSR: `[size, loss]` of each program on the final Pareto front."""
    sga_temperatures: list[Any] | None
    """SGA: the exploitation and exploration temperatures."""
    # -- scoring: the reference's metrics per split, the policy, and the symbolic check
    metrics_policy: str | None
    """Which points the metrics count (`reference` or `strict`: --lsrb-sr-metrics)."""
    sr_success: str | None
    """What counts as verified (`acc_0.1` or `symbolic`: --lsrb-sr-success)."""
    tau: float | None
    """τ of Acc_τ."""
    mse_id: float | None
    """MSE on the in-domain test data."""
    mse_ood: float | None
    """MSE on the OOD data."""
    r2_id: float | None
    """R² on the in-domain test data."""
    r2_ood: float | None
    """R² on the OOD data."""
    kendall_tau_id: float | None
    """Kendall τ-b of (truth, prediction) in-domain."""
    kendall_tau_ood: float | None
    """Kendall τ-b on the OOD data."""
    mape_id: float | None
    """Mean absolute percentage error in-domain."""
    mape_ood: float | None
    """Mean absolute percentage error on the OOD data."""
    frac_within_tau_id: float | None
    """Fraction of in-domain test points within relative error τ."""
    frac_within_tau_ood: float | None
    """Fraction of OOD points within relative error τ."""
    num_points_id: Count | None
    """In-domain test points."""
    num_points_ood: Count | None
    """OOD test points."""
    num_valid_points_id: Count | None
    """In-domain test points the metrics counted (the policy's)."""
    num_valid_points_ood: Count | None
    """OOD points the metrics counted."""
    pred_sample_id: list[Any] | None
    """A bounded sample of in-domain `[true, predicted]` pairs."""
    pred_sample_ood: list[Any] | None
    """A bounded sample of OOD `[true, predicted]` pairs."""
    symbolic_method: str | None
    """How the symbolic verdict was reached (or why it was not)."""
    symbolic_residual: float | None
    """Relative RMS of the proposal's best fit to the truth."""
    symbolic_scale: str | None
    """The rule's reading of an additive constant alone (--lsrb-sr-sa-scale), where the rule judged."""
    # -- the LLM judge (--lsrb-sr-judge=llm)
    judge_model: str | None
    """The judge's model."""
    judge_raw_output: str | None
    """What the judge wrote, an excerpt (`core.excerpts`)."""
    judge_raw_output_chars: Count | None
    """Its whole length, when the excerpt cut it."""
    judge_latency_ms: float | None
    """Wall time of the judge's call, in milliseconds."""
    judge_model_calls: Count | None
    """HTTP requests the judge sent."""
    judge_error_kind: str | None
    """Why the judge gave no verdict (a generation error kind)."""
    # -- the whole lengths of `raw_output` and `proposal` when the record keeps an excerpt
    raw_output_chars: Count | None
    """The whole length of `raw_output`, when the record keeps an excerpt."""
    proposal_chars: Count | None
    """The whole length of `proposal`, when the record keeps an excerpt."""


@with_config(RECORD_CONFIG)
class SrbenchAttemptRecord(AttemptRecord, SrbenchFields):
    """One llm_srbench attempt: a discovery run and its best equation, scored."""
