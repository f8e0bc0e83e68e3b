"""A Kimina Lean Server as the Lean backend: many machines check in parallel, none runs Lean here.

The server (project-numina/kimina-lean-server) serves the Lean REPL over HTTP:

    POST {url}/api/check
    {"snippets": [{"id": "...", "code": "<whole Lean file>"}], "timeout": 60, "debug": false,
     "reuse": true}
    -> {"results": [{"id": "...", "time": 1.2, "error": null,
                     "response": {"env": 0, "messages": [...], "sorries": [...]}}]}

`response` is the REPL's own reply (or `{"message": ...}` when the REPL refused the request);
`error` is the server's (`Lean REPL command timed out in 60 seconds`, no free REPL, ...). The
server splits the imports off itself, keeps a REPL per header (so `import Mathlib` is elaborated
once per REPL) and moves message and sorry positions back to the whole file's lines. An API key,
when the server wants one, goes in `Authorization: Bearer <key>`, read from the environment
variable the profile names (never from a file this project writes).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any

from pytest_lsrb.tactic.lean.backend import LeanRun
from pytest_lsrb.tactic.lean.outcome import messages_from_reply, sorries_from_reply


@dataclass
class KiminaBackend:
    """`check` sends the whole source as one snippet; the server does the rest."""

    url: str
    timeout_s: float
    api_key_env: str | None = None
    name: str = "kimina"

    def unavailable(self) -> str | None:
        if not self.url.startswith(("http://", "https://")):
            return f"kimina_url {self.url!r} is not an http(s) URL"
        if self.api_key_env and not os.environ.get(self.api_key_env):
            return f"the Kimina server's API key variable {self.api_key_env} is not set"
        return None

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env and os.environ.get(self.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[self.api_key_env]}"
        request = urllib.request.Request(
            self.url.rstrip("/") + "/api/check",
            data=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        # the server waits up to `timeout` for Lean, plus its own queueing: give it a margin
        with urllib.request.urlopen(request, timeout=self.timeout_s + 30) as answer:
            body = json.loads(answer.read().decode("utf-8"))
        if not isinstance(body, dict):
            raise ValueError(f"expected a JSON object, got {type(body).__name__}")
        return body

    def check(self, source: str, *, rel_path: str, header_lines: int = 0) -> LeanRun:
        snippet_id = uuid.uuid4().hex
        payload = {
            "snippets": [{"id": snippet_id, "code": source}],
            "timeout": max(1, int(self.timeout_s)),
            "debug": False,
            "reuse": True,
        }
        start = time.monotonic()
        try:
            body = self._post(payload)
        # The checking service failing is the environment's, like a missing toolchain.
        except urllib.error.HTTPError as exc:
            detail = f"Kimina server answered HTTP {exc.code} ({exc.reason})"
            return LeanRun("toolchain_missing", detail=detail)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            detail = f"Kimina server unreachable or unreadable: {exc}"
            return LeanRun("toolchain_missing", detail=detail)
        elapsed = time.monotonic() - start
        results = body.get("results")
        result = (
            next(
                (r for r in results if isinstance(r, dict) and r.get("id") == snippet_id),
                None,
            )
            if isinstance(results, list)
            else None
        )
        if result is None:
            detail = "the Kimina server's reply has no result for the snippet"
            return LeanRun("toolchain_missing", detail=detail)
        error = result.get("error")
        if error:
            if "timed out" in str(error):
                return LeanRun("timeout", detail=f"Kimina server: {error}", elapsed_s=elapsed)
            return LeanRun("toolchain_missing", detail=f"Kimina server: {error}", elapsed_s=elapsed)
        reply = result.get("response")
        if not isinstance(reply, dict):
            return LeanRun("failed", detail="the Kimina server's result has no response", elapsed_s=elapsed)
        if "message" in reply and "env" not in reply:
            return LeanRun("failed", detail=f"the server's REPL refused the snippet: {reply['message']}")
        return LeanRun(
            "ok",
            tuple(messages_from_reply(reply)),
            tuple(sorries_from_reply(reply)),
            reply=reply,
            elapsed_s=elapsed,
        )

    def close(self) -> None:
        return None
