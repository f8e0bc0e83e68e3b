"""Server faults are not the model's (issue #14, attacks 6 and 7): a body that is not the
protocol's success shape is retried and then *errors* the test (domain provider), never fails it
as `bad_response` in `model_output`; a server dripping its answer byte by byte cannot hold an
attempt past the timeout; a damaged response-cache row is a miss, not an answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fakes.adapter_kit import make_request, quick_config
from fakes.ollama_server import FakeOllama
from lsrb_testing import pytest_verdict

from pytest_lsrb.adapters import create_adapter
from pytest_lsrb.adapters.cache import CACHE_FILE
from pytest_lsrb.core.errors import MODEL_DOMAINS

GARBAGE = ("malformed", "truncated", "html_200", "error_200", "missing_field")


@pytest.mark.parametrize("fault", GARBAGE)
def test_garbage_is_retried_then_errors_the_test(run_suite: Any, fault: str) -> None:
    with FakeOllama() as fake:
        fake.queue([fault] * 40)
        result = run_suite(
            "--lsrb-adapter=ollama",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}",
            "--lsrb-max-items=2",
            "--lsrb-max-retries=1",
            "--lsrb-concurrency=1",
        )
        chats = len(fake.chat_requests())
    verdict = pytest_verdict(result.stdout)  # pytest's own count: errors, no failures
    assert result.returncode == 1 and "2 errors" in verdict and "failed" not in verdict, result.stdout
    # and then the command that finishes the run, asking those two again
    assert result.stdout.strip().splitlines()[-1].endswith("--lsrb-resume --lsrb-retry-errors")
    assert chats == 4  # each attempt: the first request and one retry
    for record in result.attempts():
        assert record["generation_error_domain"] == "provider", record
        assert record["generation_error_domain"] not in MODEL_DOMAINS
    summary = result.summary()
    assert summary["generation_error_domains"] == {"provider": 2}


def test_a_dripping_server_cannot_hold_an_attempt_past_the_timeout() -> None:
    with FakeOllama(drip_s=0.1) as fake:
        fake.queue(["drip"])
        adapter = create_adapter(quick_config("ollama", fake.url, timeout_s=1.0, max_retries=0))
        result = adapter.generate(make_request())
        adapter.close()
    # Every byte came within 0.1 s, so no single read timed out; the whole answer (hundreds of
    # bytes, tens of seconds at that pace) was cut at the 1 s deadline.
    assert result.error_kind == "timeout" and "in all" in (result.error_message or ""), result


@pytest.mark.parametrize("adapter", ["ollama", "openai"])
def test_a_reply_nested_too_deeply_is_the_servers_fault(adapter: str) -> None:
    """200,000 nested objects make `json.loads` raise RecursionError, not ValueError: that was an
    INTERNALERROR (issue #38, item 9); it is a bad response from the provider."""
    with FakeOllama() as fake:
        fake.queue(["deep_200"])
        url = fake.url + ("/v1" if adapter == "openai" else "")
        made = create_adapter(quick_config(adapter, url, timeout_s=10.0, max_retries=0))
        result = made.generate(make_request())
        made.close()
    assert result.error_kind == "bad_response" and result.error_domain == "provider", result
    assert "nested too deeply" in (result.error_message or "")


def test_a_damaged_cache_row_is_a_miss(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        config = quick_config("ollama", fake.url, cache_dir=str(tmp_path))
        first = create_adapter(config)
        answer = first.generate(make_request())
        first.close()
        assert answer.ok and len(fake.chat_requests()) == 1
        with sqlite3.connect(tmp_path / CACHE_FILE) as db:
            db.execute("UPDATE responses SET text = X'00ff', latency_ms = 'soon'")
        second = create_adapter(config)
        again = second.generate(make_request())
        second.close()
    assert again.ok and not again.cached and again.text == answer.text
    assert len(fake.chat_requests()) == 2  # asked the model again


def test_a_dripping_server_errors_the_test_through_pytest(run_suite: Any) -> None:
    with FakeOllama(drip_s=0.1) as fake:
        fake.queue(["drip"])
        result = run_suite(
            "--lsrb-adapter=ollama",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}",
            "--lsrb-max-items=1",
            "--lsrb-max-retries=0",
            "--lsrb-timeout=1",
        )
    verdict = pytest_verdict(result.stdout)
    assert result.returncode == 1 and "1 error" in verdict, result.stdout + result.stderr
    [record] = result.attempts()
    assert (record["generation_error_kind"], record["generation_error_domain"]) == ("timeout", "transport")
