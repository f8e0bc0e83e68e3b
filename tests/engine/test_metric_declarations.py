"""One declaration per metric (issue #39, item 3): what `engine.metric` declares for a summary key
is the number summary.json holds for it, on a real run's records."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_lsrb import api
from pytest_lsrb.engine.metric import METRICS, all_metrics, find
from pytest_lsrb.tools.gate import by_item


def test_each_gateable_declaration_equals_the_summary(tmp_path: Path) -> None:
    result = api.run(
        "goal_to_tactic_proposal_v1", max_items=12, samples=2, output_dir=tmp_path / "out", outcome="record"
    )
    summary = result.summary
    assert summary is not None
    grouped = by_item(api.load_run(result.run_dir))  # the gate's own grouping
    checked = []
    for key, value in summary.items():
        metric = find(key)
        if metric is None or not metric.gateable or not metric.in_summary or value is None:
            continue
        got, _ = metric.value(grouped, 2)
        assert got == pytest.approx(value, rel=1e-9, abs=1e-12), key
        checked.append(key)
    assert {"valid_rate", "success_rate", "latency_ms_p95", "verification_pass_at_k_2"} <= set(checked)
    assert set(METRICS) >= {"generation_error_rate", "tokens_per_attempt"}
    # the families' own (their entry points), in the one table every consumer reads
    assert set(all_metrics()) - set(METRICS) >= {"contains_sorry_rate", "median_nmse_id", "median_nmse_ood"}
