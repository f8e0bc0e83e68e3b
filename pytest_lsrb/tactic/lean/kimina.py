"""A Kimina Lean Server as the Lean backend: many machines check in parallel, none runs Lean here.

The server (project-numina/kimina-lean-server; PyPI `kimina-ast-server`, package `server`)
serves the Lean REPL over HTTP (`server/routers/check.py`):

    POST {url}/api/check
    {"snippets": [{"id": "...", "code": "<whole Lean file>"}], "timeout": 60, "debug": false,
     "reuse": true}
    -> {"results": [{"id": "...", "time": 1.2, "error": null,
                     "response": {"env": 0, "messages": [...], "sorries": [...]}}]}

`response` is the REPL's own reply (or `{"message": ...}` when the REPL refused the request);
`error` is the server's (`Lean REPL command timed out in 60 seconds`, `No available REPLs`, ...).

What the server does with a snippet, and what this backend does about it:

- It splits the leading `import` and blank lines off (`server/split.py`), keeps one REPL per such
  header, runs the header once as the REPL's first command (environment 0) and every later
  snippet on that REPL in environment 0 (`server/repl.py`: `env = 0` once `use_count != 0`). A
  file without imports has no header command, so environment 0 would be the *first snippet's*
  environment and the next snippet would see its declarations (`'lsrb_goal' has already been
  declared`). Every snippet is therefore sent with an import line (`import Init`, which every
  Lean file imports anyway, when it has none): environment 0 is then the imports alone, and
  snippets never see each other.
- The REPL's positions count from the body's first line; they are moved back to the source's
  lines here.
- The server's Lean project is its own (`LEAN_SERVER_PROJECT_DIR`): `import Mathlib` works when
  the server has Mathlib, whatever this machine has.

HTTP is held to the model adapters' standards (adapters.http.HttpEndpoint): the whole answer
within the profile's `check_timeout_s` (the server is asked to stop Lean at 80% of it, so its own
timeout report arrives first), a body cap, redirects never followed, retries only for a refused
connection, 429 or 5xx. Every reply is redacted of every key of the run long enough to mask
without changing Lean's words (`RUN_KEYS.long_secrets`) before it is read: Lean's messages are fed
back to the model's server, which must not learn this server's key. Any
failure of the server, and any reply that is not the API's shape, is the environment's
(`toolchain_missing` or `timeout`), never the model's. An API key, when the server wants one,
goes in `Authorization: Bearer <key>` to this server only, read from the environment variable the
profile names (never from a file this project writes).
"""

from __future__ import annotations

import math
import re
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.adapters.http import Failure, HttpEndpoint, bad_response
from pytest_lsrb.adapters.retry import RetryPolicy
from pytest_lsrb.core.credentials import checked_key
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import RUN_KEYS
from pytest_lsrb.tactic.lean.backend import LeanRun, RunStatus
from pytest_lsrb.tactic.lean.outcome import SorryInfo, messages_from_reply, sorries_from_reply
from pytest_lsrb.tactic.profiles import usable_url

CHECK_PATH: Final = "/api/check"
# Transient: the server restarting, overloaded or behind a flapping proxy. A timeout is not
# retried (the check had its time), nor a malformed reply, nor 4xx.
RETRY_KINDS: Final = frozenset({"connection", "rate_limit", "server_error"})
MAX_RETRIES: Final = 2
LEAN_SHARE: Final = 0.8  # of check_timeout_s, what the server is told Lean may take
IMPLICIT_IMPORT: Final = "import Init"  # every Lean file imports Init; saying so makes a header
_IMPORT_LINE: Final = re.compile(r"^\s*import ")


def server_split(code: str) -> int:
    """How many leading lines the server takes as the header (`server/split.py`: lines that are
    blank or start with `import `, stripped)."""
    lines = code.splitlines()
    i = 0
    while i < len(lines) and (lines[i].strip() == "" or lines[i].strip().startswith("import ")):
        i += 1
    return i


def with_header(source: str) -> tuple[str, int]:
    """(the text to send, how many lines it adds before `source`): an import line first when the
    source has none, so the server runs a header and every snippet starts from it."""
    has_import = any(_IMPORT_LINE.match(line) for line in source.splitlines()[: server_split(source)])
    return (source, 0) if has_import else (f"{IMPLICIT_IMPORT}\n{source}", 1)


