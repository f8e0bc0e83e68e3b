"""Tokens, finish reason and the served model: read from each wire format, kept through the cache,
recorded per attempt, totalled (and priced) in the summary."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, Message, SamplingConfig
from pytest_lsrb.adapters.cache import CachingAdapter, ResponseCache
from pytest_lsrb.adapters.ollama import parse_chat
from pytest_lsrb.adapters.openai import parse_chat_completion
from pytest_lsrb.adapters.usage import CallTally, result_fields
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.cost import Price, parse_price, summary_cost
from pytest_lsrb.engine.summary import Summarizer

# A real answer of llama.cpp's server (xllamacpp, SmolLM2) to a request that named "gpt-4o".
LLAMA_CPP_ANSWER: dict[str, Any] = {
    "choices": [
        {
            "finish_reason": "length",
            "index": 0,
            "message": {"role": "assistant", "content": "*Pause the chat*\n\n"},
        }
    ],
    "created": 1795464041,
    "model": "smollm2",
    "system_fingerprint": "b0-unknown",
    "object": "chat.completion",
    "usage": {
        "completion_tokens": 8,
        "prompt_tokens": 32,
        "total_tokens": 40,
        "prompt_tokens_details": {"cached_tokens": 0},
    },
    "id": "chatcmpl-D4h6SAbsGHF1mFade13m1YOTIwAX0zQG",
}

# Ollama's documented /api/chat answer (stream: false).
OLLAMA_ANSWER: dict[str, Any] = {
    "model": "llama3.2",
    "created_at": "2023-12-12T14:13:43.416799Z",
    "message": {"role": "assistant", "content": "Hello! How are you today?"},
    "done": True,
    "done_reason": "stop",
    "total_duration": 5191566416,
    "prompt_eval_count": 26,
    "eval_count": 298,
}


def test_openai_compatible_answers_give_tokens_reason_model_and_fingerprint() -> None:
    reply = parse_chat_completion(LLAMA_CPP_ANSWER)
    assert reply.usage == {"prompt_tokens": 32, "completion_tokens": 8}
    assert (reply.finish_reason, reply.served_model, reply.system_fingerprint) == (
        "length",
        "smollm2",
        "b0-unknown",
    )


def test_ollama_answers_give_tokens_reason_and_model() -> None:
    reply = parse_chat(OLLAMA_ANSWER)
    assert reply.usage == {"prompt_tokens": 26, "completion_tokens": 298}
    assert (reply.finish_reason, reply.served_model, reply.system_fingerprint) == ("stop", "llama3.2", None)


@pytest.mark.parametrize("odd", [None, 3, "", "   ", ["stop"], {"a": 1}])
def test_odd_reply_fields_are_dropped_not_fatal(odd: Any) -> None:
    usage = {"prompt_tokens": "3", "completion_tokens": -1, "total_tokens": True}
    body = {**LLAMA_CPP_ANSWER, "model": odd, "system_fingerprint": odd, "usage": usage}
    body["choices"] = [{**LLAMA_CPP_ANSWER["choices"][0], "finish_reason": odd}]
    reply = parse_chat_completion(body)
    assert reply.text and reply.usage == {}
    assert reply.finish_reason is reply.served_model is reply.system_fingerprint is None


def test_a_long_served_name_is_cut() -> None:
    reply = parse_chat({**OLLAMA_ANSWER, "model": "m" * 5000})
    assert reply.served_model == "m" * 200


def ok(
    prompt: int | None, completion: int | None, reason: str = "stop", model: str = "m"
) -> GenerationResult:
    usage = {k: v for k, v in (("prompt_tokens", prompt), ("completion_tokens", completion)) if v is not None}
    return GenerationResult("x", 1.0, usage=usage, finish_reason=reason, served_model=model)


def test_one_call_records_its_own_fields() -> None:
    assert result_fields(ok(32, 8, "length", "smollm2")) == {
        "prompt_tokens": 32,
        "completion_tokens": 8,
        "finish_reason": "length",
        "served_model": "smollm2",
        "system_fingerprint": None,
    }
    # A server that reports nothing: unknown, not zero.
    silent = result_fields(GenerationResult("x", 1.0))
    assert silent["prompt_tokens"] is None and silent["completion_tokens"] is None


_COUNTS = st.none() | st.integers(min_value=-3, max_value=10**6) | st.booleans() | st.text(max_size=3)


@given(
    usage=st.dictionaries(st.sampled_from(["prompt_tokens", "completion_tokens", "total_tokens"]), _COUNTS),
    error=st.none() | st.sampled_from(["timeout", "auth"]),
    reason=st.none() | st.sampled_from(["stop", "length"]),
    served=st.none() | st.sampled_from(["", "smollm2"]),
    fingerprint=st.none() | st.sampled_from(["", "b0-unknown"]),
)
def test_one_call_fields_are_a_tally_of_that_call(
    usage: dict[str, Any], error: str | None, reason: str | None, served: str | None, fingerprint: str | None
) -> None:
    # result_fields spells CallTally's rules out for one call (it runs once per tactic attempt)
    result = GenerationResult(
        "x",
        1.0,
        error_kind=error,
        usage=usage,
        finish_reason=reason,
        served_model=served,
        system_fingerprint=fingerprint,
    )
    tally = CallTally()
    tally.add(result)
    assert result_fields(result) == tally.usage_fields()


def test_many_calls_sum_tokens_and_count_reasons() -> None:
    tally = CallTally()
    for result in (
        ok(10, 5),
        ok(10, 7, "length"),
        GenerationResult.failure("timeout", "t", 1.0),
        ok(None, 2),
    ):
        tally.add(result)
    fields = tally.record_fields()
    assert fields["prompt_tokens"] == 20 and fields["completion_tokens"] == 14
    assert fields["finish_reasons"] == {"stop": 2, "length": 1}
    assert fields["finish_reason"] == "stop"  # the last answered call's


class _Inner:
    name = "fake"
    model = "asked"
    default_concurrency = 1

    def __init__(self) -> None:
        self.calls = 0

    def check(self) -> None: ...

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.calls += 1
        return GenerationResult(
            "answer",
            5.0,
            usage={"prompt_tokens": 3, "completion_tokens": 1},
            finish_reason="length",
            served_model="served",
            system_fingerprint="fp1",
        )

    def identity(self) -> dict[str, Any]:
        return {"adapter": "fake"}

    def close(self) -> None: ...


REQUEST = GenerationRequest(messages=(Message("user", "hi"),), seed=1, sampling=SamplingConfig())


def test_a_cached_answer_keeps_its_tokens_reason_and_model(tmp_path: Path) -> None:
    inner = _Inner()
    first = CachingAdapter(inner, ResponseCache(tmp_path)).generate(REQUEST)
    again = CachingAdapter(inner, ResponseCache(tmp_path)).generate(REQUEST)
    assert inner.calls == 1 and again.cached
    for field in ("usage", "finish_reason", "served_model", "system_fingerprint", "text"):
        assert getattr(again, field) == getattr(first, field), field


def test_a_cache_from_before_the_meta_column_still_works(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "responses.sqlite3")
    conn.executescript(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, text TEXT NOT NULL,"
        " usage TEXT NOT NULL, latency_ms REAL NOT NULL, created_at TEXT NOT NULL);"
        "INSERT INTO responses VALUES ('k', 'e', 'old', '{}', 1.0, 'then');"
    )
    conn.commit()
    conn.close()
    cache = ResponseCache(tmp_path)
    hit = cache.get("k")
    assert hit is not None and hit.text == "old" and hit.meta == {}


def test_prices_parse_and_price_only_the_tokens_sent() -> None:
    assert parse_price(None) is None and parse_price("") is None
    price = parse_price("in=2.5, out=10")
    assert price == Price(2.5, 10.0)
    summary = {
        "prompt_tokens": 3_000_000,
        "completion_tokens": 500_000,
        "cached_prompt_tokens": 1_000_000,
        "cached_completion_tokens": 0,
    }
    assert summary_cost(summary, price)["cost"] == pytest.approx(2.5 * 2 + 10 * 0.5)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("in=1", "out is missing"),
        ("in=x,out=1", "not a number"),
        ("in=-1,out=1", ">= 0"),
        ("cost=3", "in=PRICE"),
        ("in=1,in=2,out=3", "twice"),
        ("in=nan,out=1", ">= 0"),
    ],
)
def test_bad_prices_are_one_sentence(text: str, says: str) -> None:
    with pytest.raises(LsrbUsageError, match="--lsrb-price") as info:
        parse_price(text)
    assert says in str(info.value)


def test_the_summary_totals_tokens_and_counts_served_models() -> None:
    summarizer = Summarizer(1)
    records = [
        {"item_id": "a", "prompt_tokens": 10, "completion_tokens": 2, "served_model": "s"},
        {"item_id": "b", "prompt_tokens": 5, "completion_tokens": 1, "cached": True, "served_model": "s"},
        {"item_id": "c"},  # an endpoint that reported nothing
    ]
    for rec in records:
        summarizer.add({"sample_index": 0, **rec})
    out = summarizer.finish()
    assert (out["prompt_tokens"], out["completion_tokens"]) == (15, 3)
    assert (out["cached_prompt_tokens"], out["cached_completion_tokens"]) == (5, 1)
    assert out["token_counted_attempts"] == 2 and out["served_models"] == {"s": 2}


@pytest.mark.parametrize("adapter", ["ollama", "openai"])
def test_a_run_records_usage_and_prices_it(adapter: str, run_suite: Any) -> None:
    with FakeOllama() as fake:
        base = fake.url + ("/v1" if adapter == "openai" else "")
        result = run_suite(
            f"--lsrb-adapter={adapter}",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={base}",
            "--lsrb-max-items=4",
            "--lsrb-outcome=record",
            "--lsrb-price=in=1000,out=2000",
        )
    assert result.returncode == 0, result.stdout + result.stderr
    records = result.attempts()
    assert len(records) == 4
    for rec in records:  # the fake answers 20 prompt and 3 completion tokens, finish "stop"
        assert (rec["prompt_tokens"], rec["completion_tokens"], rec["finish_reason"]) == (20, 3, "stop")
        assert rec["served_model"] == "qwen2.5:7b"
        assert rec["system_fingerprint"] == ("fp_ollama" if adapter == "openai" else None)
    summary = result.summary()
    assert (summary["prompt_tokens"], summary["completion_tokens"]) == (80, 12)
    assert summary["cost"] == pytest.approx((80 * 1000 + 12 * 2000) / 1e6)
    assert "tokens in/out" in result.stdout and "80 / 12" in result.stdout


MOUNTS = """\
/dev/sda1 / ext4 rw,relatime 0 0
server:/export /shared nfs4 rw,vers=4.2 0 0
10.0.0.1@tcp:/lustre /shared/scratch lustre rw 0 0
sshfs#me@host: /mnt/my\\040box fuse.sshfs rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "fs"),
    [
        ("/home/me/cache", "ext4"),
        ("/shared/cache", "nfs4"),
        ("/shared/scratch/c", "lustre"),
        ("/mnt/my box/c", "fuse.sshfs"),
        ("/shared", "nfs4"),
    ],
)
def test_the_filesystem_is_the_longest_mount_prefix(path: str, fs: str) -> None:
    from pytest_lsrb.adapters.filesystems import filesystem_type, is_network_filesystem

    assert filesystem_type(Path(path), MOUNTS) == fs
    assert is_network_filesystem(fs) == (fs != "ext4")


def test_a_cache_on_a_network_filesystem_uses_the_rollback_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_lsrb.adapters import cache as cache_module

    monkeypatch.setattr(cache_module, "filesystem_type", lambda directory: "nfs4")
    nfs = ResponseCache(tmp_path / "nfs")
    mode = nfs._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert nfs.journal == "DELETE" and mode == "delete"
    local = ResponseCache(tmp_path / "local", "wal")
    assert local._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    forced = ResponseCache(tmp_path / "forced", "delete")
    assert forced._conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    # Both modes serve what they stored.
    inner = _Inner()
    CachingAdapter(inner, nfs).generate(REQUEST)
    assert CachingAdapter(inner, nfs).generate(REQUEST).cached and inner.calls == 1
