"""Synthetic checks through the REAL Kimina Lean Server (issue #29 item 5).

The server is PyPI's `kimina-ast-server` (its `server` package is the FastAPI app), started on
127.0.0.1 by tests/fakes/kimina_launch.py with its database and cloud logging off and nothing else
changed. Under it runs tests/fakes/stand_in_repl.py, which speaks the Lean REPL's protocol with
Lean's own messages (no Lean toolchain can be installed here); `lake env` is the small `lake` of
tests/tactic/lean/lean_fakes.py. Installed by the `kimina` extra; skipped without it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import kimina_row

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.verifier import VerifierConfig
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

FAKES = Path(__file__).resolve().parents[2] / "fakes"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lean"))
from lean_fakes import FAKE_LAKE, install  # noqa: E402


def _installed() -> bool:
    try:
        return importlib.util.find_spec("server.routers.check") is not None
    except ModuleNotFoundError:
        return False


pytestmark = pytest.mark.skipif(
    not _installed(), reason="kimina-ast-server is not installed (pip install -e '.[kimina]')"
)

KEY = "kimina-real-server-key-3c9e1a"
KEY_ENV = "LSRB_TEST_REAL_KIMINA_KEY"
AND_GOAL = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"
NAT_GOAL = "n : Nat\n⊢ n = n"
MATHLIB_GOAL = "x : ℕ\n⊢ x + 0 = x"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RealKimina:
    """The real server in a subprocess, over the stand-in REPL; `log()` lists what the REPL got."""

    def __init__(self, root: Path, *, api_key: str | None = KEY, max_repls: int = 1) -> None:
        bin_dir = root / "bin"
        install(bin_dir, "lake", FAKE_LAKE)  # `lake env REPL`: how the server starts its REPL
        repl = install(bin_dir, "repl", (FAKES / "stand_in_repl.py").read_text(encoding="utf-8"))
        project = root / "project"
        project.mkdir(parents=True, exist_ok=True)
        self.repl_log = root / "repl.jsonl"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "LEAN_SERVER_REPL_PATH": str(repl),
            "LEAN_SERVER_PROJECT_DIR": str(project),
            "LEAN_SERVER_SKIP_VALIDATION": "1",
            "LEAN_SERVER_MAX_REPLS": str(max_repls),
            "LEAN_SERVER_LOG_LEVEL": "WARNING",
            "STAND_IN_LOG": str(self.repl_log),
        }
        env.pop("LEAN_SERVER_API_KEY", None)
        if api_key:
            env["LEAN_SERVER_API_KEY"] = api_key
        self.output = root / "server.log"
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKES / "kimina_launch.py"), str(self.port)],
            cwd=root,
            env=env,
            stdout=self.output.open("wb"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if json.loads(answer.read()) == {"status": "ok"}:
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the Kimina server did not start:\n" + self.output.read_text()[-3000:])
            time.sleep(0.2)

    def log(self) -> list[dict[str, Any]]:
        if not self.repl_log.exists():
            return []
        return [json.loads(line) for line in self.repl_log.read_text(encoding="utf-8").splitlines()]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKimina]:
    real = RealKimina(tmp_path_factory.mktemp("kimina"))
    yield real
    real.stop()


@pytest.fixture(autouse=True)
def no_local_lean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")  # nothing runs Lean here: the server does
    monkeypatch.setenv(KEY_ENV, KEY)


def row(goal: str, item: str = "k1") -> TacticRow:
    return kimina_row(goal, item)


def verifier(tmp_path: Path, url: str, *, header: str = "core", timeout_s: int = 20) -> SyntheticVerifier:
    profile = tmp_path / "kimina.toml"
    profile.write_text(
        f'schema_version = 1\nsynthetic_header = "{header}"\nreplay_method = "kimina"\n'
        f'kimina_url = "{url}"\nkimina_api_key_env = "{KEY_ENV}"\ncheck_timeout_s = {timeout_s}\n',
        encoding="utf-8",
    )
    v = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(profile)}))
    v.preflight()
    return v


def test_snippets_never_see_each_other(tmp_path: Path, server: RealKimina) -> None:
    """One REPL serves every check (LEAN_SERVER_MAX_REPLS=1, reuse on): each check still starts
    from the imports alone, never from the previous check's declarations."""
    v = verifier(tmp_path, server.url)
    checks = [
        (row(AND_GOAL, "a"), "exact ⟨hp, hq⟩"),
        (row(AND_GOAL, "a"), "simp"),
        (row(NAT_GOAL, "b"), "rfl"),
        (row(AND_GOAL, "a"), "constructor <;> assumption"),
        (row(NAT_GOAL, "b"), "omega"),
    ]
    results = [v.verify(r, t, attempt_seed=1) for r, t in checks]
    v.close()
    assert [(r.outcome, r.subkind) for r in results] == [
        ("closed", None),
        ("progress", None),  # Lean's `unsolved goals`: the tactic ran, goals are left
        ("closed", None),
        ("closed", None),
        ("progress", None),
    ], [r.detail for r in results]
    sent = server.log()
    assert not any("already been declared" in json.dumps(e) for e in sent)
    bodies = [e for e in sent if "lsrb_goal" in e["cmd"]]
    assert len(bodies) == 2 + len(checks)  # two controls (one per goal), one check per answer
    assert all(e.get("env") == 0 for e in bodies)  # the server's env 0 ...
    assert sent[0]["cmd"] == "import Init" and "env" not in sent[0]  # ... is the imports alone
    assert len({e["pid"] for e in sent}) == 1  # one REPL, reused


