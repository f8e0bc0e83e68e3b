"""llama.cpp's server with a fixed number of slots, for tests of what a run does at the server's
limit: it answers `GET /props`, `GET /v1/models` and `POST /v1/chat/completions`, decodes at most
`slots` requests at once (the rest wait, as in llama.cpp's task queue), logs the seed of each
chat request in the order it arrived and the most chat requests it held at once (decoding or
queued: `max_in_flight`), and adds up the tokens it billed (`billed`, from each answer's `usage`).

Answer lengths can vary: `completions(n)` is the completion tokens of the n-th chat answer (0-based,
in arrival order), cut at the request's `max_tokens` as a real server cuts it (`finish_reason`
"length"); the default is 2 tokens each. `seconds_for(n)` likewise sets how long it decodes.

Shapes are llama.cpp's (tools/server/server.cpp, checked against xllamacpp's build in
bench/bench_server.py): `/props` reports `total_slots`; `/v1/models` lists the alias with
`owned_by: "llamacpp"`; a chat answer is `{"choices": [{"finish_reason", "index", "message":
{"role", "content"}}], "created", "model", "system_fingerprint", "object": "chat.completion",
"usage", "id"}`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakes.local_server import LocalServer


class SlotLlama(LocalServer):
    def __init__(
        self,
        *,
        slots: int = 1,
        seconds: float = 0.02,
        alias: str = "smollm2",
        prompt_tokens: int = 40,
        completions: Callable[[int], int] = lambda n: 2,
        seconds_for: Callable[[int], float] | None = None,
    ) -> None:
        self.arrivals: list[int] = []  # each chat request's seed, in arrival order
        self.in_flight = 0  # chat requests received and not yet answered
        self.max_in_flight = 0
        self.billed = 0  # prompt + completion tokens of every answer sent
        self.alias = alias
        decode = threading.Semaphore(slots)
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/props":
                    self._json({"total_slots": slots, "model_alias": alias, "build_info": "stand-in"})
                elif self.path == "/v1/models":
                    self._json(
                        {"object": "list", "data": [{"id": alias, "object": "model", "owned_by": "llamacpp"}]}
                    )
                else:
                    self._json(
                        {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}, 404
                    )

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    n = len(fake.arrivals)
                    fake.arrivals.append(int(body["seed"]))
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                wanted = completions(n)
                cap = body.get("max_tokens")
                completion = min(wanted, cap) if isinstance(cap, int) and cap >= 0 else wanted
                try:
                    with decode:
                        time.sleep(seconds if seconds_for is None else seconds_for(n))
                finally:
                    with lock:
                        fake.in_flight -= 1
                        fake.billed += prompt_tokens + completion
                self._json(
                    {
                        "choices": [
                            {
                                "finish_reason": "length" if completion < wanted else "stop",
                                "index": 0,
                                "message": {"role": "assistant", "content": "simp"},
                            }
                        ],
                        "created": 0,
                        "model": alias,
                        "system_fingerprint": "b0-stand-in",
                        "object": "chat.completion",
                        "usage": {
                            "completion_tokens": completion,
                            "prompt_tokens": prompt_tokens,
                            "total_tokens": prompt_tokens + completion,
                        },
                        "id": "chatcmpl-stand-in",
                    }
                )

            def _json(self, data: Any, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                # a client that went away (killed) was billed all the same
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(raw)

            def log_message(self, *args: object) -> None: ...

        super().__init__(Handler)
