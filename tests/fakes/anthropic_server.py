"""A local HTTP server that speaks Anthropic's Messages API, for the example adapter's tests (no
Anthropic endpoint is reachable here): `POST /v1/messages` as the API documents it
(https://docs.anthropic.com/en/api/messages, /en/api/errors).

It checks what the real API checks before answering: the key in `x-api-key` (401
`authentication_error` otherwise), an `anthropic-version` header (400), a JSON body with `model`,
a positive whole `max_tokens` and `messages` of roles `user`/`assistant` only (a `system` role
there is a 400 `invalid_request_error`: the system prompt is the top-level `system`). Errors have
the API's shape, `{"type": "error", "error": {"type": ..., "message": ...}}`. An answer is a
`message` with text blocks, `stop_reason`, the model that answered and `usage` (input and output
tokens, counted here by words).

`script` injects faults in order, one per request: `overloaded_529` (Anthropic's overload, with
`retry-after: 0`), `echo_key` (an answer whose text and model hold the key, as a broken proxy's
might). Every request is recorded (path, headers, body).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakes.local_server import LocalServer

FAULTS = ("overloaded_529", "echo_key")


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class FakeAnthropic(LocalServer):
    def __init__(
        self,
        key: str,
        answer: Callable[[dict[str, Any]], str] = lambda body: "simp",
        script: Iterable[str] = (),
    ) -> None:
        self.key = key
        self.answer = answer
        self.script: deque[str] = deque(script)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, reply, headers = fake.handle(self.path, dict(self.headers.items()), raw)
                data = json.dumps(reply).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any, dict[str, str]]:
        lower = {k.lower(): v for k, v in headers.items()}
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self.lock:
            self.requests.append({"path": path, "headers": lower, "body": body})
            fault = self.script.popleft() if self.script else None
        if path != "/v1/messages":
            return 404, _error("not_found_error", f"no route {path}"), {}
        if lower.get("x-api-key") != self.key:
            return 401, _error("authentication_error", "invalid x-api-key"), {}
        if not lower.get("anthropic-version"):
            return 400, _error("invalid_request_error", "anthropic-version: header is required"), {}
        problem = _invalid(body)
        if problem is not None:
            return 400, _error("invalid_request_error", problem), {}
        if fault == "overloaded_529":
            return 529, _error("overloaded_error", "Overloaded"), {"retry-after": "0"}
        text = self.answer(body)
        model = body["model"]
        if fault == "echo_key":
            text, model = f"{text} -- your key is {self.key}", f"{model}-{self.key}"
        prompt_words = sum(len(str(m["content"]).split()) for m in body["messages"])
        prompt_words += len(str(body.get("system", "")).split())
        return (
            200,
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": f"{model}-served",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": prompt_words, "output_tokens": len(text.split())},
            },
            {},
        )


def _invalid(body: Any) -> str | None:
    """What the Messages API would refuse in `body` (None: a valid request)."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    tokens = body.get("max_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    if "system" in body and not isinstance(body["system"], str):
        return "system: Input should be a valid string"
    return None
