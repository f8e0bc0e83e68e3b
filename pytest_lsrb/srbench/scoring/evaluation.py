"""Scoring one discovery result on a problem: the attempt record's metric and verification fields.

Test metrics come from `test` (in-domain, suffix `_id`) and `ood_test` (suffix `_ood`); symbolic
accuracy from `srbench.scoring.symbolic`. Verification succeeds on Acc_0.1 of the in-domain test data by
default, or on a symbolic match (`--lsrb-sr-success=symbolic`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from pytest_lsrb.core.bounded import Budget, call_bounded, preload
from pytest_lsrb.equations import UNSUPPORTED_KINDS
from pytest_lsrb.srbench.data.problem import SPLITS, Problem
from pytest_lsrb.srbench.limits import SYMBOLIC_BUDGET
from pytest_lsrb.srbench.methods.base import DiscoveryResult
from pytest_lsrb.srbench.options import MetricsPolicy
from pytest_lsrb.srbench.records import SrbenchFields
from pytest_lsrb.srbench.scoring.metrics import EMPTY, NO_OOD, TAU, SplitMetrics, split_metrics
from pytest_lsrb.srbench.scoring.outcomes import EQUATION_OUTCOMES
from pytest_lsrb.srbench.scoring.symbolic import NOT_APPLICABLE, SymbolicVerdict, symbolic_match

# Children of the bounded checker start with these imported (see core.bounded).
preload("pytest_lsrb.srbench.scoring.symbolic")
UNDECIDED: Final = "undecided"  # symbolic_method when the check ran out of its budget

VERIFICATION_MODE: Final = "equation"

# Verification outcomes of an equation and whose each is: `scoring.outcomes.EQUATION_OUTCOMES`.


def all_inputs(problem: Problem) -> dict[str, np.ndarray]:
    """Every row's inputs (train, test and OOD): the domain the symbolic check samples from."""
    return all_rows(problem)[0]


def all_rows(problem: Problem) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every row's inputs and output (train, test and OOD): the domain the symbolic check
    samples from, and the data a template truth's named parameters are fitted to."""
    tables = [t for t in (problem.split(s) for s in SPLITS) if t is not None]
    stacked = np.concatenate(tables)
    return {name: stacked[:, i + 1] for i, name in enumerate(problem.inputs)}, stacked[:, 0]


PREDICTION_SAMPLE_POINTS: Final = 50  # (true, predicted) pairs kept per split for the report's plots


def prediction_sample(
    problem: Problem, result: DiscoveryResult, split: str, points: int = PREDICTION_SAMPLE_POINTS
) -> list[list[float]] | None:
    """Up to `points` (true, predicted) pairs of `split`, evenly spaced over its rows, finite only:
    what the report's predicted-vs-true plots draw. None without a usable equation or that split."""
    if problem.split(split) is None or result.program is None or not result.found:
        return None
    X, y = problem.columns(split)
    with np.errstate(all="ignore"):
        yhat = np.asarray(
            result.program.evaluate(X, np.asarray(result.params) if result.program.n_params else None),
            dtype=float,
        )
    if yhat.shape != y.shape:
        yhat = np.broadcast_to(yhat, y.shape)
    keep = np.flatnonzero(np.isfinite(y) & np.isfinite(yhat))
    if keep.size == 0:
        return None
    chosen = keep[np.unique(np.linspace(0, keep.size - 1, min(points, keep.size)).round().astype(int))]
    return [[float(f"{y[i]:.6g}"), float(f"{yhat[i]:.6g}")] for i in chosen]


def split_scores(
    problem: Problem,
    result: DiscoveryResult,
    split: str,
    tau: float = TAU,
    policy: MetricsPolicy = "reference",
) -> SplitMetrics:
    table = problem.split(split)
    if table is None:
        return EMPTY
    X, y = problem.columns(split)
    if result.program is None or not result.found:
        return split_metrics(y, np.full_like(y, np.nan), tau, policy)
    yhat = result.program.evaluate(X, np.asarray(result.params) if result.program.n_params else None)
    return split_metrics(y, yhat, tau, policy)