def test_a_mathlib_goal_needs_no_lean_project(tmp_path: Path, server: RealKimina) -> None:
    v = verifier(tmp_path, server.url, header="mathlib")
    assert v.profile_for(row(MATHLIB_GOAL)).lean_project is None
    closed = v.verify(row(MATHLIB_GOAL, "m"), "norm_num", attempt_seed=1)
    v.close()
    assert (closed.outcome, closed.success) == ("closed", True), closed.detail
    assert {"cmd": "import Mathlib"}.items() <= next(e for e in server.log() if "Mathlib" in e["cmd"]).items()


def test_a_slow_check_is_the_environments(tmp_path: Path, server: RealKimina) -> None:
    v = verifier(tmp_path, server.url, timeout_s=3)
    slow = v.verify(row(AND_GOAL, "s"), "exact stand_in_slow", attempt_seed=1)
    after = v.verify(row(AND_GOAL, "s"), "exact ⟨hp, hq⟩", attempt_seed=1)  # a fresh REPL
    v.close()
    assert (slow.outcome, slow.error_domain) == ("timeout", "environment"), slow.detail
    assert after.outcome == "closed", after.detail


def test_a_garbled_repl_answer_is_the_environments(tmp_path: Path, server: RealKimina) -> None:
    v = verifier(tmp_path, server.url)
    garbled = v.verify(row(AND_GOAL, "g"), "exact stand_in_garbage", attempt_seed=1)
    v.close()
    assert (garbled.outcome, garbled.error_domain) == ("toolchain_missing", "environment"), garbled.detail
    assert "JSON decode error" in (garbled.detail or "")  # the server's words (server/repl.py)


def test_a_wrong_key_is_refused_before_any_model_call(
    tmp_path: Path, server: RealKimina, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "not-the-servers-key")
    before = len(server.log())
    with pytest.raises(LsrbUsageError, match=rf"field 'kimina_url': .*refused the key in \${KEY_ENV}"):
        verifier(tmp_path, server.url)
    assert len(server.log()) == before  # the REPL never ran


def test_a_server_that_went_down_is_the_environments(tmp_path: Path) -> None:
    real = RealKimina(tmp_path / "down", api_key=None)
    v = verifier(tmp_path, real.url)
    real.stop()
    gone = v.verify(row(AND_GOAL, "d"), "exact ⟨hp, hq⟩", attempt_seed=1)
    v.close()
    assert (gone.outcome, gone.error_domain) == ("toolchain_missing", "environment"), gone.detail
