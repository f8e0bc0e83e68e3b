"""The gate holds lower-is-better and continuous metrics (issue #39, item 3): an error rate, tokens
per attempt, p95 latency and median NMSE, each declared once in `engine.metric` with its direction
and aggregation; a rise in a lower-is-better metric is its "drop". And it is quiet (issue #42, 6):
no warning with the default threshold, "not estimable" where identical runs leave no spread."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.metric import METRICS, declared, find, quantile, resolve_metric
from pytest_lsrb.tools.gate import compare_dirs, gate_config, result_lines
from pytest_lsrb.tools.significance import paired_bootstrap_quantile_p


def write_run(path: Path, records: list[dict[str, Any]]) -> Path:
    path.mkdir(parents=True)
    (path / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    (path / "run.json").write_text(json.dumps({"suite": "s", "config": {"samples": 1}}), "utf-8")
    return path


def answered(k: int, **fields: Any) -> dict[str, Any]:
    return {"item_id": f"i{k:02d}", "sample_index": 0, "valid": True, "nonempty": True, **fields}


def gate(tmp_path: Path, base: list[dict[str, Any]], cur: list[dict[str, Any]], **opts: Any) -> Any:
    b, c = write_run(tmp_path / "b", base), write_run(tmp_path / "c", cur)
    config = gate_config(str(b), opts.get("max_drop"), opts.get("min"), None, opts.get("max"))
    return compare_dirs(config, c)


@pytest.mark.parametrize(
    ("metric", "kind", "domain"),
    [
        ("generation_error_rate", "timeout", "transport"),
        ("unreadable_answer_rate", "empty_output", "model_output"),
    ],
)
def test_an_error_rate_that_rises_is_a_regression_and_one_that_falls_is_not(
    tmp_path: Path, metric: str, kind: str, domain: str
) -> None:
    ok = [answered(k) for k in range(30)]
    broken = [
        answered(k, generation_error_kind=kind, generation_error_domain=domain) if k < 12 else answered(k)
        for k in range(30)
    ]
    worse = gate(tmp_path / "w", ok, broken, max_drop=f"{metric}=0")
    [check] = worse.checks
    assert check.direction == "lower" and check.change == pytest.approx(0.4)
    assert check.test == "exact McNemar" and check.regressed and len(check.down) == 12
    assert f"{metric} rose by 0.400" in "\n".join(result_lines(worse))
    better = gate(tmp_path / "b", broken, ok, max_drop=f"{metric}=0")
    assert not better.regressed and len(better.checks[0].up) == 12


def test_a_generation_error_and_an_unreadable_answer_are_counted_apart(tmp_path: Path) -> None:
    """Issue #50: the endpoint's failure is a generation error, the model's empty answer an
    unreadable one; neither metric counts the other's attempts."""
    ok = [answered(k) for k in range(30)]
    unread = [
        answered(k, generation_error_kind="empty_output", generation_error_domain="model_output")
        if k < 12
        else answered(k)
        for k in range(30)
    ]
    result = gate(tmp_path, ok, unread, max_drop="generation_error_rate=0")
    assert result.checks[0].change == 0 and not result.regressed


def test_tokens_per_attempt_is_tested_on_its_item_means(tmp_path: Path) -> None:
    base = [answered(k, prompt_tokens=100, completion_tokens=20 + k % 3) for k in range(40)]
    cur = [answered(k, prompt_tokens=100, completion_tokens=60 + k % 5) for k in range(40)]
    result = gate(tmp_path, base, cur, max_drop="tokens_per_attempt=10")
    [check] = result.checks
    assert check.test == "paired bootstrap" and check.regressed and check.change > 30
    allowed = gate(tmp_path / "x", base, cur, max_drop="tokens_per_attempt=100")
    assert not allowed.regressed  # within the allowed rise


def test_p95_latency_and_median_nmse_use_the_quantile_bootstrap(tmp_path: Path) -> None:
    base = [answered(k, latency_ms=100.0 + k, nmse_id=0.01 * (k + 1)) for k in range(40)]
    slow = [answered(k, latency_ms=400.0 + k, nmse_id=0.01 * (k + 1)) for k in range(40)]
    result = gate(tmp_path, base, slow, max_drop="latency_ms_p95=50,median_nmse_id=0")
    by = {c.metric: c for c in result.checks}
    assert by["latency_ms_p95"].test == "paired bootstrap (quantile)" and by["latency_ms_p95"].regressed
    assert by["median_nmse_id"].change == 0 and not by["median_nmse_id"].regressed
    assert by["latency_ms_p95"].current == pytest.approx(quantile([400.0 + k for k in range(40)], 0.95))


def test_identical_runs_are_quiet_and_claim_no_detectable_size(tmp_path: Path) -> None:
    same = [answered(k, prompt_tokens=10, completion_tokens=k) for k in range(20)]
    result = gate(tmp_path, same, same, max_drop="tokens_per_attempt=0")
    lines = "\n".join(result_lines(result))
    assert not result.regressed and "WARNING" not in lines
    assert "not estimable (the paired differences have no variance)" in lines
    assert "0.000 (" not in lines
    default = gate(tmp_path / "d", same, same)  # the default threshold, pass_at_1=0
    assert "WARNING" not in "\n".join(result_lines(default))


def test_a_floor_and_a_ceiling_take_their_own_direction(tmp_path: Path) -> None:
    run = [answered(k, latency_ms=100.0) for k in range(5)]
    capped = gate(tmp_path, run, run, max="latency_ms_p95=50")
    assert any(c.kind == "max" and c.regressed for c in capped.checks)
    with pytest.raises(LsrbUsageError, match="lower-is-better; give its ceiling with --lsrb-max"):
        gate_config(None, None, "latency_ms_p95=50", None)
    with pytest.raises(LsrbUsageError, match="higher-is-better; give its floor with --lsrb-min"):
        gate_config(None, None, None, None, "valid_rate=0.5")
    with pytest.raises(LsrbUsageError, match="run-level number"):
        resolve_metric("wall_time_s")


def test_every_declared_metric_says_how_it_is_read() -> None:
    for key, metric in METRICS.items():
        assert metric.key == key and metric.label
        assert metric.aggregation == "run" or metric.per_record is not None, key
        assert find(key) is metric
    assert find("verification_success_rate") is METRICS["success_rate"]
    shown = declared({"valid_rate": 0.5, "verification_pass_at_k_2": 0.1, "verification_pass_at_k_1": 0.2})
    assert [m.label for m in shown] == ["valid rate", "pass@1", "pass@2"]


@given(
    st.lists(st.lists(st.floats(0, 1e3), min_size=1, max_size=4), min_size=1, max_size=12),
    st.sampled_from([0.5, 0.95]),
)
@example([[1.0]], 0.5)
def test_a_run_is_never_significantly_worse_than_itself(values: list[list[float]], q: float) -> None:
    assert paired_bootstrap_quantile_p(values, values, q, resamples=200) > 0.5
