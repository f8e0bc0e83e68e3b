"""A quota stop keeps every answer the provider already billed (issue #14, attack 5): with
attempts running ahead (concurrency 8, and under -n 2), the answers that arrived for tests the stop
kept from running are recorded, and cached when a cache is on; the resume sends only what was never
answered. Counted on the local Ollama-speaking server's own log of answered requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama

ITEMS, SAMPLES = 20, 2


def args(fake: FakeOllama, *extra: str) -> list[str]:
    return [
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}",
        f"--lsrb-max-items={ITEMS}",
        f"--lsrb-samples={SAMPLES}",
        "--lsrb-temperature=0.8",
        "--lsrb-outcome=record",
        "--lsrb-concurrency=8",
        *extra,
    ]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_quota_stop_keeps_billed_answers_and_resume_asks_only_for_the_rest(
    run_suite: Any, tmp_path: Path, xdist: list[str]
) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache"
    with FakeOllama(latency_s=0.05, quota_after=10) as fake:
        first = run_suite(*args(fake, f"--lsrb-cache-dir={cache}"), *xdist, out=out)
        billed = set(fake.answered)
        assert first.returncode == 2, first.stdout + first.stderr  # stopped, saying why
        assert "stopping the run: the endpoint refused with 'quota'" in first.stdout + first.stderr
        recorded = {r["attempt_seed"] for r in first.attempts() if not r["generation_error_kind"]}
        assert len(billed) >= 10 and billed <= recorded, (len(billed), len(recorded), billed - recorded)

        fake.reset()
        fake.quota_after = None
        resumed = run_suite(*args(fake, f"--lsrb-cache-dir={cache}"), *xdist, "--lsrb-resume", out=out)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        sent = {r.body["options"]["seed"] for r in fake.chat_requests()}
    assert not sent & billed  # nothing the provider already answered is asked for again
    final = {(r["item_id"], r["sample_index"]): r for r in resumed.attempts()}
    assert len(final) == ITEMS * SAMPLES
    assert all(not r["generation_error_kind"] for r in final.values())
    assert len(sent) == ITEMS * SAMPLES - len(recorded)
