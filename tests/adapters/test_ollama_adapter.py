"""The Ollama adapter against a local server speaking Ollama's API, through every error shape."""

from __future__ import annotations

import logging
import re
import threading

import pytest
from fakes.adapter_kit import make_request, quick_config
from fakes.ollama_server import FakeOllama, answer_text

from pytest_lsrb.adapters import create_adapter
from pytest_lsrb.adapters.base import AdapterConfig
from pytest_lsrb.adapters.ollama import DEFAULT_BASE_URL, OllamaAdapter
from pytest_lsrb.core.errors import LsrbUsageError, generation_domain


def ollama(fake: FakeOllama, **overrides: object) -> OllamaAdapter:
    adapter = create_adapter(quick_config("ollama", fake.url, **overrides))
    assert isinstance(adapter, OllamaAdapter)
    return adapter


def test_chat_sends_seed_temperature_and_num_predict_and_reads_the_answer(fake: FakeOllama) -> None:
    adapter = ollama(fake)
    request = make_request(seed=1234, temperature=0.7, max_tokens=24)
    result = adapter.generate(request)
    adapter.close()

    assert result.ok and result.error_kind is None
    msgs = [{"role": m.role, "content": m.content} for m in request.messages]
    assert result.text == answer_text(msgs, 1234, 0.7)
    assert result.http_attempts == 1
    assert result.usage == {"prompt_tokens": 20, "completion_tokens": 3}
    (sent,) = fake.chat_requests()
    assert sent.path == "/api/chat"
    assert sent.body["stream"] is False
    assert sent.body["model"] == "qwen2.5:7b"
    assert sent.body["messages"] == msgs
    assert sent.body["options"] == {"seed": 1234, "temperature": 0.7, "num_predict": 24}


def test_every_attempt_sends_its_own_seed(fake: FakeOllama) -> None:
    adapter = ollama(fake)
    for seed in (1, 2, 3):
        assert adapter.generate(make_request(seed=seed)).ok
    adapter.close()
    assert [r.body["options"]["seed"] for r in fake.chat_requests()] == [1, 2, 3]


def test_default_base_url_is_the_local_ollama() -> None:
    adapter = OllamaAdapter(AdapterConfig(name="ollama", model="m"))
    assert adapter.identity()["base_url"] == DEFAULT_BASE_URL
    adapter.close()


def test_check_passes_for_a_pulled_model_and_accepts_the_latest_tag(fake: FakeOllama) -> None:
    fake.models = ("llama3:latest", "qwen2.5:7b")
    ollama(fake).check()
    ollama(fake, model="llama3").check()
    assert [r.path for r in fake.requests] == ["/api/tags", "/api/tags"]


def test_check_names_the_missing_model_and_the_ones_that_exist(fake: FakeOllama) -> None:
    with pytest.raises(LsrbUsageError) as info:
        ollama(fake, model="mistral:7b").check()
    message = str(info.value)
    assert "'mistral:7b'" in message
    assert "smollm2:135m" in message and "qwen2.5:7b" in message
    assert "\n" not in message


def test_check_without_a_model_lists_the_available_ones(fake: FakeOllama) -> None:
    with pytest.raises(LsrbUsageError, match=r"--lsrb-model is required.*qwen2\.5:7b"):
        ollama(fake, model="").check()


def test_check_against_nothing_listening_is_one_usage_sentence() -> None:
    with FakeOllama() as gone:
        url = gone.url
    with pytest.raises(LsrbUsageError, match=r"--lsrb-base-url: no Ollama API at http://127\.0\.0\.1"):
        OllamaAdapter(quick_config("ollama", url)).check()


def test_unknown_model_at_chat_time_is_a_client_error_and_not_retried(fake: FakeOllama) -> None:
    result = ollama(fake, model="gone:1b").generate(make_request())
    assert (result.error_kind, result.error_domain) == ("client_error", "provider")
    assert "not found" in (result.error_message or "")
    assert len(fake.chat_requests()) == 1


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("busy_503", "server_error"),
        ("rate_429_ms", "rate_limit"),
        ("server_500", "server_error"),
        ("malformed", "bad_response"),
        ("truncated", "bad_response"),
        ("missing_field", "bad_response"),
        ("cut_body", "connection"),
        ("drop", "connection"),
    ],
)
def test_a_transient_fault_is_retried_then_succeeds(fake: FakeOllama, fault: str, kind: str) -> None:
    fake.queue([fault])
    result = ollama(fake).generate(make_request())
    assert result.ok, result.error_message
    assert result.http_attempts == 2
    assert len(fake.chat_requests()) == 2


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("busy_503", "server_error"),
        ("rate_429_ms", "rate_limit"),
        ("server_500", "server_error"),
        ("malformed", "bad_response"),
        ("truncated", "bad_response"),
        ("missing_field", "bad_response"),
        ("cut_body", "connection"),
        ("drop", "connection"),
    ],
)
def test_a_persistent_fault_ends_classified_after_the_retry_cap(
    fake: FakeOllama, fault: str, kind: str
) -> None:
    fake.queue([fault] * 10)
    result = ollama(fake, max_retries=2).generate(make_request())
    assert result.error_kind == kind
    assert result.error_domain == generation_domain(kind)
    assert result.http_attempts == 3  # one try + two retries, no more
    assert len(fake.chat_requests()) == 3
    assert result.text == ""


def test_a_slow_answer_past_the_timeout_is_a_timeout_and_is_retried(fake: FakeOllama) -> None:
    fake.slow_s = 1.0
    fake.queue(["slow"])
    result = ollama(fake, timeout_s=0.2).generate(make_request())
    assert result.ok and result.http_attempts == 2
    fake.queue(["slow", "slow"])
    failed = ollama(fake, timeout_s=0.2, max_retries=1).generate(make_request())
    assert (failed.error_kind, failed.error_domain) == ("timeout", "transport")


