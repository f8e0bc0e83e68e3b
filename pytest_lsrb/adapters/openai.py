"""OpenAI-compatible chat completions: OpenAI, vLLM, llama.cpp's server, Ollama's `/v1`.

`POST {base}/v1/chat/completions` with `seed`, `temperature` (none when the run asks for the
provider's default) and the token limit under the field
the server wants (`--lsrb-max-tokens-field`: `max_tokens`, or `max_completion_tokens` for newer
OpenAI models). The base URL may be given with or without its trailing `/v1`. The API key comes
from the environment variable named by `--lsrb-api-key-env` and is sent as a Bearer token.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import httpx

from pytest_lsrb.adapters.base import (
    MAX_FOUND_CONCURRENCY,
    Adapter,
    AdapterConfig,
    GenerationRequest,
    GenerationResult,
)
from pytest_lsrb.adapters.concurrency import ADMISSION, slot_share, xdist_place
from pytest_lsrb.adapters.http import (
    HttpEndpoint,
    Reply,
    ResponseError,
    api_key_from_env,
    bad_response,
    error_in_success,
    reply_string,
    shown_models,
    to_result,
    token_usage,
)
from pytest_lsrb.adapters.retry import RetryPolicy
from pytest_lsrb.core.errors import LsrbUsageError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_CONCURRENCY = 8

_USAGE_FIELDS = {"prompt_tokens": "prompt_tokens", "completion_tokens": "completion_tokens"}


def api_base(url: str) -> str:
    """`http://host:8000` and `http://host:8000/v1/` both mean `http://host:8000/v1`."""
    url = url.strip().rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


def parse_chat_completion(data: Any) -> Reply:
    if not isinstance(data, dict):
        raise bad_response(f"expected a JSON object from chat/completions, got {type(data).__name__}")
    if "error" in data:
        raise error_in_success("chat/completions", data["error"])
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad_response("the chat/completions answer has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise bad_response("the chat/completions answer has no choices[0].message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise bad_response("choices[0].message.content is not a string")
    usage = data.get("usage")
    counts = token_usage(usage, _USAGE_FIELDS) if isinstance(usage, dict) else {}
    if not content or not content.strip():
        raise ResponseError(
            "empty_output",
            f"the model returned no text (finish_reason: {choice.get('finish_reason', 'unknown')})",
        )
    return Reply(
        text=content,
        usage=counts,
        finish_reason=reply_string(choice, "finish_reason"),
        served_model=reply_string(data, "model"),
        system_fingerprint=reply_string(data, "system_fingerprint"),
    )


def _total_slots(data: Any) -> int | None:
    value = data.get("total_slots") if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _slot_count(data: Any) -> int | None:
    return len(data) if isinstance(data, list) and data else None


def parse_models(data: Any) -> list[tuple[str, str]]:
    """(id, owned_by) of each model a /v1/models answer lists."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise bad_response("the models answer has no data list")
    out: list[tuple[str, str]] = []
    for entry in data["data"]:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            out.append((entry["id"], str(entry.get("owned_by", ""))))
    return out


