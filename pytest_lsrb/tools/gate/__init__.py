"""Regression gating: did the model get worse than a baseline run, beyond noise?

    pytest SUITE --lsrb-baseline=lsrb-out/last-week --lsrb-max-drop=pass_at_1=0.02 --lsrb-outcome=record
    lsrb compare BASELINE_DIR CURRENT_DIR --max-drop pass_at_1=0.02

Both read the two output directories' attempts.jsonl and pair the runs item by item.

Who counts and what succeeded is `engine.outcomes`' rule, the one summary.json uses: attempts
that ended in an infrastructure error or that a replay profile skips are not the model's answer;
they are left out on both sides and counted (pytest errors or skips their tests).

Metrics are declared once in `engine.metric` (direction, aggregation, population); the gate can
test those with a per-attempt value: pass_at_K, valid_rate, success_rate, generation_error_rate,
tokens_per_attempt, latency_ms_p95, median_nmse_id, field:NAME and the rest (docs/gating.md).

Thresholds: `max-drop METRIC=X` fails when the metric moved the wrong way (fell; rose for a
lower-is-better metric) by more than X and a paired one-sided test says it is not noise
(p < alpha): exact McNemar when every per-item score is 0 or 1, a paired bootstrap of the
per-item differences otherwise, a paired bootstrap of the quantile itself for a quantile metric.
`min METRIC=X` is a floor (higher-is-better), `max METRIC=X` a ceiling (lower-is-better); no
test. With a baseline and no max-drop, `pass_at_1=0` is checked: any significant drop.

A regression makes the session exit with EXIT_REGRESSION (6; pytest itself uses 0-5).
"""

from __future__ import annotations

from pytest_lsrb.tools.gate.checks import (
    EXIT_REGRESSION,
    GateResult,
    MetricCheck,
    apply_holm,
    check_minimum,
    compare_metric,
    min_detectable_drop,
)
from pytest_lsrb.tools.gate.compare import by_item, check_compatible, compare_dirs, evaluate, unjudged
from pytest_lsrb.tools.gate.session import finish_session, preflight
from pytest_lsrb.tools.gate.terminal import (
    GATE_FILE,
    SHOWN_FLIPS,
    result_lines,
    sensitivity_lines,
    title,
    write_terminal,
)
from pytest_lsrb.tools.gate.thresholds import (
    DEFAULT_ALPHA,
    DEFAULT_MAX_DROP,
    GateConfig,
    Threshold,
    gate_config,
    parse_thresholds,
)

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MAX_DROP",
    "EXIT_REGRESSION",
    "GATE_FILE",
    "SHOWN_FLIPS",
    "GateConfig",
    "GateResult",
    "MetricCheck",
    "Threshold",
    "apply_holm",
    "by_item",
    "check_compatible",
    "check_minimum",
    "compare_dirs",
    "compare_metric",
    "evaluate",
    "finish_session",
    "gate_config",
    "min_detectable_drop",
    "parse_thresholds",
    "preflight",
    "result_lines",
    "sensitivity_lines",
    "title",
    "unjudged",
    "write_terminal",
]
