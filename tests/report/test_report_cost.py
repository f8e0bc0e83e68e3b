"""The report shows what was spent and only what was measured (issue #42, item 5): tokens in/out
and cost per run (a card), per attempt (a column) and per model (the lineup table); no card for a
number the run did not measure; one card per metric (issue #50: two metrics that show the same
number are two cards, never one card with two labels)."""

from __future__ import annotations

import re
from pathlib import Path

from fakes.ollama_server import FakeOllama

from pytest_lsrb import api
from pytest_lsrb.report import build_report, load_run
from pytest_lsrb.report.lineup import table_lines

CARD = re.compile(r"<div class='card'><div class='l'>(.*?)</div><div class='v'>(.*?)</div>")


def cards(html: str) -> dict[str, str]:
    return dict(CARD.findall(html))


def test_a_priced_run_shows_tokens_and_cost(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = api.run(
            "goal_to_tactic_proposal_v1",
            adapter="openai",
            model="qwen2.5:7b",
            base_url=f"{fake.url}/v1",
            max_items=4,
            price="in=2.5,out=10",
            outcome="record",
            output_dir=tmp_path / "out",
        )
    summary = result.summary or {}
    assert summary["prompt_tokens"] == 80 and summary["completion_tokens"] == 12  # the fake's usage
    html = build_report(load_run(result.run_dir))
    shown = cards(html)
    assert shown["tokens in / out"] == "80 / 12"
    assert shown["cost"] == f"{summary['cost']:.4g}"
    assert not any(label.startswith("verification") for label in shown)  # nothing was verified
    assert not any(" · " in label for label in shown), shown  # one card per metric
    assert shown["valid rate"] == shown["success"] == "100.0%"  # the same number, two metrics
    assert "data-col='tokens'" in html
    [row] = table_lines([("qwen", load_run(result.run_dir))])[1:]
    assert "80" in row and "12" in row and f"{summary['cost']:.3f}" in row


def test_a_run_without_usage_has_no_token_card_or_column(tmp_path: Path) -> None:
    result = api.run("goal_to_tactic_proposal_v1", max_items=3, output_dir=tmp_path / "out")
    html = build_report(load_run(result.run_dir))
    assert "tokens in / out" not in cards(html) and "data-col='tokens'" not in html
    shown = cards(html)
    assert not any(" · " in label for label in shown), shown  # valid rate = success: still two cards
    assert {"valid rate", "success", "pass@1"} <= set(shown)


def test_empty_answers_are_not_generation_errors(tmp_path: Path) -> None:
    """The model's own empty answer is its output (issue #42, papercut; #50: counted once): the
    summary's generation errors hold failed calls only, the empty answers are unreadable answers,
    and the report's "Generation errors" chart holds failed calls only and says the rest apart."""
    with FakeOllama() as fake:
        fake.queue(["empty", "empty", "server_500"])
        result = api.run(
            "goal_to_tactic_proposal_v1",
            adapter="ollama",
            model="qwen2.5:7b",
            base_url=fake.url,
            max_items=3,
            max_retries=0,
            concurrency=1,
            outcome="record",
            output_dir=tmp_path / "out",
        )
    summary = result.summary or {}
    assert summary["generation_error_kinds"] == {"server_error": 1}
    assert summary["generation_error_rate"] == 1 / 3
    assert summary["unreadable_answers"] == 2 and summary["unreadable_answer_rate"] == 1.0  # of 2 answered
    html = build_report(load_run(result.run_dir))
    figure = html[html.index("<figcaption>Generation errors") :]
    figure = figure[: figure.index("</figure>")]
    assert "server_error" in figure and "empty_output" not in figure
    assert "unreadable answers: 2 of 2 answered (100.0%): empty, or no answer found" in html
