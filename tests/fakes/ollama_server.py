"""A local HTTP server that speaks Ollama's API, for tests and benches (no Ollama can run here).

Native API: `GET /api/tags`, `POST /api/chat` (non-streamed). Ollama's OpenAI-compatible API:
`GET /v1/models`, `POST /v1/chat/completions`. Answers are deterministic in (messages, seed,
temperature). Error shapes follow Ollama's: `{"error": "..."}` with 404 for an unknown model and
503 when its queue is full; a proxy in front of it may add 429 with `Retry-After`; an OpenAI-style
gateway answers 401 and 429 `insufficient_quota` with `{"error": {"message", "type", "code"}}`.

Faults are injected per chat request, either scripted (`script`, consumed in order) or at random
(`fault_rate`, seeded), from `FAULTS`. Every request is recorded (method, path, headers, body).

Run on its own (for benches, so its CPU is not the client's): `python -m fakes.ollama_server
--latency 0.1` from tests/ prints its URL and serves until stdin closes; `GET /_stats` and
`POST /_reset` read and clear its counters.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TACTICS = (
    "simp",
    "omega",
    "rfl",
    "exact Nat.add_zero n",
    "constructor",
    "intro h",
    "aesop",
    "linarith",
    "norm_num",
    "exact ⟨hp, hq⟩",
)

# Fault name -> what the server does instead of answering normally.
FAULTS = (
    "busy_503",  # Ollama's queue is full
    "rate_429",  # a proxy's rate limit with Retry-After (seconds)
    "rate_429_ms",  # ... with retry-after-ms
    "server_500",  # an internal error
    "malformed",  # 200 with a body that is not JSON
    "truncated",  # 200 with half a JSON document (Content-Length matches the half)
    "cut_body",  # Content-Length promises more than is sent, then the connection closes
    "missing_field",  # 200 JSON without message.content
    "drop",  # connection closed without any answer
    "slow",  # answers, but only after `slow_s`
    "empty",  # 200 with empty content
    "not_found_404",  # the model does not exist
    "quota_429",  # OpenAI-style insufficient_quota
    "auth_401",  # a gateway rejects the key
    "echo_auth_500",  # a broken proxy echoes the request's Authorization header in its error
    "error_200",  # 200 with {"error": "model is overloaded"} instead of an answer
    "html_200",  # 200 with an HTML page (a captive portal or a gateway's error page)
    "drip",  # a valid answer sent one byte every `drip_s` (no single read times out)
    "echo_key_200",  # a 200 answer whose text and model name hold the key in several spellings
    "echo_key_long",  # a 500 whose long message has the key straddling the 300-character cut
    "echo_key_header",  # a normal answer with the request's Authorization echoed in a response header
    "deep_200",  # 200 with JSON nested 200,000 levels deep (json.loads raises RecursionError)
    "echo_key_prefix",  # a 400 quoting the key's first 20 characters and last 4, as OpenAI's 401 does
)
# Faults a retry can get past; used for random fault injection.
TRANSIENT_FAULTS = (
    "busy_503",
    "rate_429_ms",
    "server_500",
    "malformed",
    "truncated",
    "cut_body",
    "missing_field",
    "drop",
    "slow",
)


def answer_text(messages: list[dict[str, Any]], seed: int | None, temperature: float) -> str:
    """Deterministic: depends on the prompt, and on the seed when temperature > 0."""
    prompt = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    salt = f"{seed}" if temperature > 0 else "greedy"
    digest = hashlib.sha256(f"{prompt}\x1f{salt}".encode()).digest()
    return TACTICS[digest[0] % len(TACTICS)]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeOllama:
    models: tuple[str, ...] = ("smollm2:135m", "qwen2.5:7b")
    latency_s: float = 0.0  # added to every chat answer
    fault_rate: float = 0.0  # probability of a random transient fault per chat request
    fault_seed: int = 0
    faults: tuple[str, ...] = TRANSIENT_FAULTS
    slow_s: float = 0.3
    drip_s: float = 0.2  # seconds between bytes of a `drip` answer
    retry_after: str = "1"  # Retry-After value for rate_429
    retry_after_ms: str = "20"  # retry-after-ms value for rate_429_ms
    require_key: str | None = None  # when set, requests must carry `Authorization: Bearer <key>`
    serve_models: bool = True  # False: no /v1/models, like some OpenAI-compatible servers
    reply: str | None = None  # when set, every chat answer is this text (hostile output)
    # Cut an answer longer than the request's token limit (`max_tokens`, Ollama's `num_predict`;
    # a word a token here) and say `length`, as a real server does.
    cut_at_max_tokens: bool = False
    # (marker, text): a chat whose messages contain the marker is answered with the text (the
    # first marker found wins; before `reply`): fixed answers per problem of a suite run.
    replies: tuple[tuple[str, str], ...] = ()
    # A chat whose messages contain `hold` gets no answer until `release` is set (a request in
    # flight when its client is killed: a crash mid-attempt).
    hold: str | None = None
    release: threading.Event = field(default_factory=threading.Event)
    script: deque[str] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    answered: list[Any] = field(default_factory=list)  # the seed of every chat answered with text
    quota_after: int | None = None  # once this many chats are answered, every chat gets quota_429
    injected: list[str] = field(default_factory=list)
    # perf_counter() of the first chat request and of the last chat answer (for benches).
    first_chat_at: float | None = None
    last_answer_at: float | None = None
    in_flight: int = 0
    max_in_flight: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(self.fault_seed)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeOllama:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        server = _QuietServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.request_queue_size = 128
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- inspection ----------------------------------------------------------------------------

    def queue(self, names: Iterable[str]) -> None:
        for name in names:
            assert name in FAULTS, name
            self.script.append(name)

    def chat_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("chat") or r.path.endswith("completions")]

    def record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)
            if self.first_chat_at is None and rec.method == "POST":
                self.first_chat_at = time.perf_counter()

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def note_answer(self, seed: Any = None) -> None:
        with self._lock:
            self.answered.append(seed)
            self.last_answer_at = time.perf_counter()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.injected.clear()
            self.answered.clear()
            self.first_chat_at = self.last_answer_at = None
            self.max_in_flight = 0

    def next_fault(self) -> str | None:
        with self._lock:
            if self.quota_after is not None and len(self.answered) >= self.quota_after:
                fault = "quota_429"  # an account that ran out: every later call is refused
            elif self.script:
                fault = self.script.popleft()
            elif self.fault_rate and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.faults)
            else:
                return None
            self.injected.append(fault)
            return fault


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up (timeouts, a run that stopped) are normal here, not worth a traceback."""
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer and no Nagle delay: otherwise keep-alive requests stall ~40 ms each.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    server_fake: FakeOllama

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    # -- plumbing ------------------------------------------------------------------------------

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    def _send(
        self, status: int, body: bytes, headers: dict[str, str] | None = None, length: int | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"), headers)

    def _error(
        self,
        status: int,
        message: str,
        openai: bool,
        headers: dict[str, str] | None = None,
        code: str | None = None,
    ) -> None:
        if openai:
            self._json(
                status, {"error": {"message": message, "type": code or "api_error", "code": code}}, headers
            )
        else:
            self._json(status, {"error": message}, headers)

    def _authorized(self, openai: bool) -> bool:
        key = self.server_fake.require_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "Incorrect API key provided.", openai, code="invalid_api_key")
        return False

    # -- routes --------------------------------------------------------------------------------

    def do_GET(self) -> None:
        fake = self.server_fake
        if self.path != "/_stats":
            fake.record(Recorded("GET", self.path, dict(self.headers.items()), None))
        if self.path == "/_stats":
            with fake._lock:
                span = (
                    fake.last_answer_at - fake.first_chat_at
                    if fake.first_chat_at is not None and fake.last_answer_at is not None
                    else None
                )
                chats = sum(1 for r in fake.requests if r.method == "POST")
            self._json(200, {"span_s": span, "chats": chats, "max_in_flight": fake.max_in_flight})
            return
        if self.path == "/api/tags":
            if not self._authorized(False):
                return
            self._json(
                200,
                {
                    "models": [
                        {"name": m, "model": m, "size": 1, "digest": "0" * 64, "details": {"format": "gguf"}}
                        for m in fake.models
                    ]
                },
            )
        elif self.path == "/v1/models" and fake.serve_models:
            if not self._authorized(True):
                return
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "library"} for m in fake.models
                    ],
                },
            )
        else:
            self._send(404, b"404 page not found")

    def do_POST(self) -> None:
        if self.path == "/_reset":
            self._read_body()
            self.server_fake.reset()
            self._json(200, {})
            return
        self.server_fake.enter()
        try:
            self._post()
        finally:
            self.server_fake.leave()

    def _post(self) -> None:
        fake = self.server_fake
        body = self._read_body()
        fake.record(Recorded("POST", self.path, dict(self.headers.items()), body))
        openai = self.path == "/v1/chat/completions"
        if self.path not in ("/api/chat", "/v1/chat/completions"):
            self._send(404, b"404 page not found")
            return
        if not self._authorized(openai):
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "invalid request body", openai)
            return
        model = body.get("model")
        if model not in fake.models and f"{model}:latest" not in fake.models:
            self._error(404, f'model "{model}" not found, try pulling it first', openai)
            return
        fault = fake.next_fault()
        if fault is not None and self._fault(fault, openai, str(model)):
            return
        if fake.latency_s:
            time.sleep(fake.latency_s)
        options = body if openai else (body.get("options") or {})
        seed = options.get("seed")
        temperature = float(options.get("temperature", 0.8) or 0.0)
        said = "\n".join(str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict))
        if fake.hold is not None and fake.hold in said:
            fake.release.wait()
        scripted = next((text for marker, text in fake.replies if marker in said), None)
        text = (
            ""
            if fault == "empty"
            else scripted
            if scripted is not None
            else (fake.reply if fake.reply is not None else answer_text(body["messages"], seed, temperature))
        )
        if fault == "missing_field":
            self._json(200, {"model": model, "done": True})
            return
        reason = "stop"
        limit = options.get("max_tokens" if openai else "num_predict")
        if fake.cut_at_max_tokens and isinstance(limit, int) and len(text.split()) > limit:
            text, reason = " ".join(text.split()[:limit]), "length"
        self._json(200, self._completion(str(model), text, openai, reason))
        fake.note_answer(seed)

    def _completion(self, model: str, text: str, openai: bool, reason: str = "stop") -> dict[str, Any]:
        if openai:
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "system_fingerprint": "fp_ollama",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": reason}
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23},
            }
        return {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text},
            "done_reason": reason,
            "done": True,
            "total_duration": 1,
            "prompt_eval_count": 20,
            "eval_count": 3,
        }

    def _fault(self, fault: str, openai: bool, model: str) -> bool:
        """Act out `fault`; True when the request has been answered (or dropped)."""
        fake = self.server_fake
        if fault == "busy_503":
            self._error(503, "server busy, please try again.  maximum pending requests exceeded", openai)
        elif fault == "rate_429":
            self._error(
                429,
                "too many requests",
                openai,
                {"Retry-After": fake.retry_after},
                code="rate_limit_exceeded",
            )
        elif fault == "rate_429_ms":
            self._error(
                429,
                "too many requests",
                openai,
                {"retry-after-ms": fake.retry_after_ms},
                code="rate_limit_exceeded",
            )
        elif fault == "server_500":
            self._error(500, "llama runner process has terminated: exit status 2", openai)
        elif fault == "malformed":
            self._send(200, b"<html>502 Bad Gateway</html>")
        elif fault == "truncated":
            whole = json.dumps(self._completion(model, "simp", openai)).encode()
            self._send(200, whole[: len(whole) // 2])
        elif fault == "cut_body":
            whole = json.dumps(self._completion(model, "simp", openai)).encode()
            self._send(200, whole[: len(whole) // 2], length=len(whole))
            self._hang_up()
        elif fault == "drop":
            self._hang_up()
        elif fault == "slow":
            time.sleep(fake.slow_s)
            return False
        elif fault == "not_found_404":
            self._error(404, f'model "{model}" not found, try pulling it first', openai)
        elif fault == "quota_429":
            self._json(
                429,
                {
                    "error": {
                        "message": "You exceeded your current quota, please check your "
                        "plan and billing details.",
                        "type": "insufficient_quota",
                        "code": "insufficient_quota",
                    }
                },
            )
        elif fault == "auth_401":
            self._error(401, "Incorrect API key provided.", True, code="invalid_api_key")
        elif fault == "error_200":
            self._json(200, {"error": "model is overloaded"})
        elif fault == "html_200":
            page = b"<html><body>Sign in to continue</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
        elif fault == "drip":
            whole = json.dumps(self._completion(model, "simp", openai)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            with contextlib.suppress(OSError):
                for i in range(len(whole)):
                    self.wfile.write(whole[i : i + 1])
                    self.wfile.flush()
                    time.sleep(fake.drip_s)
        elif fault == "echo_key_200":
            self._json(200, self._completion(self._echo(), self._echo(), openai))
        elif fault == "echo_key_long":
            self._error(500, "x" * 290 + f" upstream said: {self.headers.get('Authorization')}", openai)
        elif fault == "echo_key_header":  # what httpcore's DEBUG log prints with the headers
            echoed = {"X-Upstream-Authorization": str(self.headers.get("Authorization"))}
            self._json(200, self._completion("simp", model, openai), echoed)
        elif fault == "deep_200":
            depth = 200_000
            self._send(200, b'{"a":' * depth + b"1" + b"}" * depth)
        elif fault == "echo_key_prefix":  # OpenAI: "Incorrect API key provided: sk-proj-abcd****wxyz."
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            self._error(400, f"Incorrect API key provided: {key[:20]}****{key[-4:]}.", openai)
        elif fault == "echo_auth_500":
            self._error(500, f"upstream rejected header {self.headers.get('Authorization')}", openai)
        else:
            return False  # empty / missing_field are shaped in the normal path
        return True

    def _echo(self) -> str:
        """The request's key as a leaky server might repeat it: plain, URL-encoded, and inside a
        Basic header (base64 of `user:key`)."""
        import base64
        from urllib.parse import quote

        key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        basic = base64.b64encode(f"user:{key}".encode()).decode()
        return f"simp -- {key} {quote(key, safe='')} Basic {basic}"

    def _hang_up(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def main() -> None:
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every chat answer")
    args = ap.parse_args()
    with FakeOllama(latency_s=args.latency) as fake:
        print(fake.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
