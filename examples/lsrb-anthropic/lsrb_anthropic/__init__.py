"""`--lsrb-adapter anthropic`: Anthropic's Messages API (`POST /v1/messages`), on pytest-lsrb's
`HttpAdapter` (retries, backoff, timeouts, body limits, the run's budget, slot order and key
redaction are its). The key, from the variable `--lsrb-api-key-env` names (else
ANTHROPIC_API_KEY, as Anthropic's own SDK reads it), goes in `x-api-key`.
https://docs.anthropic.com/en/api/messages
"""

from __future__ import annotations

from typing import Any, ClassVar

from pytest_lsrb import (
    GenerationRequest,
    HttpAdapter,
    Reply,
    ResponseError,
    bad_response,
    error_in_success,
    reply_string,
    token_usage,
)

# usage's names -> pytest-lsrb's
USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}


class AnthropicAdapter(HttpAdapter):
    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    generate_path = "/v1/messages"
    auth_header, auth_scheme = "x-api-key", None  # the key alone, in its own header
    api_key_env = "ANTHROPIC_API_KEY"  # when --lsrb-api-key-env names no variable
    headers: ClassVar[dict[str, str]] = {"anthropic-version": "2023-06-01"}
    default_concurrency = 4

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        """System messages go in `system`; the API takes no seed."""
        sampling = request.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": sampling.max_tokens,
            "messages": [
                {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
            ],
        }
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        if system:
            body["system"] = system
        if sampling.temperature is not None:
            body["temperature"] = sampling.temperature
        if sampling.top_p is not None:
            body["top_p"] = sampling.top_p
        if sampling.stop:
            body["stop_sequences"] = list(sampling.stop)
        return body

    def parse_reply(self, data: Any) -> Reply:
        """The text blocks of a `message`, its usage, `stop_reason` and the model that answered."""
        if not isinstance(data, dict):
            raise bad_response(f"expected a JSON object from /v1/messages, got {type(data).__name__}")
        if data.get("type") == "error":
            raise error_in_success("/v1/messages", data.get("error"))
        blocks = data.get("content")
        if data.get("type") != "message" or not isinstance(blocks, list):
            raise bad_response("the /v1/messages answer is no message with a content list")
        text = "".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
        if not text.strip():
            raise ResponseError(
                "empty_output", f"the model wrote no text (stop_reason: {data.get('stop_reason')})"
            )
        usage = data.get("usage")
        return Reply(
            text=text,
            usage=token_usage(usage, USAGE) if isinstance(usage, dict) else {},
            finish_reason=reply_string(data, "stop_reason"),
            served_model=reply_string(data, "model"),
        )