def test_a_slow_answer_within_the_timeout_is_just_slow(fake: FakeOllama) -> None:
    fake.slow_s = 0.2
    fake.queue(["slow"])
    result = ollama(fake, timeout_s=5.0).generate(make_request())
    assert result.ok and result.http_attempts == 1


def test_empty_output_is_classified_and_not_retried(fake: FakeOllama) -> None:
    fake.queue(["empty"])
    result = ollama(fake).generate(make_request())
    assert (result.error_kind, result.error_domain) == ("empty_output", "model_output")
    assert len(fake.chat_requests()) == 1


def test_retry_after_is_honoured(fake: FakeOllama, caplog: pytest.LogCaptureFixture) -> None:
    """The planned wait (logged before sleeping) is at least what the server asked for."""
    fake.retry_after = "1"
    fake.queue(["rate_429"])
    with caplog.at_level(logging.INFO, logger="pytest_lsrb.http"):
        result = ollama(fake).generate(make_request())
    assert result.ok and result.http_attempts == 2
    waits = [float(m) for m in re.findall(r"retry 1/3 in ([0-9.]+)s", caplog.text)]
    assert len(waits) == 1 and 1.0 <= waits[0] <= 1.1


def test_retry_after_ms_is_honoured(fake: FakeOllama, caplog: pytest.LogCaptureFixture) -> None:
    fake.retry_after_ms = "40"
    fake.queue(["rate_429_ms"])
    with caplog.at_level(logging.INFO, logger="pytest_lsrb.http"):
        assert ollama(fake, backoff_base_s=0.004, backoff_max_s=0.004).generate(make_request()).ok
    waits = [float(m) for m in re.findall(r"retry 1/3 in ([0-9.]+)s", caplog.text)]
    assert len(waits) == 1 and 0.04 <= waits[0] <= 0.044 + 0.005  # longer than the 2-4 ms backoff


@pytest.mark.parametrize(
    ("header", "value"),
    [("retry_after_ms", "0"), ("retry_after", "0"), ("retry_after", "Thu, 01 Jan 1970 00:00:00 GMT")],
)
def test_a_hint_to_retry_at_once_never_shortens_the_backoff(
    fake: FakeOllama, caplog: pytest.LogCaptureFixture, header: str, value: str
) -> None:
    """Issue #46: `Retry-After: 0`, `retry-after-ms: 0` or a past date turned the backoff off (101
    requests an attempt in 3 s). The server's hint may lengthen a wait, never shorten it."""
    setattr(fake, header, value)
    fake.queue(["rate_429_ms" if header == "retry_after_ms" else "rate_429"] * 3)
    with caplog.at_level(logging.INFO, logger="pytest_lsrb.http"):
        assert ollama(fake, backoff_base_s=0.1, backoff_max_s=0.4).generate(make_request()).ok
    waits = [float(m) for m in re.findall(r"retry \d/3 in ([0-9.]+)s", caplog.text)]
    assert len(waits) == 3 and len(fake.chat_requests()) == 4
    for n, wait in enumerate(waits):  # the floor: half to all of min(0.4, 0.1 x 2^n)
        assert min(0.4, 0.1 * 2**n) / 2 <= wait <= min(0.4, 0.1 * 2**n)


@pytest.mark.parametrize(("fault", "kind"), [("quota_429", "quota"), ("auth_401", "auth")])
def test_quota_and_auth_are_never_retried_and_stop_the_endpoint(
    fake: FakeOllama, fault: str, kind: str
) -> None:
    adapter = ollama(fake)
    fake.queue([fault])
    first = adapter.generate(make_request(seed=1))
    assert first.error_kind == kind and first.http_attempts == 1
    later = adapter.generate(make_request(seed=2))
    assert later.error_kind == kind and later.http_attempts == 0
    assert "stopped" in (later.error_message or "")
    assert len(fake.chat_requests()) == 1  # nothing more was sent


def test_a_fatal_refusal_wakes_threads_waiting_to_retry(fake: FakeOllama) -> None:
    """A call sleeping in backoff returns as soon as another thread meets a quota refusal."""
    adapter = ollama(fake, backoff_base_s=30.0, backoff_max_s=30.0)
    fake.queue(["server_500"])
    results = []
    waiter = threading.Thread(target=lambda: results.append(adapter.generate(make_request(seed=1))))
    waiter.start()
    while len(fake.chat_requests()) < 1:
        threading.Event().wait(0.01)
    fake.queue(["quota_429"])
    assert adapter.generate(make_request(seed=2)).error_kind == "quota"
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert results[0].error_kind == "quota"  # redone on resume, like every refused attempt
    assert len(fake.chat_requests()) == 2


def test_many_threads_share_one_client(fake: FakeOllama) -> None:
    adapter = ollama(fake, concurrency=8)
    results = []
    lock = threading.Lock()

    def work(seed: int) -> None:
        r = adapter.generate(make_request(seed=seed, temperature=0.5))
        with lock:
            results.append(r)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    adapter.close()
    assert len(results) == 32 and all(r.ok for r in results)
    assert sorted(r.body["options"]["seed"] for r in fake.chat_requests()) == list(range(32))


def test_close_is_idempotent_and_later_calls_send_nothing(fake: FakeOllama) -> None:
    adapter = ollama(fake)
    adapter.close()
    adapter.close()
    result = adapter.generate(make_request())
    assert result.error_kind == "connection" and result.http_attempts == 0
    assert fake.chat_requests() == []
