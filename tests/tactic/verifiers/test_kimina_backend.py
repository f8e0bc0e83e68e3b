"""The Kimina Lean Server backend against a local HTTP server speaking the server's API.

The fake answers `POST /api/check` as project-numina/kimina-lean-server does: one result per
snippet, `response` being the REPL's reply to the snippet's body (the server splits the leading
import lines off, `server/split.py`, and the REPL counts lines from the body's first:
`server/routers/check.py` sends `Snippet(code=body)`), or `error` for a server-side failure. Its
replies are chosen by what the snippet's code holds. tests/tactic/verifiers/test_kimina_server.py
runs the same checks through the real server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from fakes.local_server import LocalServer
from lsrb_testing import kimina_row

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.verifier import VerifierConfig, create_verifier
from pytest_lsrb.tactic.lean.kimina import KiminaBackend, server_split
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

GOAL = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"


def _line_of(code: str, needle: str) -> int:
    return code[: code.index(needle)].count("\n") + 1


def reply_for(code: str) -> dict[str, Any]:
    """What the Kimina server returns for `code` (a REPL command reply)."""
    if "decide_slowly" in code:
        return {"error": "Lean REPL command timed out in 5 seconds"}
    if "server_busy" in code:
        return {"error": "No available REPLs"}
    probe = _line_of(code, "#print axioms")
    at = {"pos": {"line": probe, "column": 0}, "endPos": {"line": probe, "column": 13}}
    if "  sorry" in code:
        row = _line_of(code, "  sorry")
        sorry = {
            "proofState": 0,
            "pos": {"line": row, "column": 2},
            "endPos": {"line": row, "column": 7},
            "goal": GOAL,
        }
        return {
            "response": {
                "env": 0,
                "sorries": [sorry],
                "messages": [
                    {"severity": "warning", **at, "data": "declaration uses `sorry`"},
                    {"severity": "info", **at, "data": "'lsrb_goal' depends on axioms: [sorryAx]"},
                ],
            }
        }
    warning = {"severity": "warning", **at, "data": "declaration uses `sorry`"}
    sorry_axiom = {"severity": "info", **at, "data": "'lsrb_goal' depends on axioms: [sorryAx]"}
    if "stop simp" in code:  # `stop` is `repeat sorry`: the REPL lists the sorry it elaborates
        row = _line_of(code, "stop simp")
        span = {"pos": {"line": row, "column": 2}, "endPos": {"line": row, "column": 11}}
        sorries = [{"proofState": 1, **span, "goal": GOAL}]
        return {"response": {"env": 0, "sorries": sorries, "messages": [warning, sorry_axiom]}}
    if "apply?" in code:  # suggests, then admits the goal: no sorry syntax, sorryAx all the same
        row = _line_of(code, "apply?")
        span = {"pos": {"line": row, "column": 2}, "endPos": {"line": row, "column": 8}}
        suggestion = {"severity": "info", **span, "data": "Try this: refine ⟨hp, ?_⟩"}
        return {"response": {"env": 0, "messages": [suggestion, warning, sorry_axiom]}}
    if "admitted_upstream" in code:  # a lemma proved by sorry: no warning on this declaration
        return {"response": {"env": 0, "messages": [sorry_axiom]}}
    if "native_decide" in code:
        data = "'lsrb_goal' depends on axioms: [Lean.ofReduceBool, Lean.trustCompiler]"
    else:
        data = "'lsrb_goal' does not depend on any axioms"
    return {"response": {"env": 0, "messages": [{"severity": "info", **at, "data": data}]}}


class FakeKimina(LocalServer):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                if self.path != "/api/check":
                    self.send_response(404)
                    self.end_headers()
                    return
                results = [
                    {
                        "id": s["id"],
                        "time": 0.1,
                        **reply_for("\n".join(s["code"].splitlines()[server_split(s["code"]) :])),
                    }
                    for s in body["snippets"]
                ]
                data = json.dumps({"results": results}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)


@pytest.fixture
def kimina() -> Iterator[FakeKimina]:
    server = FakeKimina()
    yield server
    server.close()


def row() -> TacticRow:
    return kimina_row(GOAL)


def verifier(tmp_path: Path, url: str, extra: str = "") -> SyntheticVerifier:
    profile = tmp_path / "kimina.toml"
    profile.write_text(
        'schema_version = 1\nsynthetic_header = "core"\nreplay_method = "kimina"\n'
        f'kimina_url = "{url}"\n{extra}'
    )
    return SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(profile)}))


def test_synthetic_through_a_kimina_server(
    tmp_path: Path, kimina: FakeKimina, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")  # no Lean here at all: the server checks
    monkeypatch.setenv("LSRB_TEST_KIMINA_KEY", "k3y")
    v = verifier(tmp_path, kimina.url, 'kimina_api_key_env = "LSRB_TEST_KIMINA_KEY"\n')
    v.preflight()  # nothing to find on PATH
    answers = ("exact ⟨hp, hq⟩", "native_decide", "decide_slowly", "simp [server_busy]")
    outcomes = [v.verify(row(), t, attempt_seed=1) for t in answers]
    v.close()
    assert [(r.outcome, r.subkind) for r in outcomes] == [
        ("closed", None),
        ("lean_error", "native_decide"),
        ("timeout", None),  # the server's wall-clock limit: the environment's, as with a local process
        ("toolchain_missing", None),  # the server's own failure is not the model's
    ]
    assert [r.error_domain for r in outcomes[2:]] == ["environment", "environment"]
    assert all(r["path"] == "/api/check" and r["auth"] == "Bearer k3y" for r in kimina.requests)
    assert kimina.requests[0]["body"] == {"snippets": [], "timeout": 1}  # the preflight runs no Lean
    first = kimina.requests[1]["body"]
    assert set(first) == {"snippets", "timeout", "debug", "reuse"} and first["reuse"] is True
    assert first["snippets"][0]["code"].startswith("import Init\n")  # a header: env 0 is Init alone
    assert first["snippets"][0]["code"].rstrip().endswith("#print axioms lsrb_goal")
    assert len(kimina.requests) == 1 + 1 + 4  # preflight, the control once, one snippet per answer


@pytest.mark.parametrize(
    ("tactic", "subkind"),
    [("stop simp", "new_sorry"), ("apply?", "new_sorry"), ("exact admitted_upstream hp hq", "sorry_axiom")],
)
def test_sorry_equivalents_through_kimina_are_never_closed(
    tmp_path: Path, kimina: FakeKimina, monkeypatch: pytest.MonkeyPatch, tactic: str, subkind: str
) -> None:
    """The same acceptance rule reads the server's REPL replies; check() skips the token guard."""
    monkeypatch.setenv("PATH", "")
    v = verifier(tmp_path, kimina.url)
    res = v.check(row(), tactic, v.profile_for(row()))
    v.close()
    assert (res.outcome, res.subkind, res.success) == ("lean_error", subkind, False)


def test_unreachable_server_is_the_environments(tmp_path: Path) -> None:
    backend = KiminaBackend("http://127.0.0.1:9", timeout_s=1)
    run = backend.check("example : True := trivial\n", rel_path="A.lean")
    assert run.status == "toolchain_missing" and "unreachable" in run.detail


def test_kimina_profile_needs_a_url(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('schema_version = 1\nreplay_method = "kimina"\n')
    with pytest.raises(LsrbUsageError, match="kimina_url"):
        create_verifier(VerifierConfig(mode="synthetic", options={"profiles": str(bad)}))
