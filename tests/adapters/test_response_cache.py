"""The SQLite response cache: keys, hits without requests, no errors stored, safe across processes."""

from __future__ import annotations

import dataclasses
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest
from fakes.adapter_kit import make_request, quick_config
from fakes.ollama_server import FakeOllama

from pytest_lsrb.adapters import create_adapter
from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, Message, SamplingConfig
from pytest_lsrb.adapters.cache import CACHE_FILE, CachingAdapter, ResponseCache, cache_key


def cached(fake: FakeOllama, cache_dir: Path, **overrides: object) -> CachingAdapter:
    adapter = create_adapter(quick_config("ollama", fake.url, cache_dir=str(cache_dir), **overrides))
    assert isinstance(adapter, CachingAdapter)
    return adapter


def test_a_second_identical_generation_sends_nothing(fake: FakeOllama, tmp_path: Path) -> None:
    first = cached(fake, tmp_path)
    first.check()
    made = first.generate(make_request(seed=5, temperature=0.8))
    first.close()
    assert made.ok and not made.cached
    sent_before = len(fake.requests)

    again = cached(fake, tmp_path)
    again.check()  # deferred: the cache already holds answers from this endpoint
    hit = again.generate(make_request(seed=5, temperature=0.8))
    again.close()
    assert hit.cached and hit.http_attempts == 0
    assert hit.text == made.text and hit.usage == made.usage
    assert len(fake.requests) == sent_before


def test_the_deferred_check_runs_once_before_the_first_miss(fake: FakeOllama, tmp_path: Path) -> None:
    seed_cache = cached(fake, tmp_path)
    assert seed_cache.generate(make_request(seed=1)).ok
    seed_cache.close()
    fake.requests.clear()

    adapter = cached(fake, tmp_path)
    adapter.check()
    assert fake.requests == []
    assert adapter.generate(make_request(seed=2)).ok
    assert adapter.generate(make_request(seed=3)).ok
    adapter.close()
    assert [r.path for r in fake.requests] == ["/api/tags", "/api/chat", "/api/chat"]


def test_a_failed_deferred_check_sends_no_generation(fake: FakeOllama, tmp_path: Path) -> None:
    seed_cache = cached(fake, tmp_path)
    assert seed_cache.generate(make_request(seed=1)).ok
    seed_cache.close()
    fake.models = ("other:1b",)  # the model was removed since
    fake.requests.clear()
    adapter = cached(fake, tmp_path)
    result = adapter.generate(make_request(seed=2))
    assert result.error_kind == "client_error" and "qwen2.5:7b" in (result.error_message or "")
    assert adapter.generate(make_request(seed=3)).error_kind == "client_error"
    assert [r.path for r in fake.requests] == ["/api/tags"]


@pytest.mark.parametrize("fault", ["server_500", "empty", "malformed", "not_found_404"])
def test_errors_are_never_cached(fake: FakeOllama, tmp_path: Path, fault: str) -> None:
    adapter = cached(fake, tmp_path, max_retries=0)
    fake.queue([fault])
    assert not adapter.generate(make_request()).ok
    assert ResponseCache(tmp_path).count() == 0
    fresh = adapter.generate(make_request())
    assert fresh.ok and not fresh.cached
    assert ResponseCache(tmp_path).count() == 1


def _variants(base: GenerationRequest) -> list[GenerationRequest]:
    s = base.sampling
    return [
        dataclasses.replace(base, seed=base.seed + 1),
        dataclasses.replace(base, sampling=dataclasses.replace(s, temperature=(s.temperature or 0.0) + 0.1)),
        dataclasses.replace(base, sampling=dataclasses.replace(s, max_tokens=s.max_tokens + 1)),
        dataclasses.replace(base, sampling=dataclasses.replace(s, top_p=0.9)),
        dataclasses.replace(base, sampling=dataclasses.replace(s, stop=("\n",))),
        dataclasses.replace(base, messages=(*base.messages[:-1], Message("user", "other goal"))),
        dataclasses.replace(base, messages=base.messages[1:]),
        dataclasses.replace(base, messages=(Message("user", base.messages[0].content), *base.messages[1:])),
    ]


def test_the_key_covers_every_sampling_setting_messages_and_seed() -> None:
    identity = {"adapter": "ollama", "model": "m", "base_url": "http://h"}
    base = make_request()
    keys = {cache_key(identity, r) for r in [base, *_variants(base)]}
    assert len(keys) == 1 + len(_variants(base))
    assert cache_key(identity, base) == cache_key(dict(identity), make_request())
    # every SamplingConfig field is in the key, including ones added later
    assert {f.name for f in dataclasses.fields(SamplingConfig)} == {
        "temperature",
        "max_tokens",
        "top_p",
        "stop",
    }


def test_the_key_covers_the_endpoint() -> None:
    request = make_request()
    base = {"adapter": "ollama", "model": "m", "base_url": "http://h"}
    others = [
        {**base, "adapter": "openai"},
        {**base, "model": "n"},
        {**base, "base_url": "http://g"},
        {**base, "max_tokens_field": "max_completion_tokens"},
    ]
    keys = {cache_key(i, request) for i in [base, *others]}
    assert len(keys) == 5


def test_the_mock_adapter_is_not_cached(tmp_path: Path) -> None:
    from pytest_lsrb.adapters.base import AdapterConfig

    adapter = create_adapter(AdapterConfig(name="mock", cache_dir=str(tmp_path / "c")))
    assert not isinstance(adapter, CachingAdapter)


def test_the_cache_is_in_wal_mode(tmp_path: Path) -> None:
    ResponseCache(tmp_path).close()
    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _key(worker: int, thread: int, i: int, n: int) -> str:
    return f"k{(worker * 7 + thread * 3 + i) % (n * 2)}"  # overlapping across processes on purpose


def _hammer(directory: str, worker: int, n: int) -> None:
    """One process: several threads writing and reading their own and others' keys."""
    cache = ResponseCache(Path(directory))

    def run(thread: int) -> None:
        for i in range(n):
            key = _key(worker, thread, i, n)
            cache.put(key, "e", GenerationResult(text=f"text-{key}", latency_ms=1.0))
            got = cache.get(key)
            assert got is not None and got.text == f"text-{key}"

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cache.close()


def test_four_processes_with_threads_share_one_cache(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w, 40)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    keys = {_key(w, t, i, 40) for w in range(4) for t in range(4) for i in range(40)}
    cache = ResponseCache(tmp_path)
    assert cache.count() == len(keys)
    assert all(cache.get(k).text == f"text-{k}" for k in keys)  # type: ignore[union-attr]


def test_an_unusable_cache_dir_is_a_usage_error(tmp_path: Path) -> None:
    from pytest_lsrb.core.errors import LsrbUsageError

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(LsrbUsageError, match="--lsrb-cache-dir"):
        ResponseCache(blocker / "cache")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / CACHE_FILE).write_text("this is not sqlite" * 100)
    with pytest.raises(LsrbUsageError, match="not a usable cache"):
        ResponseCache(tmp_path / "bad")
