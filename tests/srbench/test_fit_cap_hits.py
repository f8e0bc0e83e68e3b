"""Issue #40, item 5: the fit's time cap is the reference's (LLM-SR's `evaluate_timeout_seconds`,
30 s), and every fit that reaches it is counted: the record's `fit_time_limit_hits`, summary.json's
`sr_fit_time_limit_hits`, the terminal's row. A fit ended by the run's own deadline is the run's cap,
not the fit's, and is not counted."""

from __future__ import annotations

from typing import Any, cast

from test_llmsr_method import baseline_adapter, make_problem, run

from pytest_lsrb.adapters.base import SamplingConfig
from pytest_lsrb.engine.option_sets import every_option
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.srbench.fitting.fit import FIT_TIME_LIMIT_S, FitLimits, fit_cap_hit
from pytest_lsrb.srbench.methods.sga import SGAConfig, SGARun
from pytest_lsrb.srbench.options import SrOptions
from pytest_lsrb.srbench.tables.table import SrbenchSummary
from pytest_lsrb.srbench.task import SrbenchTask

OPTIONS = every_option()


def test_the_default_cap_is_the_references() -> None:
    assert (
        FIT_TIME_LIMIT_S == 30.0 and FitLimits().time_limit_s == 30.0 and SGAConfig().fit_time_limit_s == 30.0
    )
    [option] = [o for o in OPTIONS if o.name == "sr-fit-time-limit"]
    assert option.default == 30.0
    assert SrOptions.read({}).fit_time_limit_s == 30.0


def test_only_a_fit_ended_by_its_own_cap_is_a_hit() -> None:
    assert fit_cap_hit("time_limit", 30.2, 30.0)
    assert not fit_cap_hit("time_limit", 3.0, 30.0)  # the run's deadline came first
    assert not fit_cap_hit("ok", 31.0, 30.0) and not fit_cap_hit("eval_limit", 31.0, 30.0)


def test_llmsr_counts_every_fit_that_reached_its_cap() -> None:
    capped = run(make_problem(), baseline_adapter(), budget=4, fit=FitLimits(time_limit_s=1e-6))
    fields = capped.record_fields()
    # the starting skeleton and each distinct candidate is fitted once (a capped fit is not cached)
    assert fields["fit_time_limit_hits"] == capped.hypotheses
    assert not capped.best.fit.valid  # a capped fit is an invalid candidate, as LLM-SR's evaluator scores it
    free = run(make_problem(), baseline_adapter(), budget=4).record_fields()
    assert free["fit_time_limit_hits"] == 0


def test_sga_counts_its_capped_fits() -> None:
    config = SGAConfig(budget=2, fit_time_limit_s=1e-6)
    result = SGARun(make_problem(), baseline_adapter(), SamplingConfig(), 1, config).run()
    assert (result.extra.get("fit_time_limit_hits") or 0) >= 1  # the primitive's fit at least
    # every fit reached its cap, so no candidate is valid (one rule with `fitting.fit.capped_invalid`)
    assert not result.found


def test_summary_and_terminal_show_the_hits() -> None:
    acc = SrbenchSummary()
    for item, hits in (("p0", 3), ("p1", 0), ("p2", 1)):
        record = {"item_id": item, "sample_index": 0, "sr_method": "llmsr", "fit_time_limit_hits": hits}
        acc.add(cast(AttemptRecord, record))
    summary: dict[str, Any] = {**acc.finish(), "config": {"sr_fit_time_limit": 30.0}}
    assert summary["sr_fit_time_limit_hits"] == 4 and summary["sr_fit_time_limit_attempts"] == 2
    rows = dict(SrbenchTask().terminal_rows(summary))
    assert rows["fit time-limit hits of 30 s"] == "4 fit(s) in 2 attempt(s)"
    none = dict(SrbenchTask().terminal_rows({**SrbenchSummary().finish(), "config": {}}))
    assert none["fit time-limit hits"] == "none"
