"""A cost budget against the real llama.cpp server (xllamacpp + SmolLM2-135M-Instruct), which
reports `usage` as OpenAI does: the run stops within the budget plus one request's worth, every
answer the server billed is recorded, and a resume with a larger budget ends with the records of
a run without one (seeded sampling at temperature 0.8 is repeatable on llama.cpp)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_lsrb.engine.records import strip_timing

pytestmark = [pytest.mark.llama, pytest.mark.slow]

ITEMS = 6
WORST = 800


def args(server: Any, *extra: str) -> list[str]:
    return [
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={server.url}",
        f"--lsrb-model={server.model}",
        f"--lsrb-max-items={ITEMS}",
        "--lsrb-max-tokens=8",
        "--lsrb-temperature=0.8",
        "--lsrb-seed=3",
        "--lsrb-outcome=record",
        "--lsrb-concurrency=2",
        "--lsrb-timeout=600",
        "--lsrb-price=in=1000000,out=1000000",  # one unit per token: the cost is the token count
        *extra,
    ]


def by_key(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["item_id"], r["sample_index"]): strip_timing(r) for r in records}


def test_a_cost_budget_on_llama_cpp_stops_keeps_paid_answers_and_resumes_to_the_same_records(
    llama_server: Any, run_suite: Any, tmp_path: Any
) -> None:
    free = run_suite(*args(llama_server), out=tmp_path / "free")
    assert free.returncode == 0, free.stdout + free.stderr
    costs = [r["prompt_tokens"] + r["completion_tokens"] for r in free.attempts()]
    assert len(costs) == ITEMS and all(c > 0 for c in costs)
    # room for about three of the six requests, plus one request's worst case (the budget sends a
    # request only when its worst case fits: this suite's prompt bytes plus the template's
    # allowance and --lsrb-max-tokens 8 stay under WORST)
    budget = sum(sorted(costs)[:3]) + WORST

    out = tmp_path / "run"
    first = run_suite(*args(llama_server, f"--lsrb-max-cost={budget}"), out=out)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "the run stopped at its budget (--lsrb-max-cost" in first.stdout
    ledger = json.loads((out / ".lsrb-budget.json").read_text())
    records = first.attempts()
    # every answer the server billed is recorded, and what they cost is what the server reported
    assert ledger["requests"] == len(records) and 0 < len(records) < ITEMS
    spent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in records)
    assert ledger["prompt_tokens"] + ledger["completion_tokens"] == spent
    assert spent <= budget  # the law: never over

    resumed = run_suite(*args(llama_server, f"--lsrb-max-cost={10 * sum(costs)}", "--lsrb-resume"), out=out)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert by_key(resumed.attempts()) == by_key(free.attempts())


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_token_budget_on_one_slot_llama_cpp_at_the_default_concurrency_stops_every_time(
    llama_server: Any, run_suite: Any, tmp_path: Any, xdist: list[str]
) -> None:
    """llama.cpp's default of one slot, the adapter's default concurrency (8 attempts in flight,
    one permit): before the budget was asked under the permit, this hung in most tries."""
    common = [a for a in args(llama_server) if not a.startswith("--lsrb-concurrency")]
    # SmolLM2 bills ~180 tokens a request here (165 prompt + 8): room for a few, then a stop with
    # items left (the next request's worst case no longer fits)
    budget = 2 * 200 + WORST
    for i in range(3):
        out = tmp_path / f"run{i}"
        run = run_suite(*common, f"--lsrb-max-total-tokens={budget}", *xdist, out=out, timeout=240)
        assert run.returncode == 2, run.stdout + run.stderr
        ledger = json.loads((out / ".lsrb-budget.json").read_text())
        spent = ledger["prompt_tokens"] + ledger["completion_tokens"]
        assert 0 < spent <= budget and ledger["reservations"] == []
        assert f"--lsrb-max-total-tokens {budget}; spent {spent})" in run.stdout
