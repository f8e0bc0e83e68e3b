"""The --lsrb-sr-* options as one typed object: every llm_srbench option (the task's and its
methods', `srbench.option_table`) is read, its default is the declaration's, and a bad value is one
sentence naming the option."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.option_table import ALL
from pytest_lsrb.srbench.options import SrOptions

FIELD_OF = {  # option -> SrOptions field, where the field names the unit
    "sr_time_limit": "time_limit_s",
    "sr_judge_time_limit": "judge_time_limit_s",
    "sr_fit_time_limit": "fit_time_limit_s",
}


def field_of(option: str) -> str:
    return FIELD_OF.get(option, option.removeprefix("sr_"))


def test_every_srbench_option_is_a_field() -> None:
    options = {o.key for option_set in ALL for o in option_set.options}
    assert {field_of(o) for o in options} == {f.name for f in dataclasses.fields(SrOptions)}


def test_missing_values_take_the_tables_defaults() -> None:
    sr = SrOptions.read({})
    for o in (o for option_set in ALL for o in option_set.options):
        expected = 0 if o.name == "sr-reset-every" else o.default  # 0: the reference's schedule
        assert getattr(sr, field_of(o.key)) == expected, o.name


def test_given_values_are_read_typed() -> None:
    sr = SrOptions.read(
        {"sr_method": "llmsr", "sr_budget": 7, "sr_time_limit": 3, "sr_judge": "both", "sr_reset_every": 4}
    )
    assert (sr.method, sr.budget, sr.time_limit_s, sr.judge, sr.llm_judge, sr.reset_every) == (
        "llmsr",
        7,
        3.0,
        "both",
        True,
        4,
    )
    assert isinstance(sr.time_limit_s, float)
    assert SrOptions.read(sr) is sr


@pytest.mark.parametrize(
    ("values", "flag"),
    [
        ({"sr_budget": 0}, "--lsrb-sr-budget"),
        ({"sr_budget": "5"}, "--lsrb-sr-budget"),
        ({"sr_judge": "oracle"}, "--lsrb-sr-judge"),
        ({"sr_success": "acc_0.5"}, "--lsrb-sr-success"),
        ({"sr_sa_scale": "loose"}, "--lsrb-sr-sa-scale"),
        ({"sr_metrics": "loose"}, "--lsrb-sr-metrics"),
        ({"sr_fit": "adam"}, "--lsrb-sr-fit"),
        ({"sr_time_limit": -1.0}, "--lsrb-sr-time-limit"),
        ({"sr_judge_time_limit": "soon"}, "--lsrb-sr-judge-time-limit"),
    ],
)
def test_a_bad_value_names_its_option(values: dict[str, object], flag: str) -> None:
    with pytest.raises(LsrbUsageError, match=flag):
        SrOptions.read(values)
