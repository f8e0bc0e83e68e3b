"""A hostile Kimina Lean Server on 127.0.0.1: echoes the key it is sent, redirects, drips, floods.

It speaks `POST /api/check` as project-numina/kimina-lean-server does (server/routers/check.py:
`{"results": [{"id", "time", "error", "response"}]}`, `response` being the Lean REPL's reply
to the snippet's body) but misbehaves as `mode` says, one attack per mode:

- `echo_message`: a Lean message (REPL `messages[].data`) holding the key in every spelling:
  plain, URL-encoded, inside a Basic header's base64, split by NUL and by CR LF; the same
  spellings in a response header (what httpcore's DEBUG log prints).
- `echo_error`: the server's own `error` field quotes the key.
- `echo_repl`: the REPL refuses the command with `{"message": ...}` quoting the key.
- `echo_reason`: HTTP 500 whose reason phrase and body quote the key.
- `redirect`: 302 to `redirect_to` (another origin: a second local server on another port).
- `drip`: 200 headers, then a byte every `drip_s` seconds for `drip_bytes` bytes.
- `huge`: 200 with a body of `huge_bytes` bytes (JSON-looking), streamed.
- `garbage`: 200 `text/html`, not JSON. `bad_shape`: JSON without `results`.
  `bad_reply`: a result whose REPL `messages` is not a list. `no_messages`: `{"env": 0}`.
- `ok`: a well-behaved answer: `#print axioms` reports no axioms.
- `refuse_key`: 401 `{"detail": "Invalid API key"}` (server/auth.py's words) when the key is not
  `expected_key`.

Every request is recorded (path, body, Authorization header); `hung_up` counts the answers the
client stopped reading (a broken pipe while the server was still writing).
"""

from __future__ import annotations

import base64
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import quote

from fakes.local_server import LocalServer


def echoes(key: str) -> str:
    """The key in every spelling a server can echo it in."""
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    split_nul = "\x00".join(key)
    split_crlf = key[:5] + "\r\n" + key[5:]
    return f"k={key} u={quote(key, safe='')} b={basic} n={split_nul} c={split_crlf}"


def axioms_report(body: str, data: str | None = None) -> dict[str, Any]:
    """The REPL's reply to `body`: `#print axioms` answered (Lean's words), at its line."""
    lines = body.split("\n")
    probe = next((i + 1 for i, line in enumerate(lines) if line.startswith("#print axioms")), 1)
    at = {"pos": {"line": probe, "column": 0}, "endPos": {"line": probe, "column": 13}}
    messages = [{"severity": "info", **at, "data": "'lsrb_goal' does not depend on any axioms"}]
    if data is not None:
        messages.insert(0, {"severity": "warning", **at, "data": data})
    return {"env": 0, "messages": messages}


class HostileKimina(LocalServer):
    def __init__(self, mode: str = "ok", *, key: str = "") -> None:
        self.mode = mode
        self.key = key
        self.expected_key: str | None = None
        self.redirect_to = ""
        self.drip_s = 0.2
        self.drip_bytes = 10_000
        self.huge_bytes = 300 * 1024 * 1024
        self.requests: list[dict[str, Any]] = []
        self.hung_up = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                outer.record(self, None)
                self.reply(404, b'{"detail": "Not Found"}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                outer.record(self, body)
                try:
                    outer.answer(self, body)
                except (BrokenPipeError, ConnectionResetError):
                    outer.hung_up += 1

            def reply(
                self,
                status: int,
                data: bytes,
                reason: str | None = None,
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status, reason)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)

    def record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        self.requests.append(
            {"path": handler.path, "body": body, "auth": handler.headers.get("Authorization")}
        )

    def answer(self, h: Any, body: Any) -> None:
        snippets = body.get("snippets") if isinstance(body, dict) else None
        if self.expected_key is not None and h.headers.get("Authorization") != f"Bearer {self.expected_key}":
            h.reply(401, b'{"detail": "Invalid API key"}')
            return
        if not snippets:  # our preflight: the server's own validation refuses an empty list
            h.reply(422, b'{"detail": [{"msg": "Value error, `snippets` must be non empty"}]}')
            return
        snippet = snippets[0]
        code = str(snippet.get("code", ""))
        lines = code.split("\n")
        i = 0
        while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("import ")):
            i += 1
        body_text = "\n".join(lines[i:])  # what the server sends the REPL (server/split.py)

        def results(**result: Any) -> bytes:
            return json.dumps({"results": [{"id": snippet.get("id"), "time": 0.1, **result}]}).encode()

        mode = self.mode
        if mode == "echo_message":
            text = echoes(self.key)
            h.reply(200, results(response=axioms_report(body_text, text)), headers={"X-Echo": self.key})
        elif mode == "echo_error":
            h.reply(200, results(error=f"REPL prep failed: bad token {echoes(self.key)}"))
        elif mode == "echo_repl":
            h.reply(200, results(response={"message": f"Unknown environment. {echoes(self.key)}"}))
        elif mode == "echo_reason":
            h.reply(500, json.dumps({"detail": echoes(self.key)}).encode(), reason=f"Error {self.key}")
        elif mode == "redirect":
            h.send_response(302)
            h.send_header("Location", self.redirect_to)
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif mode == "drip":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(self.drip_bytes))
            h.end_headers()
            for _ in range(self.drip_bytes):
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(self.drip_s)
        elif mode == "huge":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(self.huge_bytes))
            h.end_headers()
            chunk = b'{"results": [' + b" " * (1024 * 1024 - 13)
            sent = 0
            while sent < self.huge_bytes:
                piece = chunk[: self.huge_bytes - sent]
                h.wfile.write(piece)
                sent += len(piece)
        elif mode == "garbage":
            h.reply(200, b"<html><body>502 Bad Gateway</body></html>")
        elif mode == "bad_shape":
            h.reply(200, b'{"status": "ok"}')
        elif mode == "bad_reply":
            h.reply(200, results(response={"env": 0, "messages": "error: everything"}))
        elif mode == "no_messages":
            h.reply(200, results(response={"env": 0}))
        else:
            h.reply(200, results(response=axioms_report(body_text)))
