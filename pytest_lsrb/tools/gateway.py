"""The front door of `lsrb serve`: a small HTTP proxy between clients and llama.cpp's own server.

llama.cpp's server (xllamacpp) listens on a loopback port only this process uses, with a key
(the user's, or a random one only the gateway knows and adds to each request it forwards). The
gateway listens where the user asked and forwards every request there, as it is, and every answer
back, streamed (an SSE stream stays a stream), with what llama.cpp lacks:

- **Host checked** (DNS rebinding): a request whose `Host:` is not a loopback name, an IP
  address, the bound address, this machine's name or a name given with `--allow-host` is refused
  (403). A web page on `attacker.example`, rebound to 127.0.0.1, reaches nothing.
- **No cross-origin browser use**: llama.cpp answers any `Origin` with itself in
  `Access-Control-Allow-Origin` (and credentials allowed), so any web page could read its answers.
  Here a request whose `Origin` is not the address the request was sent to is refused (403), and no
  `Access-Control-*` header is ever sent: same-origin pages (llama.cpp's own web UI through the
  gateway) work, nothing else in a browser does. Clients that are not browsers send no `Origin`.
- **A stop that cuts**: `stop()` closes the listening socket and every open connection, the
  clients' and the upstream ones, at once: a client mid-request sees its connection closed, never
  silence. (llama.cpp's own server, deleted, waits for every open request to finish: a client with
  no timeout kept `lsrb serve` alive for good after Ctrl-C.)
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import select
import socket
import sys
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# Request headers not forwarded: hop-by-hop (RFC 9110 7.6.1), and the ones the gateway sets itself.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "origin",
        "content-length",
    }
)
MAX_BODY_BYTES = 64 * 1024 * 1024  # a prompt of llama.cpp's longest context is a few MB at most
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def is_loopback_host(host: str) -> bool:
    """Whether listening on `host` reaches only this machine."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a `Host:` header (`[::1]:8080` -> `::1`, `Example.org:80` -> `example.org`)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def allowed_host(name: str, allowed: frozenset[str]) -> bool:
    """Whether a request for `Host: name` may be served: a loopback name, an IP address (a page on
    a rebound domain name never sends one of these), or a name in `allowed`."""
    if name in LOOPBACK_NAMES or name in allowed:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def same_origin(origin: str, host: str) -> bool:
    """Whether a browser's `Origin:` is the address the request was sent to (`Host:`)."""
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc.lower() == host.lower()


