"""One NMSE and the paper's Acc_τ through the whole record (issue #30, item 2): the record's
`nmse_id`, its `search_progress` and Table 1 read the same number under either metrics policy;
Acc_τ is over all test points (a NaN prediction anywhere is not accurate); and a result that is
the method's fallback (issue #40: the starting skeleton stood) counts in Table 1 as it scores,
flagged, as the reference counts what a method returns."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.data.problem import Problem, output_first
from pytest_lsrb.srbench.methods.base import DiscoveryResult, TracePoint
from pytest_lsrb.srbench.options import METRICS_POLICIES, MetricsPolicy
from pytest_lsrb.srbench.scoring.evaluation import score
from pytest_lsrb.srbench.scoring.progress import progress_fields
from pytest_lsrb.srbench.tables.table import table1


def _problem() -> Problem:
    """y = x on a training box of positive x; the in-domain test half negative (the issue's
    `c0*sqrt(x)**2` is NaN there), the OOD split all positive."""
    rng = np.random.default_rng(3)
    train_x = rng.uniform(0.5, 2.0, 100)
    test_x = np.concatenate([rng.uniform(-2.0, -0.5, 48), rng.uniform(0.5, 2.0, 52)])
    ood_x = rng.uniform(2.0, 4.0, 50)
    return Problem(
        name="half_negative",
        symbols=["y", "x"],
        symbol_descs=["output", "input"],
        symbol_properties=output_first(1),
        problem_set="lsr_synth",
        domain="matsci",
        expression="x",
        train=np.column_stack([train_x, train_x]),
        test=np.column_stack([test_x, test_x]),
        ood_test=np.column_stack([ood_x, ood_x]),
    )


def _result(text: str, params: tuple[float, ...], **extra: object) -> DiscoveryResult:
    program = parse_expression(text, ["x"], free_params=True)
    return DiscoveryResult(
        program=program,
        params=params,
        proposal=text,
        train_mse=0.0,
        train_nmse=0.0,
        extra=dict(extra),
        trace=[TracePoint(call=1, program=program, params=params)],
    )


@pytest.mark.parametrize("policy", METRICS_POLICIES)
def test_search_progress_reads_the_records_nmse(policy: MetricsPolicy) -> None:
    problem = _problem()
    result = _result("c0*sqrt(x)**2 + 0.01*x", (1.0,))
    fields = score(problem, result, metrics=policy)
    [point] = progress_fields(problem, result, policy)["search_progress"] or []
    assert point[2] == fields["nmse_id"] and point[3] == fields["nmse_ood"]
    if policy == "reference":  # the NaN half dropped: a finite NMSE on the positive half
        assert fields["nmse_id"] is not None and fields["num_valid_points_id"] == 52
    else:
        assert fields["nmse_id"] is None


@pytest.mark.parametrize("policy", METRICS_POLICIES)
def test_acc_tau_counts_every_test_point_whatever_the_policy(policy: MetricsPolicy) -> None:
    """The issue's case: `c0*sqrt(x)**2` is exact wherever it is defined (52 of 100 points)."""
    fields = score(_problem(), _result("c0*sqrt(x)**2", (1.0,)), metrics=policy)
    assert fields["acc_tau_id"] is False and fields["frac_within_tau_id"] == pytest.approx(0.52)
    assert fields["acc_tau_ood"] is True  # defined everywhere there
    assert fields["verification_outcome"] in ("inaccurate", "not_finite")


def test_a_fallback_counts_in_table_1_as_it_scores_and_is_flagged() -> None:
    problem = _problem()
    # The starting skeleton fits exactly, but the model proposed no valid candidate of its own.
    skeleton_won = _result("c0*x", (1.0,), model_valid_candidates=0)
    skeleton_won.fallback = True
    own = _result("c0*x", (1.0,), model_valid_candidates=3)
    nothing = DiscoveryResult(program=None, raw_output="no idea")
    rows = []
    for i, result in enumerate((skeleton_won, own, nothing)):
        fields = {**result.record_fields(), **score(problem, result)}
        rows.append(
            {**fields, "item_id": f"p{i}", "sample_index": 0, "sr_method": "llmsr", "problem_group": "g"}
        )
    assert rows[0]["verification_outcome"] == "accurate" and rows[0]["fallback_result"] is True
    assert rows[0]["valid"] is False and rows[0]["symbolic_match"] is True
    assert rows[2]["verification_outcome"] == "no_equation" and rows[2]["fallback_result"] is False
    row = table1(rows)["g"]
    assert row["fallback_results"] == 1 and row["attempts"] == 3
    assert row["acc_tau_id_pct"] == pytest.approx(200 / 3, abs=0.01)
    assert row["symbolic_accuracy_pct"] == pytest.approx(200 / 3, abs=0.01)
    assert row["median_nmse_id"] == 0.0  # the median of (0, 0, +inf)
    only_skeleton = table1(rows[:1])["g"]
    assert only_skeleton["acc_tau_id_pct"] == 100.0 and only_skeleton["fallback_results"] == 1
