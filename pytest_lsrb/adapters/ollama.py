"""Ollama's native REST API: `POST /api/chat` with `stream: false`, `GET /api/tags`.

Every attempt sends its own seed in `options.seed`, with `num_predict` and `temperature` (none when
the run asks for the provider's default).
https://github.com/ollama/ollama/blob/main/docs/api.md
"""

from __future__ import annotations

from typing import Any

from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest
from pytest_lsrb.adapters.http import (
    Reply,
    ResponseError,
    bad_response,
    error_in_success,
    reply_string,
    shown_models,
    token_usage,
)
from pytest_lsrb.adapters.http_adapter import HttpAdapter
from pytest_lsrb.core.errors import LsrbUsageError

DEFAULT_BASE_URL = "http://localhost:11434"
DEFAULT_CONCURRENCY = 8  # Ollama queues what it cannot run (OLLAMA_NUM_PARALLEL) and 503s beyond

_USAGE_FIELDS = {"prompt_eval_count": "prompt_tokens", "eval_count": "completion_tokens"}


def parse_chat(data: Any) -> Reply:
    """The assistant's text and token counts from a non-streamed /api/chat answer."""
    if not isinstance(data, dict):
        raise bad_response(f"expected a JSON object from /api/chat, got {type(data).__name__}")
    if "error" in data:
        raise error_in_success("/api/chat", data["error"])
    message = data.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise bad_response("the /api/chat answer has no message.content string")
    text: str = message["content"]
    if not text.strip():
        raise ResponseError(
            "empty_output", f"the model returned no text (done_reason: {data.get('done_reason', 'unknown')})"
        )
    # Ollama names no build fingerprint; `model` is the tag that answered (e.g. qwen2.5:7b).
    return Reply(
        text=text,
        usage=token_usage(data, _USAGE_FIELDS),
        finish_reason=reply_string(data, "done_reason"),
        served_model=reply_string(data, "model"),
    )


def parse_tags(data: Any) -> list[str]:
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise bad_response("the /api/tags answer has no models list")
    names: list[str] = []
    for entry in data["models"]:
        if isinstance(entry, dict):
            name = entry.get("name") or entry.get("model")
            if isinstance(name, str):
                names.append(name)
    return names


def model_available(model: str, names: list[str]) -> bool:
    """Ollama resolves a bare name to its `:latest` tag."""
    return model in names or (":" not in model and f"{model}:latest" in names)


class OllamaAdapter(HttpAdapter):
    name = "ollama"
    default_base_url = DEFAULT_BASE_URL
    generate_path = "/api/chat"
    default_concurrency = DEFAULT_CONCURRENCY
    # Ollama itself needs no key; a proxy or hosted Ollama in front of it may (--lsrb-api-key-env,
    # sent as a Bearer token by `HttpAdapter`).

    def __init__(self, config: AdapterConfig) -> None:
        super().__init__(config)
        self.allow_model_alias = config.allow_model_alias

    def check(self) -> None:
        url = self.http.shown_url
        outcome = self.http.call(
            "GET",
            "/api/tags",
            None,
            parse=parse_tags,
            seed=0,
            max_retries=1,
            watch_outage=False,
            timeout_s=self.http.check_timeout(),
        )
        if outcome.failure is not None:
            failure = outcome.failure
            if failure.kind == "auth":
                raise LsrbUsageError(
                    f"--lsrb-api-key-env: Ollama at {url} refused the request ({failure.message})."
                )
            raise LsrbUsageError(
                f"--lsrb-base-url: no Ollama API at {url} ({failure.kind}: {failure.message}); "
                "start it with `ollama serve` or pass the right --lsrb-base-url."
            )
        names = outcome.value or []
        if not self.model:
            raise LsrbUsageError(
                f"--lsrb-model is required with --lsrb-adapter=ollama; {url} has: {shown_models(names)}."
            )
        if not model_available(self.model, names) and not self.allow_model_alias:
            raise LsrbUsageError(
                f"--lsrb-model: Ollama at {url} has no model '{self.model}' (it has: {shown_models(names)}); "
                f"run `ollama pull {self.model}`, pick one of those, or pass --lsrb-allow-model-alias "
                "if a proxy in front of it answers that name on purpose."
            )

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        s = request.sampling
        options: dict[str, Any] = {"seed": request.seed, "num_predict": s.max_tokens}
        if s.temperature is not None:
            options["temperature"] = s.temperature
        if s.top_p is not None:
            options["top_p"] = s.top_p
        if s.stop:
            options["stop"] = list(s.stop)
        return {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "stream": False,
            "options": options,
        }

    def parse_reply(self, data: Any) -> Reply:
        return parse_chat(data)
