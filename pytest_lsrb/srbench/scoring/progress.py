"""Search progress of one discovery run: the best hypothesis by model call, on train and test.

A method reports each new best hypothesis with the model call it came at (`TracePoint`); after
the search this scores every one on the training, in-domain test and OOD data, so the record can
show how the test NMSE followed the training NMSE as the budget was spent (the paper's search
curves). The method itself never sees the test data.

Record field `search_progress`: `[[call, train_nmse, nmse_id, nmse_ood], ...]` in call order,
one point per call at which the best changed (the last best at that call); each NMSE is the
record's own (`metrics.split_metrics` under the run's `--lsrb-sr-metrics` policy, so the last
point of a search equals `nmse_id`/`nmse_ood` of the same equation); non-finite NMSEs are null.
`truth_complexity`: the ground truth's expression-tree size (null without one), the x-axis of the
paper's complexity analysis.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.methods.base import DiscoveryResult, TracePoint
from pytest_lsrb.srbench.options import MetricsPolicy
from pytest_lsrb.srbench.records import SrbenchFields
from pytest_lsrb.srbench.scoring.metrics import split_metrics

SPLIT_FIELDS: Final = (("train", 1), ("test", 2), ("ood_test", 3))
MAX_POINTS: Final = 200  # a record keeps at most this many points (the last ones when more)


def _nmse_or_none(problem: Problem, split: str, point: TracePoint, policy: MetricsPolicy) -> float | None:
    if problem.split(split) is None:
        return None
    X, y = problem.columns(split)
    params = np.asarray(point.params) if point.program.n_params else None
    with np.errstate(all="ignore"):
        yhat = np.broadcast_to(point.program.evaluate(X, params), y.shape)
    return split_metrics(y, yhat, policy=policy).nmse


def last_per_call(trace: list[TracePoint]) -> list[TracePoint]:
    """One point per call: the last best reported at that call."""
    out: list[TracePoint] = []
    for point in trace:
        if out and out[-1].call == point.call:
            out[-1] = point
        else:
            out.append(point)
    return out[-MAX_POINTS:]


def progress_fields(
    problem: Problem, result: DiscoveryResult, policy: MetricsPolicy = "reference"
) -> SrbenchFields:
    points: list[list[Any]] = []
    for point in last_per_call(result.trace):
        row: list[Any] = [point.call, None, None, None]
        for split, col in SPLIT_FIELDS:
            row[col] = _nmse_or_none(problem, split, point, policy)
        points.append(row)
    truth = problem.ground_truth()
    return {
        "search_progress": points,
        "truth_complexity": truth.node_count if truth is not None else None,
    }
