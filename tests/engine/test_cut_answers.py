"""Answers the endpoint cut at --lsrb-max-tokens (finish reason `length`) are counted once, in
summary.json and on the terminal: an answer is still the model's, but a limit too small for the
task (the docs once gave llm_srbench 96 tokens: 22 of 24 SmolLM2 answers were cut) makes every
score say nothing, and "generation errors: none" alone hid it."""

from __future__ import annotations

import pytest
from fakes.ollama_server import FakeOllama
from hypothesis import given
from hypothesis import strategies as st
from lsrb_testing import RunSuite

from pytest_lsrb.engine.summary import CUT_AT_LIMIT, finish_counts
from pytest_lsrb.session.terminal import cut_rows


def test_a_limit_that_cuts_answers_is_counted_and_said(run_suite_here: RunSuite) -> None:
    with FakeOllama(cut_at_max_tokens=True, reply="exact Nat.add_zero n") as fake:
        short = run_suite_here(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-model=smollm2:135m",
            "--lsrb-max-items=5",
            "--lsrb-max-tokens=2",
            "--lsrb-outcome=record",
        )
        summary = short.summary()
        assert summary["answers_cut_by_max_tokens"] == 5 and summary["answers_with_finish_reason"] == 5
        assert "cut by max tokens" in short.stdout and "5 of 5 answers (100.0 %)" in short.stdout
        assert all(
            r["finish_reason"] == "length" and r["raw_output"] == "exact Nat.add_zero"
            for r in short.attempts()
        )
        roomy = run_suite_here(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-model=smollm2:135m",
            "--lsrb-max-items=5",
            "--lsrb-outcome=record",
            out=short.out_dir.parent / "roomy",
        )
    assert roomy.summary()["answers_cut_by_max_tokens"] == 0 and "cut by max tokens" not in roomy.stdout


@pytest.mark.parametrize(
    ("record", "counts"),
    [
        ({"finish_reason": "length"}, (1, 1)),
        ({"finish_reason": "stop"}, (1, 0)),
        ({"finish_reason": None}, (0, 0)),
        ({}, (0, 0)),
        ({"finish_reason": "stop", "finish_reasons": {"stop": 3, "length": 2}}, (5, 2)),
        ({"finish_reasons": {"stop": 4}}, (4, 0)),
        ({"finish_reasons": {"length": "x"}}, (0, 0)),  # a hostile record counts nothing
    ],
)
def test_finish_counts_reads_one_call_or_a_searchs_tally(
    record: dict[str, object], counts: tuple[int, int]
) -> None:
    assert finish_counts(record) == counts


@given(cut=st.integers(0, 50), more=st.integers(0, 50))
def test_the_row_appears_only_when_an_answer_was_cut(cut: int, more: int) -> None:
    rows = cut_rows({"answers_cut_by_max_tokens": cut, "answers_with_finish_reason": cut + more})
    assert bool(rows) == (cut > 0)
    if rows:
        assert f"{cut} of {cut + more} answers" in rows[0][1]
    assert CUT_AT_LIMIT == "length"
