"""The controller's progress line: what it counts, when it speaks, and that it works under xdist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import REPO

from pytest_lsrb.core.durations import duration
from pytest_lsrb.engine.cost import Price
from pytest_lsrb.session.progress import Progress, ProgressReporter, interval_for


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_counts_done_rate_eta_errors_tokens_cost_and_cache_hits() -> None:
    clock = Clock()
    progress = Progress(10, interval_s=5.0, price=Price(1000.0, 2000.0), clock=clock)
    records = [
        {"prompt_tokens": 100, "completion_tokens": 10},
        {"prompt_tokens": 100, "completion_tokens": 10, "cached": True},
        {"generation_error_kind": "timeout"},
        {"verification_error_kind": "toolchain_missing", "verification_error_domain": "environment"},
        {"verification_error_kind": "timeout", "verification_error_domain": "environment"},  # Lean's clock
        {"verification_error_kind": "lean_error", "verification_error_domain": "model"},  # the model's
    ]
    for rec in records:
        clock.now += 2.0
        progress.add(rec)
    line = progress.line()
    # 6 done; the rate counts from the first: 5 more in 10 s = 0.5/s, so 4 left take 8 s.
    assert line.startswith("lsrb 6/10 (60%) · 0.50/s · ETA 8s")
    assert "errors: check timeout 1, check toolchain_missing 1, timeout 1 ·" in line
    assert "tokens 200 in / 20 out" in line
    assert "cost 0.1200" in line  # only the uncached 100 in / 10 out are paid: 0.1 + 0.02
    assert line.endswith("cache hits 1")


def test_it_speaks_first_then_every_interval_then_at_the_end() -> None:
    clock = Clock()
    progress = Progress(3, interval_s=30.0, clock=clock)
    progress.add({})
    assert progress.due()
    progress.line()
    clock.now += 10
    progress.add({})
    assert not progress.due()
    clock.now += 25
    assert progress.due()
    progress.line()
    progress.add({})
    assert progress.due()  # the last attempt
    assert not Progress(3, interval_s=0, clock=clock).due()  # --lsrb-progress=0: silent


def test_terminals_get_frequent_lines_and_logs_rare_ones() -> None:
    assert interval_for(None, True) < interval_for(None, False)
    assert interval_for(2.0, False) == 2.0


@pytest.mark.parametrize(("seconds", "shown"), [(0.4, "0s"), (42, "42s"), (187, "3m07s"), (7500, "2h05m")])
def test_durations_read_naturally(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


class Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_the_reporter_counts_each_written_record_and_prints_when_due() -> None:
    terminal = Terminal()
    reporter = ProgressReporter(Progress(2, interval_s=1.0), terminal)
    reporter.add({"prompt_tokens": 3})
    reporter.add({"prompt_tokens": 4})
    assert reporter.progress.done == 2 and reporter.progress.prompt_tokens == 7
    assert terminal.lines[-1].startswith("lsrb 2/2 (100%)")


@pytest.mark.slow
def test_a_run_under_xdist_prints_progress_and_collect_only_states_the_planned_calls(
    run_suite: Any, tmp_path: Path
) -> None:
    result = run_suite("--lsrb-max-items=6", "--lsrb-samples=2", "--lsrb-progress=0.001", "-n", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    counts = re.findall(r"lsrb (\d+)/12 \(\d+%\)", result.stdout)
    assert counts and counts[-1] == "12"
    planned = run_suite("--lsrb-max-items=6", "--lsrb-samples=2", "--collect-only", out=tmp_path / "dry")
    assert "lsrb: 12 attempts planned, 12 model calls (1 per attempt)" in planned.stdout
    assert not (planned.out_dir / "attempts.jsonl").exists()


def test_the_running_score_counts_judged_attempts_by_the_one_rule() -> None:
    """`closed 1/2`: of the attempts judged so far, one succeeded; an infrastructure error (the
    call or the checker's environment) and a row a profile skips are not in the denominator."""
    progress = Progress(6, interval_s=1.0, clock=Clock(), score_label="closed")
    records: list[dict[str, Any]] = [
        {"verification_mode": "synthetic", "verification_success": True, "verification_outcome": "closed"},
        {
            "verification_mode": "synthetic",
            "verification_success": False,
            "verification_outcome": "lean_error",
            "verification_error_kind": "lean_error",
            "verification_error_domain": "model",
        },
        {"generation_error_kind": "timeout", "generation_error_domain": "transport"},
        {
            "verification_mode": "synthetic",
            "verification_error_kind": "toolchain_missing",
            "verification_error_domain": "environment",
        },
        {"verification_mode": "synthetic", "verification_outcome": "skipped"},
    ]
    for rec in records:
        progress.add(rec)
    assert progress.line().startswith("lsrb 5/6 (83%) · closed 1/2")
    assert "closed" not in Progress(2, interval_s=1.0, clock=Clock()).line()  # no label: no score


@pytest.mark.slow
@pytest.mark.parametrize(
    ("suite", "label", "xdist"),
    [("goal_to_tactic_proposal_v1", "valid", ["-n", "2"]), ("llm_srbench", "Acc0.1", [])],
)
def test_the_last_running_score_is_the_summarys_success(
    run_suite: Any, tmp_path: Path, suite: str, label: str, xdist: list[str]
) -> None:
    result = run_suite(
        "--lsrb-max-items=6",
        "--lsrb-progress=0.001",
        "--lsrb-outcome=record",
        *xdist,
        suite=REPO / "suites" / suite,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    scores = re.findall(rf"lsrb \d+/\d+ \(\d+%\) · {re.escape(label)} (\d+)/(\d+)", result.stdout)
    summary = result.summary()
    assert scores, result.stdout
    won, judged = (int(x) for x in scores[-1])
    assert judged == summary["judged_attempts"] and won / judged == pytest.approx(summary["success_rate"])


def test_an_unreadable_answer_is_the_models_output_not_an_error() -> None:
    progress = Progress(3, interval_s=5.0, clock=Clock())
    progress.add({"generation_error_kind": "empty_output", "generation_error_domain": "model_output"})
    progress.add({"generation_error_kind": "connection", "generation_error_domain": "transport"})
    line = progress.line()
    assert "errors: connection 1 ·" in line and "empty_output" not in line
    assert line.endswith("unreadable answers 1")


def test_the_terminal_summary_lists_unreadable_answers_apart_from_errors() -> None:
    from pytest_lsrb.session.terminal import generation_rows

    summary = {"generation_error_kinds": {"timeout": 1}, "unreadable_answers": 2, "answered_attempts": 8}
    assert generation_rows(summary) == [
        ("generation errors", {"timeout": 1}),
        (
            "unreadable answers",
            "2 of 8 answered (25.0%): empty, or no answer found in the text; "
            "the model's own, not a generation error",
        ),
    ]
    # a summary written before the two were counted apart: its kinds held both
    old = {"generation_error_kinds": {"empty_output": 2, "timeout": 1}, "answered_attempts": 8}
    assert generation_rows(old) == generation_rows(summary)
    assert generation_rows({"generation_error_kinds": {}}) == [("generation errors", "none")]


def test_a_call_waiting_for_the_server_is_on_the_line_and_prints_it() -> None:
    """No attempt finishes during an outage: the wait itself prints the line (when due)."""
    from pytest_lsrb.adapters.retry import Waiting
    from pytest_lsrb.session.controller import notes_of

    clock = Clock()
    board = Waiting(clock=clock)
    progress = Progress(4, interval_s=5.0, clock=clock, note=notes_of(None, board.note))
    shown: list[str] = []

    class Terminal:
        def write_line(self, line: str) -> None:
            shown.append(line)

    reporter = ProgressReporter(progress, Terminal())
    remove = board.listen(reporter.nudge)
    board.waiting(1, retry=1, since=clock.now)
    clock.now += 40
    board.waiting(2, retry=5, since=clock.now - 10)
    assert shown[-1].endswith("waiting for the server (retry 5, 40 s)"), shown
    board.done(1)
    board.done(2)
    remove()
    assert board.note() is None and "waiting" not in progress.line()


def test_an_unfinished_runs_attempts_line_says_of_how_many_items() -> None:
    from pytest_lsrb.session.terminal import attempts_line

    stopped = {"attempts": 1, "attempts_expected": 40, "items": 1, "items_expected": 20}
    assert attempts_line(stopped, 2) == "1/40 (1 of 20 items, 2 samples each)"
    whole = {"attempts": 81, "attempts_expected": 81, "items": 81, "items_expected": 81}
    assert attempts_line(whole, 1) == "81/81 (81 items, 1 samples each)"
    older = {"attempts": 3, "attempts_expected": 4, "items": 2}  # a summary from before items_expected
    assert attempts_line(older, 2) == "3/4 (2 items, 2 samples each)"
