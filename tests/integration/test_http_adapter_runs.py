"""Whole runs through real HTTP adapters against the local fake Ollama server, like a user runs them.

Covers: records and seeds end to end, attempts kept in flight (with and without xdist), a quota
refusal stopping the run early, a fault-injection run, the response cache, resume and
retry-errors, and that a key never reaches any output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama

from pytest_lsrb.core.errors import GENERATION_ERROR_DOMAINS
from pytest_lsrb.engine.records import strip_timing
from pytest_lsrb.engine.summary import SUMMARY_TIMING_KEYS

TACTIC_SUITE = Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1"

ITEMS = 12  # of the built-in index, a seeded subset


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def ollama_args(fake: FakeOllama, *extra: str, items: int = ITEMS) -> list[str]:
    return [
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}",
        f"--lsrb-max-items={items}",
        "--lsrb-outcome=record",
        *extra,
    ]


def comparable_summary(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in SUMMARY_TIMING_KEYS}


def by_key(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """The last record of each attempt (what the summary counts)."""
    return {(r["item_id"], r["sample_index"]): r for r in records}


@pytest.fixture(scope="module")
def shared() -> Iterator[FakeOllama]:
    """One endpoint for a baseline run and the runs compared with it (the base URL is identity)."""
    with FakeOllama() as server:
        yield server


@pytest.fixture
def endpoint(shared: FakeOllama) -> FakeOllama:
    shared.reset()
    shared.script.clear()
    shared.fault_rate = 0.0
    return shared


def compared_args(fake: FakeOllama, *extra: str) -> list[str]:
    return ollama_args(fake, "--lsrb-samples=2", "--lsrb-concurrency=3", "--lsrb-temperature=0.8", *extra)


@pytest.fixture(scope="module")
def baseline(shared: FakeOllama, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uninterrupted, fault-free run: what resumed runs must end up equal to."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("baseline") / "out"
    shared.reset()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(TACTIC_SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--lsrb-output-dir={out}",
        *compared_args(shared),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    return {"records": by_key(records), "summary": summary}


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_attempts_carry_their_seeds_and_are_in_flight_together(fake: FakeOllama, run_suite: Any) -> None:
    """With 0.2 s per answer, a runner that did not prefetch would never have two in flight."""
    fake.latency_s = 0.2
    result = run_suite(
        *ollama_args(fake, "--lsrb-samples=2", "--lsrb-temperature=0.7", "--lsrb-concurrency=4")
    )
    assert result.returncode == 0, result.stdout + result.stderr
    records = result.attempts()
    assert len(records) == 2 * ITEMS
    chats = fake.chat_requests()
    assert len(chats) == len(records)
    assert sorted(r.body["options"]["seed"] for r in chats) == sorted(r["attempt_seed"] for r in records)
    assert all(r.body["options"]["temperature"] == 0.7 for r in chats)
    for rec in records:
        assert rec["adapter"] == "ollama" and rec["model"] == "qwen2.5:7b"
        assert rec["model_calls"] == 1 and rec["cached"] is False
        assert rec["generation_error_kind"] is None and rec["tactic"]
    assert result.summary()["complete"] and result.summary()["model_calls"] == 2 * ITEMS
    assert 1 < fake.max_in_flight <= 4 + 1  # the concurrency, plus a test that runs inline


@pytest.mark.slow
def test_under_xdist_each_worker_keeps_attempts_in_flight(fake: FakeOllama, run_suite: Any) -> None:
    fake.latency_s = 0.2
    result = run_suite(*ollama_args(fake, "--lsrb-concurrency=4", "--lsrb-samples=3"), "-n", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(fake.chat_requests()) == len(result.attempts()) == 3 * ITEMS
    assert 2 < fake.max_in_flight <= 2 * (4 + 1)  # more than one per worker, within the limit


@pytest.mark.slow
def test_under_xdist_a_quota_refusal_stops_every_worker(fake: FakeOllama, run_suite: Any) -> None:
    fake.latency_s = 0.05
    fake.queue(["quota_429"])
    result = run_suite(*ollama_args(fake, "--lsrb-concurrency=3", "--lsrb-samples=4", items=20), "-n", "2")
    assert result.returncode == 2  # interrupted
    assert "stopping the run: the endpoint refused with 'quota'" in result.stdout + result.stderr
    # The refusal was the first request; at most what was already in flight followed it.
    assert len(fake.chat_requests()) <= 1 + 2 * (3 + 1)
    assert len(result.attempts()) < 80
    assert not (result.out_dir / ".lsrb-stop").exists()


def test_a_quota_refusal_stops_the_run_and_resume_finishes_it_like_an_uninterrupted_run(
    endpoint: FakeOllama, baseline: dict[str, Any], run_suite: Any, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    answered = {"n": 0}
    original = endpoint.next_fault

    def quota_after_nine() -> str | None:
        answered["n"] += 1
        return "quota_429" if answered["n"] == 10 else original()

    endpoint.next_fault = quota_after_nine  # type: ignore[method-assign]
    try:
        first = run_suite(*compared_args(endpoint), out=out)
    finally:
        endpoint.next_fault = original  # type: ignore[method-assign]
    output = first.stdout + first.stderr
    assert first.returncode == 2, output  # interrupted, with one sentence saying why
    assert "stopping the run: the endpoint refused with 'quota'" in output
    # The refusal, then only what was in flight: each of the other two of the 3 concurrent
    # attempts may finish and start one more before the refusing thread has raised the stop (on
    # a loaded machine it can be descheduled in between). Counted by attempt seed: a transient
    # HTTP retry of one attempt is not another attempt.
    seeds = {r.body["options"]["seed"] for r in endpoint.chat_requests() if isinstance(r.body, dict)}
    assert len(seeds) <= 10 + 2 * 2
    finished = [r for r in first.attempts() if r["generation_error_kind"] != "quota"]
    # Answers fetched ahead for tests the stop kept from running are recorded too (billed);
    # tests/hardening/test_billed_answers.py checks that against the server's log.
    assert 0 < len(finished) < 2 * ITEMS
    assert not (out / ".lsrb-stop").exists()

    # A kill mid-write leaves half a line behind: resume must cope with that too.
    with (out / "attempts.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"item_id": "torn", "sampl')
    endpoint.reset()
    resumed = run_suite(*compared_args(endpoint), "--lsrb-resume", out=out)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # No model call for a finished attempt; every refused one is redone.
    sent = [r.body["options"]["seed"] for r in endpoint.chat_requests()]
    assert len(sent) == 2 * ITEMS - len(finished)
    assert not set(sent) & {r["attempt_seed"] for r in finished}
    assert comparable_summary(resumed.summary()) == comparable_summary(baseline["summary"])
    records = by_key(resumed.attempts())
    assert {k: strip_timing(v) for k, v in records.items()} == {
        k: strip_timing(v) for k, v in baseline["records"].items()
    }


def test_retry_errors_reruns_only_the_attempts_that_ended_in_an_error(
    endpoint: FakeOllama, baseline: dict[str, Any], run_suite: Any, tmp_path: Path
) -> None:
    out = tmp_path / "flaky"
    endpoint.fault_rate, endpoint.faults = 0.4, ("server_500", "malformed")
    first = run_suite(*compared_args(endpoint, "--lsrb-max-retries=0"), out=out)
    endpoint.fault_rate = 0.0
    errors = [r for r in first.attempts() if r["generation_error_kind"]]
    assert errors and len(errors) < 2 * ITEMS
    assert first.returncode in (0, 1)  # 1 when a server error errored a test

    endpoint.reset()
    plain = run_suite(*compared_args(endpoint), "--lsrb-resume", out=out)
    assert plain.returncode in (0, 1), plain.stdout + plain.stderr
    assert endpoint.chat_requests() == []  # resume alone keeps finished error records
    assert plain.summary()["generation_error_rate"] > 0

    again = run_suite(*compared_args(endpoint), "--lsrb-resume", "--lsrb-retry-errors", out=out)
    assert again.returncode == 0, again.stdout + again.stderr
    redone = [r.body["options"]["seed"] for r in endpoint.chat_requests()]
    assert sorted(redone) == sorted(r["attempt_seed"] for r in errors)
    assert comparable_summary(again.summary()) == comparable_summary(baseline["summary"])


def test_retry_errors_never_retries_the_models_own_failures(
    endpoint: FakeOllama, run_suite: Any, tmp_path: Path
) -> None:
    """--lsrb-retry-errors asks again only what failed on the infrastructure (a server 500); an
    empty answer is the model's own failure (`empty_output`, domain model_output) and stays."""
    out = tmp_path / "mixed"
    endpoint.reset()
    endpoint.fault_rate, endpoint.faults = 0.5, ("server_500", "empty")
    try:
        first = run_suite(*compared_args(endpoint, "--lsrb-max-retries=0"), out=out)
    finally:
        endpoint.fault_rate = 0.0
    kinds = {r["attempt_seed"]: r["generation_error_kind"] for r in first.attempts()}
    infra = {seed for seed, kind in kinds.items() if kind and kind != "empty_output"}
    model = {seed for seed, kind in kinds.items() if kind == "empty_output"}
    assert infra and model, kinds  # both kinds really happened (seeded faults)
    assert {r["generation_error_domain"] for r in first.attempts() if r["attempt_seed"] in model} == {
        "model_output"
    }

    endpoint.reset()
    again = run_suite(*compared_args(endpoint), "--lsrb-resume", "--lsrb-retry-errors", out=out)
    assert again.returncode in (0, 1), again.stdout + again.stderr
    redone = sorted(r.body["options"]["seed"] for r in endpoint.chat_requests())
    assert redone == sorted(infra)
    last = {r["attempt_seed"]: r["generation_error_kind"] for r in by_key(again.attempts()).values()}
    assert all(last[seed] == "empty_output" for seed in model)
    assert not any(last[seed] for seed in infra)