def _check_results(data: Any) -> list[Mapping[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise bad_response("the Kimina server's reply has no results list")
    return [r for r in data["results"] if isinstance(r, dict)]


def _reply_problem(reply: Mapping[str, Any]) -> str | None:
    """Why a REPL reply is not the REPL's shape (Lean REPL `REPL/JSON.lean`), or None."""
    if "env" in reply and (isinstance(reply["env"], bool) or not isinstance(reply["env"], int)):
        return "its env is not a number"
    for name in ("messages", "sorries"):
        items = reply.get(name, [])
        if not isinstance(items, list) or not all(isinstance(m, dict) for m in items):
            return f"its {name} is not a list of objects"
    for m in reply.get("messages", []):
        if not isinstance(m.get("severity"), str) or not isinstance(m.get("data"), str):
            return "a message has no severity or data text"
        if not isinstance(m.get("pos"), dict):
            return "a message has no position"
    return None


@dataclass
class KiminaBackend:
    """`check` sends the whole source as one snippet; the server does the rest."""

    url: str
    timeout_s: float
    api_key_env: str | None = None
    name: str = "kimina"
    _endpoint: HttpEndpoint | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def unavailable(self) -> str | None:
        if not usable_url(self.url):  # never quoted: the URL may hold a key
            return "kimina_url is not a usable http(s) URL"
        try:
            checked_key(self.api_key_env, "kimina_api_key_env")
        except LsrbUsageError as exc:
            return str(exc)
        return None

    def endpoint(self) -> HttpEndpoint:
        with self._lock:  # checks run in several threads: one pooled client for all of them
            if self._endpoint is None:
                self._endpoint = self._connect()
            return self._endpoint

    def _connect(self) -> HttpEndpoint:
        return HttpEndpoint(
            self.url,
            timeout_s=self.timeout_s,
            pool_size=8,
            retry=RetryPolicy(max_retries=MAX_RETRIES, base_delay_s=0.5, max_delay_s=4.0),
            api_key=checked_key(self.api_key_env, "kimina_api_key_env"),
            headers={"Content-Type": "application/json"},
        )

    def lean_timeout(self) -> int:
        """The `timeout` the server is given for Lean (whole seconds, at least 1)."""
        return max(1, math.floor(self.timeout_s * LEAN_SHARE))

    def preflight(self) -> str | None:
        """Why this server cannot serve the run (unreachable, key refused, not a Kimina server),
        or None. Sends a request the server refuses before running Lean (no snippets: 422 once the
        key passed, 401 when it did not), so nothing is checked and nothing is paid."""
        missing = self.unavailable()
        if missing is not None:
            return missing
        outcome = self.endpoint().call(
            "POST",
            CHECK_PATH,
            {"snippets": [], "timeout": 1},
            parse=lambda data: data,
            seed=0,
            max_retries=1,
            retry_kinds=frozenset({"connection"}),
        )
        failure = outcome.failure
        if failure is None or failure.status == 422:
            return None
        shown = self.endpoint().shown_url
        if failure.kind == "auth":
            held = (
                f"the key in ${self.api_key_env}" if self.api_key_env else "no key (set kimina_api_key_env)"
            )
            return f"the Kimina server {shown} refused {held} ({failure.message})"
        return f"the Kimina server {shown} cannot be used ({failure.kind}: {failure.message})"

    def check(self, source: str, *, rel_path: str, header_lines: int = 0) -> LeanRun:
        missing = self.unavailable()
        if missing is not None:
            return LeanRun("toolchain_missing", detail=missing)
        snippet_id = uuid.uuid4().hex
        sent, added = with_header(source)
        shift = server_split(sent) - added  # REPL line n is the source's line n + shift
        payload = {
            "snippets": [{"id": snippet_id, "code": sent}],
            "timeout": self.lean_timeout(),
            "debug": False,
            "reuse": True,
        }
        start = time.monotonic()
        outcome = self.endpoint().call(
            "POST",
            CHECK_PATH,
            payload,
            parse=lambda data: _check_results(RUN_KEYS.long_secrets().redact_tree(data)),
            seed=int(snippet_id[:8], 16),
            retry_kinds=RETRY_KINDS,
        )
        elapsed = time.monotonic() - start
        if outcome.failure is not None:
            return self._server_failed(outcome.failure, elapsed)
        results = outcome.value or []
        result = next((r for r in results if r.get("id") == snippet_id), None)
        if result is None:
            return LeanRun(
                "toolchain_missing", detail="the Kimina server's reply has no result for the snippet"
            )
        error = result.get("error")
        if error:
            status: RunStatus = "timeout" if "timed out" in str(error) else "toolchain_missing"
            return LeanRun(status, detail=f"Kimina server: {str(error)[:300]}", elapsed_s=elapsed)
        reply = result.get("response")
        if not isinstance(reply, dict):
            detail = "the Kimina server's result has no REPL response"
            return LeanRun("toolchain_missing", detail=detail, elapsed_s=elapsed)
        if "message" in reply and "env" not in reply:  # the REPL refused the command itself
            return LeanRun(
                "toolchain_missing",
                detail=f"the Kimina server's REPL refused the snippet: {str(reply['message'])[:300]}",
                elapsed_s=elapsed,
            )
        problem = _reply_problem(reply)
        if problem is None and "#print axioms" in source and not reply.get("messages"):
            problem = "it holds no message, not even the report of `#print axioms`"
        if problem is not None:
            return LeanRun(
                "toolchain_missing",
                detail=f"the Kimina server's REPL reply is malformed: {problem}",
                elapsed_s=elapsed,
            )
        messages = tuple(m.shifted(shift) for m in messages_from_reply(reply))
        sorries = tuple(_shift_sorry(s, shift) for s in sorries_from_reply(reply))
        return LeanRun("ok", messages, sorries, reply=reply, elapsed_s=elapsed)

    def _server_failed(self, failure: Failure, elapsed: float) -> LeanRun:
        """The server did not answer with results: the environment's, whatever happened."""
        if failure.kind == "timeout":
            return LeanRun(
                "timeout",
                detail=f"the Kimina server did not answer within check_timeout_s ({failure.message})",
                elapsed_s=elapsed,
            )
        return LeanRun(
            "toolchain_missing",
            detail=f"Kimina server unreachable or unusable ({failure.kind}: {failure.message})",
            elapsed_s=elapsed,
        )

    def close(self) -> None:
        if self._endpoint is not None:
            self._endpoint.close()


def _shift_sorry(sorry: SorryInfo, lines: int) -> SorryInfo:
    return SorryInfo(
        (sorry.pos[0] + lines, sorry.pos[1]) if sorry.pos else None,
        (sorry.end_pos[0] + lines, sorry.end_pos[1]) if sorry.end_pos else None,
        sorry.goal,
        sorry.proof_state,
    )
