"""`lsrb view FOLDER`: a local web page over the runs under a folder (the standard library's
HTTP server, on the loopback interface only).

    /                     the runs under the folder, and a form to compare two
    /run?name=R           one run, kept up to date while it runs (view.js asks /api/run)
    /compare?a=R&b=S      two runs item by item (S against the baseline R)
    /api/runs, /api/run?name=R, /api/compare?a=R&b=S   the same as JSON
    /static/view.js, /static/view.css

It answers GET only, to a request whose Host header names this server on the loopback interface
(a page of another site that resolves its own name to 127.0.0.1 gets 421, not the runs), names a
run only by a name from the walk of the folder (`view.runs`), and sends every page with a
Content-Security-Policy that allows nothing but its own script and style and requests to itself.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.view import pages
from pytest_lsrb.view.data import RunCache, comparison_state, run_listing
from pytest_lsrb.view.runs import find_runs, run_named

ASSETS: Final = Path(__file__).parent / "assets"
REPORT_ASSETS: Final = ASSETS.parent.parent / "report" / "assets"
STATIC: Final = {
    "/static/view.js": (ASSETS / "view.js", "text/javascript"),
    "/static/view.css": (ASSETS / "view.css", "text/css"),
    # the report's: durations read the same on both pages
    "/static/durations.js": (REPORT_ASSETS / "durations.js", "text/javascript"),
}
LOOPBACK: Final = ("127.0.0.1", "localhost", "[::1]")
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
MAX_TARGET: Final = 8192


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, port: int, on_api: Callable[[str], None] | None = None) -> None:
        self.root = root
        self.cache = RunCache()
        # called before each /api/ answer with its path (a test writes a run step by step here)
        self.on_api = on_api
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


class Handler(BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "lsrb-view"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
        return

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _html(self, status: int, html: str) -> None:
        self._send(status, html.encode("utf-8", "replace"), "text/html")

    def _json(self, obj: Any) -> None:
        body = json.dumps(obj, ensure_ascii=True, allow_nan=False, default=str).encode("ascii")
        self._send(200, body, "application/json")

    def _refuse(self, status: int, sentence: str) -> None:
        self._html(status, pages.error_page(status, sentence))

    def host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        return any(host == f"{name}:{self.server.port}" for name in LOOPBACK)

    def do_GET(self) -> None:
        if len(self.path) > MAX_TARGET:
            return self._refuse(414, "The request's address is too long.")
        if not self.host_ok():
            return self._refuse(421, "This server answers only requests addressed to itself on 127.0.0.1.")
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query, max_num_fields=10).items()}
        try:
            self.route(url.path, query)
        except LsrbUsageError as exc:  # a run that cannot be read: one sentence
            self._refuse(422, str(exc))

    def route(self, path: str, query: dict[str, str]) -> None:
        server, root = self.server, self.server.root
        if path in STATIC:
            file, kind = STATIC[path]
            return self._send(200, file.read_bytes(), kind)
        if path.startswith("/api/") and server.on_api is not None:
            server.on_api(path)
        if path in ("/", "/api/runs"):
            runs = run_listing(find_runs(root))
            if path == "/api/runs":
                return self._json(runs)
            return self._html(200, pages.index_page(str(root), runs))
        if path in ("/run", "/api/run"):
            found = run_named(root, query.get("name"))
            if found is None:
                return self._refuse(404, "No such run under this folder.")
            state = server.cache.state(found)
            if path == "/api/run":
                return self._json(state)
            return self._html(200, pages.run_page(found.name, state))
        if path in ("/compare", "/api/compare"):
            a, b = run_named(root, query.get("a")), run_named(root, query.get("b"))
            if a is None or b is None:
                return self._refuse(404, "Name two runs under this folder to compare.")
            state = comparison_state(a, b)
            if path == "/api/compare":
                return self._json(state)
            changed = query.get("changed") == "1"
            return self._html(200, pages.compare_page(state, changed, {"a": a.name, "b": b.name}))
        return self._refuse(404, "Nothing here.")

    def do_POST(self) -> None:
        self._refuse(405, "This server only shows runs.")

    do_PUT = do_DELETE = do_PATCH = do_POST


def serve(root: Path, port: int) -> int:
    """`lsrb view`: serve until Ctrl-C (or SIGTERM)."""
    if not root.is_dir():
        raise LsrbUsageError(
            f"lsrb view: {root} is not a folder (expected where runs are written, e.g. lsrb-out)."
        )
    try:
        server = ViewServer(root.resolve(), port)
    except OSError as exc:
        why = exc.strerror or exc
        raise LsrbUsageError(f"lsrb view: cannot listen on 127.0.0.1:{port} ({why}).") from None
    where = f"the runs under {root} on {server.url} (this machine only)"
    print(f"lsrb view: {where}; Ctrl-C stops it", flush=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    print("lsrb view: stopped", file=sys.stderr, flush=True)
    return 0