def test_a_fault_injected_run_completes_with_every_attempt_accounted_for(run_suite: Any) -> None:
    with FakeOllama(fault_rate=0.3, fault_seed=3, retry_after_ms="5") as fake:
        fake.faults = (*fake.faults, "empty", "rate_429_ms")
        result = run_suite(
            *ollama_args(
                fake,
                "--lsrb-samples=4",
                "--lsrb-concurrency=6",
                "--lsrb-max-retries=3",
                "--lsrb-timeout=0.25",
            )
        )
        injected = list(fake.injected)
        sent = len(fake.chat_requests())
    out = result.stdout + result.stderr
    assert result.returncode in (0, 1), out  # 1: some attempts ended in a (classified) error
    assert "Traceback" not in out and "INTERNALERROR" not in out
    records = result.attempts()
    assert len(records) == 4 * ITEMS
    assert len(injected) >= 0.2 * sent  # the faults really happened
    for rec in records:
        kind = rec["generation_error_kind"]
        if kind is None:
            assert rec["tactic"], rec
        else:
            assert kind in GENERATION_ERROR_DOMAINS and kind != "harness", rec
            assert rec["generation_error_domain"] == GENERATION_ERROR_DOMAINS[kind]
        assert 1 <= rec["model_calls"] <= 4  # one try and at most --lsrb-max-retries=3 more
    assert sum(r["model_calls"] for r in records) == sent
    assert result.summary()["model_calls"] == sent