class OpenAIAdapter(Adapter):
    name = "openai"
    default_concurrency = DEFAULT_CONCURRENCY
    admits_budget = True  # a run's budget is asked per request, under the slot permit

    def __init__(self, config: AdapterConfig) -> None:
        self.model = config.model
        self.allow_model_alias = config.allow_model_alias
        self.api_key_env = config.api_key_env
        self.max_tokens_field = config.max_tokens_field or "max_tokens"
        self.http = HttpEndpoint(
            api_base(config.base_url or DEFAULT_BASE_URL),
            timeout_s=config.timeout_s,
            # connections open lazily: room for a server that reports more slots than the default
            pool_size=(config.concurrency or MAX_FOUND_CONCURRENCY) + 2,
            in_flight=config.concurrency or DEFAULT_CONCURRENCY,
            retry=RetryPolicy(
                config.max_retries, config.backoff_base_s, config.backoff_max_s, total_s=config.retry_time_s
            ),
            outage_dir=config.outage_dir,
            api_key=api_key_from_env(config.api_key_env),
        )
        self._asked_concurrency = config.concurrency  # None: follow the server's slots up too
        self._slots: int | None = None
        self._slots_asked = False
        self._slots_lock = threading.Lock()

    def check(self) -> None:
        """Catch a wrong URL, key or model before the run; servers without /models are fine."""
        self._check_model()
        self.served_slots()

    def _check_model(self) -> None:
        url = self.http.shown_url
        outcome = self.http.call(
            "GET",
            "/models",
            None,
            parse=parse_models,
            seed=0,
            max_retries=1,
            watch_outage=False,
            timeout_s=self.http.check_timeout(),
        )
        failure = outcome.failure
        if failure is not None:
            if failure.kind in ("connection", "timeout"):
                raise LsrbUsageError(f"--lsrb-base-url: cannot reach {url} ({failure.message}).")
            if failure.kind == "auth":
                if self.api_key_env:
                    raise LsrbUsageError(
                        f"--lsrb-api-key-env: {url} refused the key in ${self.api_key_env} "
                        f"({failure.message})."
                    )
                raise LsrbUsageError(
                    f"--lsrb-api-key-env: {url} wants an API key ({failure.message}); name the "
                    "environment variable that holds it with --lsrb-api-key-env."
                )
            if failure.kind == "quota":
                raise LsrbUsageError(f"{url} refused: the account is out of quota ({failure.message}).")
            # No usable /models (404, 405, an odd body): nothing to check against.
            if not self.model:
                raise LsrbUsageError("--lsrb-model is required with --lsrb-adapter=openai.")
            return
        listed = outcome.value or []
        ids = [model_id for model_id, _ in listed]
        if not self.model:
            raise LsrbUsageError(
                f"--lsrb-model is required with --lsrb-adapter=openai; {url} serves: {shown_models(ids)}."
            )
        if self.model in ids or not listed or self.allow_model_alias:
            return
        # (llama.cpp's server would answer any name with its one model: a run labelled with a
        # model that never answered is the mistake this stops)
        raise LsrbUsageError(
            f"--lsrb-model: {url} does not serve '{self.model}' (it serves: {shown_models(ids)}); ask "
            "for one of those, or pass --lsrb-allow-model-alias if it answers that name on purpose."
        )

    def payload(self, request: GenerationRequest) -> dict[str, Any]:
        s = request.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "seed": request.seed,
            self.max_tokens_field: s.max_tokens,
            "stream": False,
        }
        if s.temperature is not None:
            body["temperature"] = s.temperature
        if s.top_p is not None:
            body["top_p"] = s.top_p
        if s.stop:
            body["stop"] = list(s.stop)
        return body

    def served_slots(self) -> int | None:
        """How many requests the server says it decodes at once (llama.cpp: `GET /props`
        `total_slots`, else the length of `GET /slots`), asked once; None when it does not say.
        The in-flight limit is capped at this process's share of them (all of them serially, about
        1/N under `-n N`), so surplus attempts wait here, not in the server's queue."""
        with self._slots_lock:
            if self._slots_asked:
                return self._slots
            root = self.http.base_url.removesuffix("/v1")
            for path, read in (("/props", _total_slots), ("/slots", _slot_count)):
                try:
                    response = self.http.client.get(root + path, timeout=5.0)
                    slots = read(response.json()) if response.status_code == 200 else None
                except (httpx.HTTPError, ValueError, RuntimeError):
                    slots = None
                if slots is not None:
                    self._slots = slots
                    share = slot_share(slots, *xdist_place())  # -n N: the workers share the slots
                    if self._asked_concurrency is None:  # see base.in_flight
                        self.http.limit.fit(min(share, MAX_FOUND_CONCURRENCY))
                    else:
                        self.http.limit.cap(share)
                    break
            # only now: a thread that finds it set must find the cap in place (else it sends
            # past a slot count being asked for)
            self._slots_asked = True
            return self._slots

    def generate(self, request: GenerationRequest) -> GenerationResult:
        if not self._slots_asked:
            self.served_slots()
        outcome = self.http.call(
            "POST",
            "/chat/completions",
            self.payload(request),
            parse=parse_chat_completion,
            seed=request.seed,
            admission=ADMISSION.get(),
        )
        return to_result(outcome)

    def identity(self) -> Mapping[str, Any]:
        return {
            "adapter": self.name,
            "model": self.model,
            "base_url": self.http.shown_url,
            "max_tokens_field": self.max_tokens_field,
        }

    def interrupt(self) -> None:
        self.http.interrupt()

    def close(self) -> None:
        self.http.close()