def score(
    problem: Problem,
    result: DiscoveryResult,
    *,
    judge: str = "sympy",
    success: str = "acc_0.1",
    verify: bool = True,
    tau: float = TAU,
    llm: SymbolicVerdict | None = None,
    metrics: MetricsPolicy = "reference",
    symbolic_budget: Budget | None = None,
    sa_scale: str = "free",
) -> SrbenchFields:
    """The record fields for one result: metrics (under the `metrics` policy), symbolic verdict
    and verification. `llm` is the LLM judge's verdict when the judge ran (`judge` llm or both);
    `symbolic_budget` bounds the sympy checker (default: `SYMBOLIC_BUDGET`); `sa_scale`: its
    reading of an additive constant alone (`srbench.scoring.symbolic`, free or strict)."""
    id_m = split_scores(problem, result, "test", tau, metrics)
    ood_m = split_scores(problem, result, "ood_test", tau, metrics)
    has_ood = problem.ood_test is not None
    fields: SrbenchFields = {
        **id_m.record_id(),
        **(ood_m.record_ood() if has_ood else NO_OOD),
        "tau": tau,
        "metrics_policy": metrics,
        "has_ood": has_ood,
        # The model's own work: a search that proposed no valid candidate (its result is then its
        # fallback) has no valid answer; the fallback is scored all the same (`fallback_result`).
        "valid": bool(result.the_models and id_m.valid),
        "nonempty": bool(result.proposal.strip() or result.raw_output.strip()),
        "pred_sample_id": prediction_sample(problem, result, "test"),
        "pred_sample_ood": prediction_sample(problem, result, "ood_test") if has_ood else None,
    }
    verdict = _symbolic(problem, result, judge, llm, symbolic_budget or SYMBOLIC_BUDGET, sa_scale)
    fields.update(verdict.record())
    # Which additive-constant reading decided (the rule judged: not the LLM judge, not without a truth).
    ruled = judge in ("sympy", "both") and problem.has_ground_truth
    fields["symbolic_scale"] = sa_scale if ruled else None
    if judge == "both" and problem.has_ground_truth:
        llm_match = llm.match if llm is not None else (False if not result.found else None)
        fields.update({"symbolic_match_sympy": verdict.match, "symbolic_match_llm": llm_match})
    if not verify:
        fields.update(
            {
                "verification_mode": "none",
                "verification_attempted": False,
                "verification_success": None,
                "verification_outcome": "not_attempted",
            }
        )
        return fields
    # What the method returned is what is judged, its fallback included (the reference scores
    # LLM-SR's starting skeleton, PySR's best, SGA's primitive when the model's answers did not
    # beat them); the record flags a fallback (`fallback_result`).
    outcome = _outcome(result, id_m, verdict, success)
    attempted = outcome != "not_applicable"
    ok = attempted and EQUATION_OUTCOMES[outcome] is None
    fields.update(
        {
            "verification_mode": VERIFICATION_MODE,
            "verification_attempted": attempted,
            "verification_success": ok if attempted else None,
            "verification_outcome": outcome,
            "verification_error_kind": None if ok or not attempted else outcome,
            "verification_error_domain": None if ok or not attempted else EQUATION_OUTCOMES[outcome],
            "sr_success": success,
        }
    )
    if not attempted:  # no symbolic verdict: the attempt is skipped (`outcomes`), saying why
        fields["verification_detail"] = (
            f"no symbolic verdict ({verdict.method}): {verdict.detail or 'no detail'}"
        )
    return fields


def _symbolic(
    problem: Problem,
    result: DiscoveryResult,
    judge: str,
    llm: SymbolicVerdict | None,
    budget: Budget,
    sa_scale: str = "free",
) -> SymbolicVerdict:
    if not problem.has_ground_truth:
        return NOT_APPLICABLE
    if judge == "none":
        return SymbolicVerdict(match=None, method="skipped")
    if judge == "llm":
        if not result.found:
            return SymbolicVerdict(match=False, method="no_proposal")
        return llm if llm is not None else SymbolicVerdict(match=None, method="llm_error")
    program = result.program if result.found else None
    if program is None:
        return symbolic_match(None, problem.ground_truth(), all_inputs(problem))
    # sympy on a model's answer has no bound of its own (one trig-heavy answer took minutes and
    # tens of GB): the check runs in a child process under a time and memory budget.
    columns, target = all_rows(problem)
    checked = call_bounded(
        symbolic_match,
        program,
        problem.ground_truth(),
        columns,
        params=list(result.params),
        target=target,
        scale=sa_scale,
        budget=budget,
    )
    if checked.ok and checked.value is not None:
        return checked.value
    return SymbolicVerdict(
        match=None,
        method=UNDECIDED,
        detail=f"the symbolic check ended with {checked.status} ({checked.detail.splitlines()[0]})",
    )


def _outcome(result: DiscoveryResult, id_m: SplitMetrics, verdict: SymbolicVerdict, success: str) -> str:
    if not result.found and result.proposal_error_kind in UNSUPPORTED_KINDS:
        return "unsupported_equation"
    if success == "symbolic":
        if verdict.match is None:
            return "not_applicable"
        if not result.found:
            return "no_equation"
        return "symbolic_match" if verdict.match else "symbolic_mismatch"
    if not result.found:
        return "no_equation"
    if not id_m.valid:
        return "not_finite"
    return "accurate" if id_m.acc_tau else "inaccurate"


def summary_message(record: Mapping[str, Any]) -> str:
    """One line for a failed test: the equation and its in-domain scores."""
    eq = record.get("equation") or record.get("proposal") or ""
    shown = eq if len(eq) <= 120 else eq[:117] + "..."
    parts = [f"outcome {record.get('verification_outcome')}"]
    if record.get("nmse_id") is not None:
        parts.append(f"nmse_id={record['nmse_id']:.3g}")
    parts.append(f"frac_within_tau_id={record.get('frac_within_tau_id', 0.0):.2f}")
    if record.get("symbolic_match") is not None:
        parts.append(f"symbolic_match={record['symbolic_match']}")
    return f"{shown!r}: " + ", ".join(parts)
