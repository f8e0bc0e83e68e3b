"""Run budgets end to end (issue #34): a run against a local server speaking the OpenAI API with
`usage` fields (the fake Ollama's /v1/chat/completions: 20 prompt + 3 completion tokens per answer)
stops at `--lsrb-max-cost` / `--lsrb-max-total-tokens` / `--lsrb-max-wall-time`, records every answer
the server gave, says which budget stopped it and the command that continues it, and that command
(`--lsrb-resume` with a larger budget) finishes it to the records of a run without a budget;
serially and under -n 2 (one budget shared by both workers). Counted on the server's own log."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama

from pytest_lsrb.adapters.base import GenerationRequest, Message, SamplingConfig
from pytest_lsrb.engine.budget import worst_case
from pytest_lsrb.engine.records import strip_timing

TACTIC_SUITE = Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1"
ITEMS, SAMPLES = 10, 2
# 20 prompt + 3 completion tokens per answer (tests/fakes/ollama_server.py), at 10,000 per million
# tokens each: 0.23 per request.
PRICE = "in=10000,out=10000"
REQUEST_COST = 0.23
REQUEST_TOKENS = 23


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOllama]:
    with FakeOllama(latency_s=0.02) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOllama) -> FakeOllama:
    server.reset()
    server.latency_s = 0.02
    return server


def run_args(fake: FakeOllama, *extra: str) -> list[str]:
    return [
        "--lsrb-adapter=openai",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}/v1",
        f"--lsrb-max-items={ITEMS}",
        f"--lsrb-samples={SAMPLES}",
        "--lsrb-temperature=0.8",
        "--lsrb-outcome=record",
        "--lsrb-concurrency=3",
        f"--lsrb-price={PRICE}",
        *extra,
    ]


def by_key(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["item_id"], r["sample_index"]): strip_timing(r) for r in records}


@pytest.fixture(scope="module")
def unbudgeted(server: FakeOllama, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Any]:
    """The records of the same run with no budget: what a budgeted run resumed must end up as."""
    out = tmp_path_factory.mktemp("unbudgeted") / "out"
    server.reset()
    cmd = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(
        [*cmd, f"--lsrb-output-dir={out}", *run_args(server)],
        capture_output=True,
        text=True,
        cwd=out.parent,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    return by_key(records)


def worst_of(body: dict[str, Any]) -> int:
    """The budget's worst case of a chat request the fake server received."""
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    worst = worst_case(GenerationRequest(messages, 0, SamplingConfig(max_tokens=body["max_tokens"])))
    return worst.prompt + worst.completion


def continue_command(stdout: str) -> list[str]:
    """The words of the command the run's last line says continues it."""
    line = next(x for x in stdout.splitlines() if "to continue it with a larger budget, run:" in x)
    return shlex.split(line.split("run: ", 1)[1])


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize(
    ("budget", "per_request"),
    # a request's worst case here is ~860 tokens (the prompt's bytes, the template's allowance and
    # max_tokens 128): 1000 tokens (or 10 at 0.01 a token) let a few answers of 23 go, then stop
    [("--lsrb-max-cost=10", REQUEST_COST), ("--lsrb-max-total-tokens=1000", REQUEST_TOKENS)],
    ids=["cost", "tokens"],
)
def test_a_budget_stops_the_run_keeps_paid_answers_and_a_larger_budget_finishes_it(
    fake: FakeOllama,
    unbudgeted: dict[tuple[str, int], Any],
    run_suite: Any,
    tmp_path: Path,
    xdist: list[str],
    budget: str,
    per_request: float,
) -> None:
    out = tmp_path / "run"
    limit = float(budget.split("=")[1])
    first = run_suite(*run_args(fake, budget), *xdist, out=out)
    output = first.stdout + first.stderr
    assert first.returncode == 2, output  # interrupted, saying why
    option = budget.split("=")[0]
    assert f"the run stopped at its budget ({option} {budget.split('=')[1]}; spent" in first.stdout
    answered = list(fake.answered)
    # every request the server answered was paid for, and the law: spent <= budget
    assert 0 < len(answered) * per_request <= limit, (len(answered), limit)
    assert len(answered) < ITEMS * SAMPLES
    recorded = first.attempts()
    assert all(not r["generation_error_kind"] for r in recorded)
    # every paid answer is recorded (by its attempt seed, the request's `seed`)
    assert set(answered) <= {r["attempt_seed"] for r in recorded}
    assert len(recorded) == len(answered)
    ledger = json.loads((out / ".lsrb-budget.json").read_text())
    assert ledger["requests"] == len(answered) and ledger["reservations"] == []
    # the progress line says what the budget has spent as the run goes
    shown = r"lsrb \d+/20 .*· budget (cost|total tokens) [\d.]+/" + budget.split("=")[1]
    assert re.search(shown, first.stdout)
    assert ledger["stopped"]["budget"] == ("cost" if "cost" in budget else "tokens")

    # The command on the last line continues it with a budget larger than the first.
    command = continue_command(first.stdout)
    assert "--lsrb-resume" in command
    given = [w for w in command if w.startswith(option + "=")]
    assert len(given) == 1 and float(given[0].split("=")[1]) > limit
    fake.reset()
    resumed = run_suite(*run_args(fake, given[0]), *xdist, "--lsrb-resume", out=out)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # nothing already answered is asked again; the rest is asked once
    assert not set(fake.answered) & set(answered)
    assert len(fake.answered) == ITEMS * SAMPLES - len(answered)
    assert by_key(resumed.attempts()) == unbudgeted
    assert resumed.summary()["complete"] is True


