"""One meaning per number (issue #50, item 5): a server that answers prose, and fails now and then.

A "generation error" is no usable answer from the endpoint (infrastructure); an "unreadable
answer" is the model's own (it answered; no tactic could be read from its text). Each is counted
once, by `engine.outcomes`' rule, and the terminal, summary.json, the report and the gate give
the same two numbers. The report's headline has one card per metric, durations in human units,
and no panel without data (no pass@k chart at one sample).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama

from pytest_lsrb import api
from pytest_lsrb.engine.metric import resolve_metric
from pytest_lsrb.report import build_report, load_run
from pytest_lsrb.tools.gate import by_item

CARD = re.compile(
    r"<div class='card'><div class='l'>(.*?)</div><div class='v'>(.*?)</div><div class='d'>(.*?)</div>"
)
PROSE = "Sure! To prove this goal you should think about induction on n and then simplify."


def test_terminal_summary_report_and_gate_say_the_same_two_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOllama(reply=PROSE) as fake:
        fake.queue(["server_500", "server_500"])
        result = api.run(
            "goal_to_tactic_proposal_v1",
            adapter="ollama",
            model="qwen2.5:7b",
            base_url=fake.url,
            max_items=6,
            max_retries=0,
            concurrency=1,
            outcome="record",
            output_dir=tmp_path / "out",
        )
    printed = capsys.readouterr().out
    summary = result.summary or {}
    # summary.json: 2 generation errors of 6 attempts; 4 unreadable answers of 4 answered
    assert summary["generation_error_kinds"] == {"server_error": 2}
    assert summary["generation_error_rate"] == pytest.approx(2 / 6)
    assert summary["answered_attempts"] == 4
    assert summary["unreadable_answers"] == 4 and summary["unreadable_answer_rate"] == 1.0
    # the terminal: the same counts, each under its own name, once
    assert re.search(r"^generation errors\s+server_error=2$", printed, re.M), printed
    assert re.search(
        r"^unreadable answers\s+4 of 4 answered \(100\.0%\): empty, or no answer found in the text",
        printed,
        re.M,
    ), printed
    assert "empty_output" not in printed
    # the gate: each metric's value over the records is the summary's number
    records = by_item(load_run(result.run_dir))
    for key in ("generation_error_rate", "unreadable_answer_rate"):
        value, _ = resolve_metric(key).value(records, 1)
        assert value == pytest.approx(summary[key]), key
    # the report: one card each, the same numbers, and the notes agree
    html = build_report(load_run(result.run_dir))
    cards = {label: (value, note) for label, value, note in CARD.findall(html)}
    assert cards["generation errors"][0] == "33.3%"
    assert cards["generation errors"][1].startswith("server_error 2: no usable answer from the endpoint")
    assert cards["unreadable answers"][0] == "100.0%"
    assert cards["unreadable answers"][1].startswith("4 of 4 answered (100.0%)")
    figure = html[html.index("<figcaption>Generation errors") :]
    figure = figure[: figure.index("</figure>")]
    assert "server_error" in figure and "empty_output" not in figure
    assert "generation errors: none" not in html


def test_one_card_per_metric_human_durations_and_no_empty_panels(tmp_path: Path) -> None:
    result = api.run("goal_to_tactic_proposal_v1", max_items=4, output_dir=tmp_path / "out")
    html = build_report(load_run(result.run_dir))
    labels = [label for label, _, _ in CARD.findall(html)]
    assert len(labels) == len(set(labels)) and not any(" · " in label for label in labels), labels
    # the mock's valid rate, success and pass@1 are all 100 %: three metrics, three cards
    assert {"valid rate", "success", "pass@1"} <= set(labels)
    values = {label: value for label, value, _ in CARD.findall(html)}
    assert re.fullmatch(r"[\d.]+ (ms|s)|\d+m\d\ds", values["latency p50"]), values["latency p50"]
    assert "(ms)" not in "".join(labels)
    assert "pass@k over k" not in html  # one sample: a curve of one point is no chart
    assert "generation errors: none" in html and "<figcaption>Generation errors" not in html
    assert "Over time: attempts finished and successes" in html


def test_a_pass_at_k_chart_only_where_k_goes_past_1(tmp_path: Path) -> None:
    result = api.run("goal_to_tactic_proposal_v1", max_items=3, samples=2, output_dir=tmp_path / "out")
    assert "pass@k over k" in build_report(load_run(result.run_dir))
