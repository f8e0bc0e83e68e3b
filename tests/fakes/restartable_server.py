"""A model server speaking OpenAI's API in its own process, on a port of our choosing, so that
a test or bench can SIGKILL it (every connection reset, the port closed: a crash) and start it
again on the same port (a restart). It answers `GET /v1/models` and `POST /v1/chat/completions`
(after `latency` seconds) or refuses every chat with 429 and a hint (`fault`, e.g.
`retry-after: 0`; `date:` is a Retry-After date an hour past), or dies at its first chat request
(`die`); it appends one line per chat request to `log`, so what a run sent is counted across
restarts.

    server = RestartableServer(port, log, latency=1.0)   # started, listening
    server.kill(); ...; server.start()                    # a crash, then the restart
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


def serve(port: int, log: str, latency: float, fault: str, die_on_chat: bool) -> None:
    """Serve until killed (run as `python -m fakes.restartable_server PORT LOG LATENCY FAULT DIE`)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path.endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"{time.time():.3f} {body.get('seed')}\n")
            if die_on_chat:
                os._exit(9)  # a crash: every connection reset, the port closed
            if fault:
                name, _, value = fault.partition(":")
                if name == "date":
                    name, value = "retry-after", formatdate(time.time() - 3600, usegmt=True)
                refusal = {"error": {"message": "slow down", "code": "rate_limit_exceeded"}}
                self._json(429, refusal, name, value)
                return
            time.sleep(latency)
            self._json(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": "stand-in",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "simp"},
                        }
                    ],
                    "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22},
                },
            )

        def _json(self, status: int, data: Any, header: str = "", value: str = "") -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            if header:
                self.send_header(header.strip(), value.strip())
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None: ...

    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("ready", flush=True)
    server.serve_forever()


class RestartableServer:
    """The server in its own process, on `port`; `kill()` is a crash, `start()` comes back."""

    def __init__(
        self, port: int, log: Path, latency: float = 0.0, fault: str = "", die: bool = False
    ) -> None:
        self.port, self.log, self.args = port, log, [str(latency), fault or "-", "1" if die else "0"]
        self.url = f"http://127.0.0.1:{port}/v1"
        self.proc: subprocess.Popen[str] | None = None
        self.start()

    def start(self) -> None:
        command = [sys.executable, str(HERE), str(self.port), str(self.log), *self.args]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def chats(self) -> list[float]:
        """When each chat request arrived (time.time()), over every start."""
        if not self.log.exists():
            return []
        return [float(line.split()[0]) for line in self.log.read_text().splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


if __name__ == "__main__":
    port, log, latency, fault, die = sys.argv[1:6]
    serve(int(port), log, float(latency), "" if fault == "-" else fault, die == "1")