def test_a_resumed_run_counts_what_its_earlier_sessions_spent(
    fake: FakeOllama, run_suite: Any, tmp_path: Path
) -> None:
    """The budget is the run's: resuming with the same budget sends nothing more."""
    out = tmp_path / "run"
    first = run_suite(*run_args(fake, "--lsrb-max-total-tokens=1000"), out=out)
    assert first.returncode == 2, first.stdout + first.stderr
    sent = len(fake.answered)
    assert sent > 0
    fake.reset()
    again = run_suite(*run_args(fake, "--lsrb-max-total-tokens=1000", "--lsrb-resume"), out=out)
    assert again.returncode == 2, again.stdout + again.stderr
    assert fake.answered == []
    assert len(again.attempts()) == sent
    assert "to continue it with a larger budget" in again.stdout


def test_a_wall_time_budget_stops_the_run_and_resume_finishes_it(
    fake: FakeOllama, unbudgeted: dict[tuple[str, int], Any], run_suite: Any, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    fake.latency_s = 0.4  # 20 attempts, 3 at a time: about 3 s of answers, well past 1 s
    first = run_suite(*run_args(fake, "--lsrb-max-wall-time=1"), out=out)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "the run stopped at its budget (--lsrb-max-wall-time 1; spent" in first.stdout
    answered = list(fake.answered)
    assert set(answered) <= {r["attempt_seed"] for r in first.attempts()}
    assert len(first.attempts()) < ITEMS * SAMPLES
    fake.reset()
    fake.latency_s = 0.02
    resumed = run_suite(*run_args(fake, "--lsrb-max-wall-time=600", "--lsrb-resume"), out=out)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert by_key(resumed.attempts()) == unbudgeted


def test_a_cost_budget_without_a_price_is_refused_before_any_call(
    fake: FakeOllama, run_suite: Any, tmp_path: Path
) -> None:
    args = [a for a in run_args(fake, "--lsrb-max-cost=1") if not a.startswith("--lsrb-price")]
    result = run_suite(*args)
    assert result.returncode == 4, result.stdout + result.stderr
    assert re.search(r"--lsrb-max-cost needs --lsrb-price", result.stderr)
    assert fake.chat_requests() == []


def test_an_attempt_cut_by_the_budget_is_redone_whole_and_its_paid_calls_come_from_the_cache(
    fake: FakeOllama, run_suite: Any, tmp_path: Path
) -> None:
    """llm_srbench's direct method makes 5 calls per attempt: a budget of 6 calls' tokens plus the
    worst case of the 7th lets the first attempt finish and stops the second inside it (the 8th
    call's worst case no longer fits). That attempt is not recorded (it is not whole); the resume
    redoes it, and its 2 calls already paid for come from the response cache."""
    suite = TACTIC_SUITE.parent / "llm_srbench"
    out, cache = tmp_path / "run", tmp_path / "cache"
    base = [
        "--lsrb-adapter=openai",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}/v1",
        "--lsrb-max-items=2",
        "--lsrb-sr-method=direct",
        "--lsrb-outcome=record",
        "--lsrb-concurrency=1",  # one attempt at a time: which one the budget cuts is known
        f"--lsrb-cache-dir={cache}",
    ]
    sizing_args = [a for a in base if not a.startswith("--lsrb-cache-dir")]
    sizing = run_suite(*sizing_args, suite=suite, out=tmp_path / "sizing")  # the requests' worst cases
    assert sizing.returncode == 0, sizing.stdout + sizing.stderr
    worst = [worst_of(r.body) for r in fake.chat_requests()]
    assert len(worst) == 10 and worst[6] <= worst[7]  # (the second attempt's calls are alike)
    fake.reset()
    budget = 6 * REQUEST_TOKENS + worst[6]
    first = run_suite(*base, f"--lsrb-max-total-tokens={budget}", suite=suite, out=out)
    assert first.returncode == 2, first.stdout + first.stderr
    assert len(fake.answered) == 7
    records = first.attempts()
    assert len(records) == 1 and records[0]["model_calls"] == 5
    fake.reset()
    resumed = run_suite(*base, "--lsrb-max-total-tokens=100000", "--lsrb-resume", suite=suite, out=out)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(fake.answered) == 3  # the cut attempt's other 3 calls; its first 2 from the cache
    final = resumed.attempts()
    # model_calls counts the requests sent (`engine.calls`, #49 item 2): the 2 answered from the
    # cache are none
    assert len(final) == 2 and final[1]["model_calls"] == 3 and final[1]["cached"] is False