def machine_names(bound: str) -> frozenset[str]:
    """The names this machine answers to besides IP addresses: the bound name, and (listening
    beyond loopback) its host name and fully qualified name."""
    names = {bound.strip("[]").lower()}
    if not is_loopback_host(bound):
        with contextlib.suppress(OSError):
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(n for n in names if n)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    gateway: Gateway

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that resets its connection is no error of ours: no traceback for it."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # (HTTPServer's own looks the bound name up in DNS: seconds on a machine without one)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(self.server_address)
        self.server_address = self.socket.getsockname()
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle's algorithm on, the body waits for
    # the client's delayed ACK of the headers (~40 ms a request on Linux).
    disable_nagle_algorithm = True
    server: _Server
    upstream: http.client.HTTPConnection | None = None

    def setup(self) -> None:
        super().setup()
        self.server.gateway.opened(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.gateway.closed(self.connection)
        if self.upstream is not None:
            self.server.gateway.closed(self.upstream.sock)
            self.upstream.close()

    def log_message(self, format: str, *args: Any) -> None:  # quiet, as llama.cpp is at verbosity 0
        return

    def do_GET(self) -> None:
        self.forward()

    do_POST = do_PUT = do_DELETE = do_OPTIONS = do_HEAD = do_PATCH = do_GET

    def refuse(self, status: int, message: str) -> None:
        body = json.dumps({"error": {"code": status, "message": message, "type": "forbidden"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def forward(self) -> None:
        gateway = self.server.gateway
        host = self.headers.get("Host", "")
        if host and not allowed_host(host_name(host), gateway.allowed_hosts):
            self.refuse(
                403,
                f"lsrb serve answers requests for this machine only, not for host {host_name(host)!r} "
                "(start it with --allow-host NAME to serve that name).",
            )
            return
        origin = self.headers.get("Origin")
        if origin is not None and not same_origin(origin, host):
            self.refuse(403, "lsrb serve does not answer web pages of other origins.")
            return
        body = self.read_body()
        if body is None:
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        if gateway.upstream_key is not None:  # the key only the gateway knows
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            headers["Authorization"] = f"Bearer {gateway.upstream_key}"
        gateway.begin()
        answered = False
        try:
            try:
                answer = self.ask_upstream(body, headers)
            except (OSError, http.client.HTTPException) as exc:
                if gateway.stopping.is_set() or isinstance(exc, ConnectionAbortedError):
                    self.close_connection = True
                    return
                self.refuse(502, f"llama.cpp's server did not answer ({type(exc).__name__}).")
                return
            try:
                self.relay(answer)
                answered = True
            except (OSError, http.client.HTTPException):  # the client left mid-answer, or the stop
                self.close_connection = True
                if self.upstream is not None:
                    gateway.closed(self.upstream.sock)
                    _cut(self.upstream.sock)
                    self.upstream = None
        finally:
            gateway.end(answered)

    def read_body(self) -> bytes | None:
        """The request's body (by Content-Length, or chunked), or None once refused."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            size = 0
            while True:
                length = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if length == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                size += length
                if size > MAX_BODY_BYTES:
                    self.refuse(413, f"the request body is larger than {MAX_BODY_BYTES} bytes.")
                    return None
                chunks.append(self.rfile.read(length))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.refuse(413, f"the request body is larger than {MAX_BODY_BYTES} bytes.")
            return None
        return self.rfile.read(length) if length > 0 else b""

    def ask_upstream(self, body: bytes, headers: dict[str, str]) -> http.client.HTTPResponse:
        gateway = self.server.gateway
        for attempt in range(2):  # a kept-alive upstream connection llama.cpp has closed: once more
            if self.upstream is None:
                self.upstream = http.client.HTTPConnection(*gateway.upstream)
                self.upstream.connect()
                self.upstream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                gateway.opened(self.upstream.sock)
            try:
                self.upstream.request(self.command, self.path, body=body or None, headers=headers)
                self.await_upstream(self.upstream)
                return self.upstream.getresponse()
            except ConnectionAbortedError:
                gateway.closed(self.upstream.sock)
                _cut(self.upstream.sock)
                self.upstream = None
                raise
            except (ConnectionError, http.client.RemoteDisconnected, http.client.CannotSendRequest):
                gateway.closed(self.upstream.sock)
                self.upstream.close()
                self.upstream = None
                if attempt or gateway.stopping.is_set():
                    raise
        raise AssertionError("unreachable")

    def await_upstream(self, upstream: http.client.HTTPConnection) -> None:
        """Wait for llama.cpp's answer; a client that hangs up meanwhile (its timeout) has the
        upstream connection closed too, so llama.cpp stops decoding for nobody and frees the slot."""
        client, server = self.connection, upstream.sock
        while True:
            ready, _, _ = select.select([client, server], [], [])
            if server in ready:
                return
            try:
                gone = client.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if gone:
                raise ConnectionAbortedError("the client hung up before the answer")
            select.select([server], [], [])  # (a pipelined request: it waits its turn)
            return

    def relay(self, answer: http.client.HTTPResponse) -> None:
        self.send_response_only(answer.status, answer.reason)
        self.send_header("Date", self.date_time_string())
        length = answer.getheader("Content-Length")
        for name, value in answer.getheaders():
            lower = name.lower()
            if lower in _HOP or lower.startswith("access-control-") or lower in ("date", "server"):
                continue
            self.send_header(name, value)
        bodiless = self.command == "HEAD" or answer.status in (204, 304) or 100 <= answer.status < 200
        chunked = length is None and not bodiless
        if length is not None:
            self.send_header("Content-Length", length)
        elif chunked:
            self.send_header("Transfer-Encoding", "chunked")
        if answer.will_close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if bodiless:
            answer.read()
            answer.close()
            return
        while piece := answer.read1(65536):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            self.wfile.flush()
        answer.close()  # read to its end: the upstream connection takes the next request
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        if answer.will_close and self.upstream is not None:
            self.server.gateway.closed(self.upstream.sock)
            self.upstream.close()
            self.upstream = None


class Gateway:
    """Listens on (`host`, `port`) and forwards to llama.cpp at `upstream` (see the module)."""

    def __init__(
        self,
        host: str,
        port: int,
        upstream: tuple[str, int],
        *,
        upstream_key: str | None,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.upstream = upstream
        self.upstream_key = upstream_key  # None: the client's own Authorization goes through
        self.allowed_hosts = machine_names(host) | {h.lower() for h in allow_hosts}
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.in_flight = 0  # requests forwarded and not yet answered in full
        self.left_at: float | None = None  # when a request was last cut before its end
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server_class = type("_Server", (_Server,), {"address_family": family})
        self._server: _Server = server_class((host.strip("[]"), port), _Handler)
        self._server.gateway = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> Gateway:
        self._thread.start()
        return self

    def opened(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            if self.stopping.is_set():
                _cut(sock)
            else:
                self._open.add(sock)

    def begin(self) -> None:
        with self._lock:
            self.in_flight += 1

    def end(self, answered: bool) -> None:
        with self._lock:
            self.in_flight -= 1
            if not answered:
                self.left_at = time.monotonic()

    def upstream_busy(self, within_s: float = 5.0) -> bool:
        """Whether llama.cpp may still be decoding a request: one is in flight, or one was cut
        less than `within_s` ago (llama.cpp notices a closed connection a second or two later)."""
        with self._lock:
            recent = self.left_at is not None and time.monotonic() - self.left_at < within_s
            return self.in_flight > 0 or recent

    def closed(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._open.discard(sock)

    def stop(self) -> bool:
        """Stop listening and cut every open connection now (clients see it closed); True when
        llama.cpp may still be busy with a request it was sent (`upstream_busy`)."""
        busy = self.upstream_busy()
        self.stopping.set()
        if self._thread.is_alive():
            self._server.shutdown()  # (within its 0.05 s poll)
        self._server.server_close()
        with self._lock:
            held, self._open = self._open, set()
        for sock in held:
            _cut(sock)
        return busy


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
