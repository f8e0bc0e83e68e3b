"""llm_srbench's discovery methods against a real model: llama.cpp's server with SmolLM2-135M.

One built-in problem, `direct` as the reference configures it (5 samples of one prompt, no
temperature sent: the server's default) and `llmsr` with a budget of three model calls, small
token limits (the model writes ~24 tokens/s on 2 cores, much less on a busy machine).
A 135M model rarely writes a usable skeleton; what must hold is the machinery: every call
reaches the server, answers are read safely, the budget is exact, and the record carries the
search's fields and the suite's test/OOD metrics.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.core.errors import GENERATION_ERROR_DOMAINS

pytestmark = [pytest.mark.llama, pytest.mark.slow]

SUITE = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"
PROBLEM = "gen-CRK0"  # two inputs: the shortest prompts of the built-in set


def run_method(run_suite: Any, server: Any, out: Path, method: str, budget: int, *extra: str) -> Any:
    return run_suite(
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={server.url}",
        f"--lsrb-model={server.model}",
        f"--lsrb-goal-slice=name:{PROBLEM}",
        f"--lsrb-sr-method={method}",
        f"--lsrb-sr-budget={budget}",
        "--lsrb-seed=3",
        "--lsrb-outcome=record",
        "--lsrb-timeout=300",
        "--lsrb-sr-time-limit=600",
        *extra,
        suite=SUITE,
        out=out,
        timeout=1500,
    )


def _check_common(record: dict[str, Any], method: str, budget: int, server: Any) -> None:
    assert record["item_id"] == PROBLEM and record["adapter"] == "openai"
    assert record["model"] == server.model
    assert record["sr_method"] == method and record["sr_budget"] == budget
    assert record["model_calls"] == budget
    kind = record.get("generation_error_kind")
    assert kind is None or GENERATION_ERROR_DOMAINS[kind] == "model_output", record
    assert record["latency_ms"] > 0  # the calls went to the server
    for key in ("nmse_id", "nmse_ood", "acc_tau_id", "symbolic_match"):
        assert key in record  # the suite scored whatever was found


def test_direct_sends_five_distinct_samples_at_the_servers_default_temperature(
    llama_server: Any, run_suite: Any, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    result = run_method(
        run_suite,
        llama_server,
        tmp_path / "direct",
        "direct",
        5,
        "--lsrb-max-tokens=48",
        f"--lsrb-cache-dir={cache}",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    [record] = result.attempts()
    _check_common(record, "direct", 5, llama_server)
    assert result.summary()["config"]["temperature"] is None  # none sent: llama.cpp's default
    # The five answers the server gave (the response cache keeps each call's text): the same
    # prompt, five seeds, the server's sampling temperature: five different samples.
    with sqlite3.connect(cache / "responses.sqlite3") as db:
        texts = [row[0] for row in db.execute("SELECT text FROM responses")]
    assert len(texts) == 5 and len(set(texts)) == 5, texts
    # The linear starting skeleton is the fallback: there is always a fitted equation.
    assert record["equation"] and record["train_nmse"] is not None and record["nmse_id"] is not None
    assert 1 <= record["search_trace_length"] <= 6  # the linear start and the answers that parsed
    usable, refused = record["model_valid_candidates"], sum(record["candidate_errors"].values())
    assert usable + refused + sum(record["generation_errors"].values()) == 5


def test_llmsr_tiny_budget_through_llama_cpp(llama_server: Any, run_suite: Any, tmp_path: Path) -> None:
    result = run_method(run_suite, llama_server, tmp_path / "llmsr", "llmsr", 3, "--lsrb-max-tokens=96")
    assert result.returncode == 0, result.stdout + result.stderr
    [record] = result.attempts()
    _check_common(record, "llmsr", 3, llama_server)
    # The search starts from LLM-SR's linear skeleton, so there is always a fitted equation.
    assert record["equation"] and record["train_nmse"] is not None and record["nmse_id"] is not None
    assert 1 <= record["search_trace_length"] <= 4
    usable = record["model_valid_candidates"]
    refused = sum(record["candidate_errors"].values())
    failed = sum(record["generation_errors"].values())
    assert usable + refused + failed == 3  # every call accounted for: a skeleton, a refusal or an error
    assert record["stop_reason"] in ("budget", "early_stop")
