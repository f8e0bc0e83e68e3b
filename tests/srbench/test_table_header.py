"""Table 1's header names the SA judge the run was given whatever the attempts' outcomes (it
said "SA judged by: none" when every attempt was infrastructure although the judge was sympy),
and says what its agreement figure was measured on: pairs labelled by the paper's wording, not the
human verdicts behind the paper's 94.6 % for GPT-4o."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_lsrb.srbench.tables.table import configured_judges, table_lines


def summary(judge: str, rows: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {"srbench_table": rows, "config": {"sr_judge": judge, **config}}


INFRASTRUCTURE_ONLY = {"lsr_transform": {"attempts": 0, "infrastructure_attempts": 3, "sa_judge": None}}


def test_a_run_of_infrastructure_attempts_still_names_its_judge() -> None:
    head = table_lines(summary("sympy", INFRASTRUCTURE_ONLY))[0]
    assert head.startswith("SA judged by: the paper's rule") and "no attempt had a verdict" in head


def test_the_agreement_figure_says_what_it_was_measured_on() -> None:
    head = table_lines(summary("sympy", INFRASTRUCTURE_ONLY))[0]
    if "not measured" in head:
        pytest.skip("no stored agreement figure in this checkout")
    assert "labelled by the paper's wording before scoring, not human verdicts" in head
    assert "GPT-4o's agreement with human raters" in head


@pytest.mark.parametrize(
    ("config", "judges"),
    [
        ({"sr_judge": "sympy"}, ["rule"]),
        ({"sr_judge": "sympy", "sr_sa_scale": "strict"}, ["rule:strict"]),
        ({"sr_judge": "llm", "sr_judge_model": "gpt-4o"}, ["llm:gpt-4o"]),
        ({"sr_judge": "both", "sr_judge_model": "m"}, ["llm:m", "rule"]),
        ({"sr_judge": "none"}, []),
        ({}, []),
    ],
)
def test_configured_judges(config: dict[str, Any], judges: list[str]) -> None:
    assert configured_judges(config) == judges


def test_no_judge_is_said_as_the_option() -> None:
    assert table_lines(summary("none", INFRASTRUCTURE_ONLY))[0] == "SA judged by: none (--lsrb-sr-judge=none)"


def test_a_judged_row_names_its_own_judge_without_the_note() -> None:
    rows = {"lsr_transform": {"attempts": 2, "sa_judge": "rule"}}
    head = table_lines(summary("sympy", rows))[0]
    assert head.startswith("SA judged by: the paper's rule") and "no attempt had a verdict" not in head
