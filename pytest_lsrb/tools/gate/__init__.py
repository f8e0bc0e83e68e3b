"""Regression gating: did the model get worse than a baseline run, beyond noise?

    pytest SUITE --lsrb-baseline=lsrb-out/last-week --lsrb-max-drop=pass_at_1=0.02 --lsrb-outcome=record
    lsrb compare BASELINE_DIR CURRENT_DIR --max-drop pass_at_1=0.02

Both read the two output directories' attempts.jsonl and pair the runs item by item.

Who counts and what succeeded is `engine.outcomes`' rule, the one summary.json uses: attempts
that ended in an infrastructure error or that a replay profile skips are not the model's answer;
they are left out on both sides and counted (pytest errors or skips their tests).

Metrics (higher is better), each with the summary key it equals on a whole run:
    pass_at_K            pass@K of the outcome (verification_pass_at_k_K): the item mean over the
                         items with the run's samples-per-item judged samples. Also spelled pass@K
                         or verification_pass_at_k_K.
    valid_rate           the answer was a well-formed tactic/proposal (of answered attempts)
    nonempty_rate        the answer was not empty (of answered attempts)
    success_rate         the verdict was a success (of judged attempts; verification_success_rate)
    field:NAME           any true/false record field over judged attempts, e.g. field:symbolic_match
Rates are pooled over the attempts of the compared items; the significance test pairs items.

Thresholds: `max-drop METRIC=X` fails when the metric fell by more than X below the baseline and
a paired one-sided test says the drop is not noise (p < alpha): exact McNemar when every per-item
score is 0 or 1 (one sample per item, or pass@K with K = samples), a paired bootstrap of the
per-item differences otherwise. `min METRIC=X` fails when the current run's value is below X (no
test: a floor). With a baseline and no max-drop, `pass_at_1=0` is checked: any significant drop.

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
