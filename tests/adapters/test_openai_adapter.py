"""The OpenAI-compatible adapter against Ollama's own `/v1` API (served by the local fake)."""

from __future__ import annotations

import pytest
from fakes.adapter_kit import make_request, quick_config
from fakes.ollama_server import FakeOllama, answer_text

from pytest_lsrb.adapters import create_adapter
from pytest_lsrb.adapters.http import ResponseError
from pytest_lsrb.adapters.openai import OpenAIAdapter, api_base, parse_chat_completion
from pytest_lsrb.core.errors import LsrbUsageError

KEY_ENV = "LSRB_TEST_OPENAI_KEY"


def openai(fake: FakeOllama, **overrides: object) -> OpenAIAdapter:
    adapter = create_adapter(quick_config("openai", fake.url, **overrides))
    assert isinstance(adapter, OpenAIAdapter)
    return adapter


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://h:8000", "http://h:8000/v1"),
        ("http://h:8000/", "http://h:8000/v1"),
        ("http://h:8000/v1", "http://h:8000/v1"),
        ("http://h:8000/v1/", "http://h:8000/v1"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
    ],
)
def test_the_base_url_works_with_or_without_v1(given: str, expected: str) -> None:
    assert api_base(given) == expected


def test_chat_completion_sends_seed_temperature_and_max_tokens(fake: FakeOllama) -> None:
    adapter = openai(fake, base_url=fake.url + "/v1/")
    request = make_request(seed=99, temperature=0.8, max_tokens=12)
    result = adapter.generate(request)
    adapter.close()
    assert result.ok
    msgs = [{"role": m.role, "content": m.content} for m in request.messages]
    assert result.text == answer_text(msgs, 99, 0.8)
    (sent,) = fake.chat_requests()
    assert sent.path == "/v1/chat/completions"
    assert sent.body == {
        "model": "qwen2.5:7b",
        "messages": msgs,
        "seed": 99,
        "temperature": 0.8,
        "max_tokens": 12,
        "stream": False,
    }
    assert "Authorization" not in sent.headers


def test_the_token_limit_field_is_configurable(fake: FakeOllama) -> None:
    adapter = openai(fake, max_tokens_field="max_completion_tokens")
    assert adapter.generate(make_request(max_tokens=5)).ok
    (sent,) = fake.chat_requests()
    assert sent.body["max_completion_tokens"] == 5 and "max_tokens" not in sent.body


def test_the_key_comes_from_the_named_variable_as_a_bearer_token(
    fake: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    fake.require_key = "sk-test-123"
    adapter = openai(fake, api_key_env=KEY_ENV)
    adapter.check()
    assert adapter.generate(make_request()).ok
    assert all(r.headers["Authorization"] == "Bearer sk-test-123" for r in fake.requests)
    assert "sk-test-123" not in repr(adapter.identity())


def test_a_wrong_key_fails_the_check_naming_the_variable_not_the_key(
    fake: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-wrong-456")
    fake.require_key = "sk-right"
    with pytest.raises(LsrbUsageError) as info:
        openai(fake, api_key_env=KEY_ENV).check()
    assert f"${KEY_ENV}" in str(info.value)
    assert "sk-wrong-456" not in str(info.value)


def test_no_key_where_one_is_needed_says_which_option_to_use(fake: FakeOllama) -> None:
    fake.require_key = "sk-right"
    with pytest.raises(LsrbUsageError, match="--lsrb-api-key-env"):
        openai(fake).check()


def test_check_lists_the_served_models_when_ours_is_missing(fake: FakeOllama) -> None:
    with pytest.raises(LsrbUsageError, match=r"does not serve 'gpt-9'.*qwen2\.5:7b"):
        openai(fake, model="gpt-9").check()
    openai(fake).check()


def test_check_passes_against_a_server_without_a_models_route(fake: FakeOllama) -> None:
    fake.serve_models = False
    openai(fake, model="anything").check()
    # then it asks how many requests the server decodes at once (llama.cpp's /props, /slots)
    assert [r.path for r in fake.requests] == ["/v1/models", "/props", "/slots"]


def test_check_requires_a_model(fake: FakeOllama) -> None:
    with pytest.raises(LsrbUsageError, match="--lsrb-model is required"):
        openai(fake, model="").check()


def test_check_against_nothing_listening_is_one_usage_sentence() -> None:
    with FakeOllama() as gone:
        url = gone.url
    with pytest.raises(LsrbUsageError, match="--lsrb-base-url: cannot reach"):
        OpenAIAdapter(quick_config("openai", url)).check()


@pytest.mark.parametrize(("fault", "kind"), [("quota_429", "quota"), ("auth_401", "auth")])
def test_quota_and_auth_stop_at_once(fake: FakeOllama, fault: str, kind: str) -> None:
    adapter = openai(fake)
    fake.queue([fault])
    assert adapter.generate(make_request(seed=1)).error_kind == kind
    assert adapter.generate(make_request(seed=2)).http_attempts == 0
    assert len(fake.chat_requests()) == 1


def test_transient_faults_are_retried_through_v1(fake: FakeOllama) -> None:
    fake.queue(["busy_503", "rate_429_ms", "truncated"])
    result = openai(fake, max_retries=4).generate(make_request())
    assert result.ok and result.http_attempts == 4


def test_empty_and_null_content_are_empty_output() -> None:
    for content in ("", "  \n", None):
        body = {
            "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "length"}]
        }
        with pytest.raises(ResponseError) as info:
            parse_chat_completion(body)
        assert info.value.kind == "empty_output"


@pytest.mark.parametrize(
    "body",
    [[], {"choices": []}, {"choices": [{}]}, {"choices": [{"message": {"content": 3}}]}, {"error": "x"}],
)
def test_bodies_missing_the_promised_fields_are_bad_responses(body: object) -> None:
    with pytest.raises(ResponseError) as info:
        parse_chat_completion(body)
    # `200 {"error": ...}` is the server failing with the wrong status; both are retried.
    assert info.value.kind == (
        "server_error" if isinstance(body, dict) and "error" in body else "bad_response"
    )


@pytest.mark.parametrize("name", ["openai", "ollama"])
def test_the_check_of_a_server_that_never_answers_does_not_wait_out_the_run_timeout(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wedged server (it accepts, and never answers) held the start for two whole
    `--lsrb-timeout`s (240 s by default) with nothing printed; the model list is asked with
    the check's own short timeout, then one sentence."""
    import socket

    from pytest_lsrb.adapters import http

    monkeypatch.setattr(http, "CHECK_TIMEOUT_S", 0.3)
    with socket.socket() as wedged:
        wedged.bind(("127.0.0.1", 0))
        wedged.listen(8)  # connections complete in the backlog; nothing reads or answers
        url = f"http://127.0.0.1:{wedged.getsockname()[1]}"
        adapter = create_adapter(quick_config(name, url, timeout_s=3.0))
        try:
            with pytest.raises(LsrbUsageError) as refused:
                adapter.check()
        finally:
            adapter.close()
    assert "cannot reach" in str(refused.value) or "no answer" in str(refused.value)
    assert "within 0.3s" in str(refused.value), str(refused.value)
