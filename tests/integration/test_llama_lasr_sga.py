"""lasr and sga against a real model: llama.cpp's server with SmolLM2-135M, small budgets.

A 135M model rarely writes a usable expression or code block; what must hold is the machinery:
every call reaches the server, the budget is exact, answers are read safely, the search keeps its
own best (LaSR's evolution, SGA's linear primitive), and the record carries the method's fields,
the search progress and the suite's test/OOD metrics.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from smollm2_server import SmolServer, smollm2_server

from pytest_lsrb.core.errors import GENERATION_ERROR_DOMAINS

pytestmark = [pytest.mark.llama, pytest.mark.slow]

SUITE = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"
PROBLEM = "gen-CRK0"  # two inputs: the shortest prompts of the built-in set
SGA_CTX = 8192  # SmolLM2's trained context


def run_method(
    run_suite: Any, server: Any, out: Path, method: str, budget: int, time_limit: int = 900
) -> Any:
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
        "--lsrb-max-tokens=96",
        f"--lsrb-sr-time-limit={time_limit}",
        suite=SUITE,
        out=out,
        timeout=1500,
    )


def check(record: dict[str, Any], method: str, budget: int, server: Any) -> None:
    assert record["item_id"] == PROBLEM and record["adapter"] == "openai" and record["model"] == server.model
    assert record["sr_method"] == method and record["model_calls"] == budget
    assert record["latency_ms"] > 0  # the calls went to the server
    kind = record.get("generation_error_kind")
    assert kind is None or GENERATION_ERROR_DOMAINS[kind] == "model_output", record
    # the search always has a fitted equation of its own, scored by the suite
    assert record["equation"] and record["train_nmse"] is not None and record["nmse_id"] is not None
    assert record["search_progress"] and record["search_progress"][0][0] == 0
    assert "nmse_ood" in record and "symbolic_match" in record


def test_lasr_through_llama_cpp(llama_server: Any, run_suite: Any, tmp_path: Path) -> None:
    # the reference's 550 cycles x 25 iterations take minutes; a small model on a loaded CPU takes
    # tens of seconds per call: 300 s hold the 3 calls and the first iterations
    result = run_method(run_suite, llama_server, tmp_path / "lasr", "lasr", 3, time_limit=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [record] = result.attempts()
    # a small model on a loaded CPU can take the whole cap for fewer calls than the budget
    # (llm_weight 0.001 of ~22,000 events per iteration at the reference's 550 cycles)
    spent = 3 if record["stop_reason"] == "iterations" else max(1, record["model_calls"])
    assert 1 <= record["model_calls"] <= 3
    check(record, "lasr", spent, llama_server)
    assert sum(record["llm_calls_by_kind"].values()) == record["model_calls"]
    # the search goes on without the model until the 300 s cap (or all 25 iterations)
    assert record["stop_reason"] in ("iterations", "time_limit")
    assert 1 <= record["iterations"] <= 25 and (record["iterations"] == 25) == (
        record["stop_reason"] == "iterations"
    )


@pytest.fixture(scope="module")
def roomy_llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmolServer]:
    """The server with SmolLM2's whole trained context (8,192 tokens): SGA's conversation (system,
    task, format, each hypothesis with its code and loss curve) is longer than the default 2,048,
    where every call is an HTTP 400 and the attempt infrastructure (issue #40)."""
    with smollm2_server(tmp_path_factory.mktemp("llama_roomy"), SGA_CTX) as server:
        yield server


def test_sga_through_llama_cpp(roomy_llama: SmolServer, run_suite: Any, tmp_path: Path) -> None:
    llama_server = roomy_llama
    result = run_method(run_suite, llama_server, tmp_path / "sga", "sga", 2)
    assert result.returncode == 0, result.stdout + result.stderr
    [record] = result.attempts()
    check(record, "sga", 2, llama_server)
    usable = record["model_valid_candidates"]
    refused = sum(record["candidate_errors"].values())
    failed = sum(record["generation_errors"].values())
    assert usable + refused + failed == 2  # every call accounted for
    assert record["sga_temperatures"] == [0.5, 1.0]
