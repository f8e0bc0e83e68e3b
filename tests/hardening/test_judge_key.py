"""Issue #27 item 1, the judge: with the LLM judge on its own server, that server never receives
the key of the model under test (it got it on 3 of 3 requests); `--lsrb-sr-judge-api-key-env`
gives the judge its own key, checked at start like the model's. Two local OpenAI-compatible
servers (tests/fakes/ollama_server.py) stand for the model's and the judge's."""

from __future__ import annotations

from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from hostile_kit import assert_one_sentence

from pytest_lsrb.adapters.base import GenerationRequest, Message
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.options import SrOptions
from pytest_lsrb.srbench.scoring.judge import (
    JUDGE_SAMPLING,
    check_judge_options,
    judge_adapter,
    judge_key_env,
)

MODEL_KEY = "sk-model-canary-0c4e8a1f7d"
JUDGE_KEY = "sk-judge-canary-9b3f2e6d1a"


def options(model_url: str, **judge: Any) -> dict[str, Any]:
    return {
        "adapter": "openai",
        "model": "qwen2.5:7b",
        "base_url": model_url,
        "api_key_env": "LSRB_TEST_MODEL_KEY",
        "sr_judge": "llm",
        "sr_judge_model": "qwen2.5:7b",
        **judge,
    }


def _never(request: GenerationRequest) -> str:
    raise AssertionError("the mock judge was asked, where a server's judge was configured")


def ask(values: dict[str, Any]) -> None:
    sr = SrOptions.read(values)
    check_judge_options(sr, values)
    # The judge here is a real server's (the fake Ollama): the mock's answers are never asked for.
    adapter = judge_adapter(sr, values, run_adapter=None, mock_answers=_never)
    request = GenerationRequest(
        messages=(Message("user", "same? yes or no"),), seed=1, sampling=JUDGE_SAMPLING
    )
    for _ in range(3):
        result = adapter.generate(request)
        assert result.ok, result


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LSRB_TEST_MODEL_KEY", MODEL_KEY)
    monkeypatch.setenv("LSRB_TEST_JUDGE_KEY", JUDGE_KEY)


def test_a_judge_elsewhere_never_receives_the_models_key() -> None:
    with FakeOllama() as model, FakeOllama() as judge:
        ask(options(f"{model.url}/v1", sr_judge_base_url=f"{judge.url}/v1"))
        sent = judge.chat_requests()
    assert len(sent) == 3
    assert all("Authorization" not in r.headers for r in sent)  # no key rather than the wrong one


def test_a_judge_elsewhere_gets_its_own_key() -> None:
    with FakeOllama() as model, FakeOllama(require_key=JUDGE_KEY) as judge:
        ask(
            options(
                f"{model.url}/v1",
                sr_judge_base_url=f"{judge.url}/v1",
                sr_judge_api_key_env="LSRB_TEST_JUDGE_KEY",
            )
        )
        sent = judge.chat_requests()
        assert model.requests == []
    assert len(sent) == 3 and all(r.headers.get("Authorization") == f"Bearer {JUDGE_KEY}" for r in sent)


def test_a_judge_on_the_models_own_server_uses_the_models_key() -> None:
    with FakeOllama(require_key=MODEL_KEY) as model:
        ask(options(f"{model.url}/v1"))
        sent = model.chat_requests()
    assert len(sent) == 3 and all(r.headers.get("Authorization") == f"Bearer {MODEL_KEY}" for r in sent)


@pytest.mark.parametrize(
    ("model_url", "judge_url", "same"),
    [
        ("http://h:8000/v1", "http://H:8000/other", True),
        ("https://api.example.com/v1", "https://api.example.com:443/v1", True),
        ("http://h:8000/v1", "http://h:8001/v1", False),
        ("http://h/v1", "https://h/v1", False),
        ("http://h:8000/v1", "http://h.evil:8000/v1", False),
    ],
)
def test_the_models_key_follows_the_origin_only(model_url: str, judge_url: str, same: bool) -> None:
    values = options(model_url, sr_judge_base_url=judge_url)
    assert judge_key_env(SrOptions.read(values), values) == ("LSRB_TEST_MODEL_KEY" if same else None)


@pytest.mark.parametrize("bad", ["sk-judge\r", "sk-\njudge", "sk-judgé", ""])
def test_a_judge_key_that_cannot_be_sent_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("LSRB_TEST_JUDGE_KEY", bad)
    values = options("http://127.0.0.1:9/v1", sr_judge_api_key_env="LSRB_TEST_JUDGE_KEY")
    with pytest.raises(LsrbUsageError) as err:
        check_judge_options(SrOptions.read(values), values)
    assert_one_sentence(str(err.value), "--lsrb-sr-judge-api-key-env")
    assert "LSRB_TEST_JUDGE_KEY" in str(err.value) and (not bad or bad[:4] not in str(err.value))
