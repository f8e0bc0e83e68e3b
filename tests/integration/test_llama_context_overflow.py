"""Issue #40, item 3, against the real llama.cpp server: a context too small for every prompt.

llama.cpp answers a prompt longer than its context with HTTP 400 (`exceed_context_size_error`),
so the model never answers. Each method's search still holds its fallback (LLM-SR's and Direct's
linear starting skeleton, SGA's primitive), but the attempt is infrastructure: summary.json counts
it apart (`infrastructure_attempts`, `generation_error_kinds`), the terminal shows the errors, and
Table 1 leaves it out of the numbers, showing it in its row's `inf` column — never `no_equation`
in the model's domain and an SGA 0 %.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import pytest_verdict
from smollm2_server import SmolServer, smollm2_server

pytestmark = [pytest.mark.llama, pytest.mark.slow]

SUITE = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"
PROBLEM = "gen-CRK0"  # two inputs: the shortest prompts of the built-in set
GROUP = "lsr_synth_chem_react"
TINY_CTX = 128  # tokens: every method's prompt is longer (LLM-SR's ~600, SGA's ~1,500)


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmolServer]:
    with smollm2_server(tmp_path_factory.mktemp("llama_tiny"), TINY_CTX) as server:
        yield server


@pytest.mark.parametrize(("method", "budget"), [("sga", 3), ("llmsr", 4), ("direct", 5)])
def test_every_call_over_the_context_is_infrastructure_everywhere(
    tiny_llama: SmolServer, run_suite: Any, tmp_path: Path, method: str, budget: int
) -> None:
    result = run_suite(
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={tiny_llama.url}",
        f"--lsrb-model={tiny_llama.model}",
        f"--lsrb-goal-slice=name:{PROBLEM}",
        f"--lsrb-sr-method={method}",
        f"--lsrb-sr-budget={budget}",
        "--lsrb-seed=3",
        "--lsrb-timeout=120",
        suite=SUITE,
        out=tmp_path / method,
        timeout=900,
    )
    output = result.stdout + result.stderr
    [record] = result.attempts()
    # The record: every call refused at the server, the search's fallback left standing.
    assert record["model_calls"] == budget and record["generation_errors"] == {"client_error": budget}, output
    assert (
        record["generation_error_kind"] == "client_error" and record["generation_error_domain"] == "provider"
    )
    assert "never answered" in record["generation_error_message"]
    assert (
        record["fallback_result"] is True and record["equation"]
    )  # the fallback exists, it is not the model's
    # summary.json: counted apart, out of every model metric.
    summary = result.summary()
    assert summary["infrastructure_attempts"] == 1 and summary["judged_attempts"] == 0
    assert summary["generation_error_kinds"] == {"client_error": 1}
    assert summary["generation_error_domains"] == {"provider": 1}
    row = summary["srbench_table"][GROUP]
    assert row["infrastructure_attempts"] == 1 and row["attempts"] == 0
    assert row["acc_tau_id_pct"] is None and row["median_nmse_id"] is None  # no SGA 0 %
    # The terminal: the errors, the test errored (not failed), and Table 1's row with inf = 1.
    errors_line = next(line for line in output.splitlines() if "generation errors" in line)
    assert "client_error" in errors_line and "none" not in errors_line, errors_line
    verdict = pytest_verdict(result.stdout)  # errored, never charged to the model
    assert "1 error" in verdict and "failed" not in verdict, verdict
    table_row = next(line for line in output.splitlines() if line.split()[:2] == [method, GROUP])
    assert table_row.split()[2:6] == ["0", "0", "0", "1"], table_row  # n u fb inf