@pytest.mark.parametrize(
    "xdist", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow)]
)
def test_a_second_identical_run_is_answered_from_the_cache(
    fake: FakeOllama, run_suite: Any, tmp_path: Path, xdist: list[str]
) -> None:
    cache = f"--lsrb-cache-dir={tmp_path / 'cache'}"
    args = ollama_args(fake, cache, "--lsrb-samples=2", "--lsrb-temperature=0.8", "--lsrb-overwrite")
    first = run_suite(*args, *xdist)
    assert first.returncode == 0, first.stdout + first.stderr
    assert len(fake.chat_requests()) == 2 * ITEMS
    fake.reset()
    second = run_suite(*args, *xdist)
    assert second.returncode == 0, second.stdout + second.stderr
    assert fake.requests == []  # not even the model check
    a, b = by_key(first.attempts()), by_key(second.attempts())
    assert a.keys() == b.keys()
    for key in a:
        assert b[key]["cached"] is True and b[key]["model_calls"] == 0
        assert b[key]["raw_output"] == a[key]["raw_output"]
    assert second.summary()["cached_attempts"] == 2 * ITEMS


CANARY = "sk-canary-7f3a9c1e5b2d4f60a8e1"


def test_a_canary_key_reaches_no_output_cache_or_log(run_suite: Any, tmp_path: Path) -> None:
    env = {"LSRB_CANARY_KEY": CANARY}
    cache = tmp_path / "cache"
    with FakeOllama(require_key=CANARY) as fake:
        fake.queue(["echo_auth_500", "server_500"])
        result = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-api-key-env=LSRB_CANARY_KEY",
            f"--lsrb-cache-dir={cache}",
            f"--lsrb-max-items={ITEMS}",
            "--lsrb-outcome=record",
            "--lsrb-max-retries=0",
            "--log-level=DEBUG",
            "-o",
            "log_cli=true",
            "--log-cli-level=DEBUG",
            "-rA",
            "-l",
            env=env,
        )
        sent = fake.requests
    # The key was really used (so its absence below means something) ...
    assert sent and all(r.headers.get("Authorization") == f"Bearer {CANARY}" for r in sent)
    assert len(result.attempts()) == ITEMS
    errors = [r for r in result.attempts() if r["generation_error_kind"]]
    assert errors and any("upstream rejected header" in r["generation_error_message"] for r in errors)
    # ... and it is nowhere: not in any output file, the cache, or anything printed or logged.
    assert "DEBUG" in result.stdout  # the logs really were captured at the most verbose level
    assert CANARY not in result.stdout and CANARY not in result.stderr
    files = [p for p in [*result.out_dir.rglob("*"), *cache.rglob("*")] if p.is_file()]
    assert {p.name for p in files} >= {"attempts.jsonl", "summary.json", "run.json"}
    assert any(p.name.startswith("responses.sqlite3") for p in files)
    for path in files:
        assert CANARY.encode() not in path.read_bytes(), path
