"""Issue #27 items 1-2, tried as a hostile Kimina server would (tests/fakes/hostile_kimina.py, on
127.0.0.1 only): the key goes to its own server only (a redirect to another origin is not
followed), every echo of it is redacted before anything keeps it, a dripping or 300 MB answer is
cut, a garbled one is the environment's, and a server that is unreachable or refuses the key
stops the run before any model call, in one sentence naming the profile's file and field."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.hostile_kimina import HostileKimina
from hostile_kit import assert_one_sentence
from lsrb_testing import kimina_row

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import register_key
from pytest_lsrb.engine.verifier import VerifierConfig, create_verifier
from pytest_lsrb.tactic.lean.kimina import KiminaBackend
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

KEY = "kim-canary-5e1d9a7c3b2f4e60+/=ZQ"
KEY_ENV = "LSRB_TEST_KIMINA_ATTACK_KEY"
GOAL = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"
SOURCE = "theorem t : True := by\n  trivial\n\n#print axioms t\n"
# What may stand inside a key that is still the key once printed: controls and their escapes.
_SPLITTERS = re.compile(rb"[\x00-\x1f\x7f]|\\u00[0-9a-fA-F]{2}|\\x[0-9a-fA-F]{2}|\\[rnt0]")


def leaks(data: bytes, key: str = KEY) -> list[str]:
    """The spellings of `key` found in `data`, after dropping every control character and escape
    (so a key split by them is found too)."""
    import base64
    from urllib.parse import quote

    flat = _SPLITTERS.sub(b"", data)
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    spellings = {"key": key, "prefix": key[:12], "url": quote(key, safe=""), "basic": basic[8:]}
    return [name for name, s in spellings.items() if s.encode() in flat]


@pytest.fixture
def hostile() -> Iterator[HostileKimina]:
    server = HostileKimina(key=KEY)
    yield server
    server.close()


@pytest.fixture
def elsewhere() -> Iterator[HostileKimina]:
    """Another origin (another port): it must never hear from us."""
    server = HostileKimina("ok", key=KEY)
    yield server
    server.close()


def backend(url: str, timeout_s: float = 5.0, *, monkeypatch: pytest.MonkeyPatch) -> KiminaBackend:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KiminaBackend(url, timeout_s, KEY_ENV)


def row() -> TacticRow:
    return kimina_row(GOAL)


def profile_file(tmp_path: Path, url: str, extra: str = "") -> Path:
    path = tmp_path / "kimina.toml"
    path.write_text(
        'schema_version = 1\nsynthetic_header = "core"\nreplay_method = "kimina"\n'
        f'kimina_url = "{url}"\nkimina_api_key_env = "{KEY_ENV}"\ncheck_timeout_s = 5\n{extra}',
        encoding="utf-8",
    )
    return path


# -- the key goes to its own origin only ----------------------------------------------------------


def test_a_redirect_to_another_origin_is_not_followed(
    hostile: HostileKimina, elsewhere: HostileKimina, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile.mode = "redirect"
    hostile.redirect_to = f"{elsewhere.url}/api/check"
    kimina = backend(hostile.url, monkeypatch=monkeypatch)
    run = kimina.check(SOURCE, rel_path="A.lean")
    kimina.close()
    assert hostile.requests and all(r["auth"] == f"Bearer {KEY}" for r in hostile.requests)
    assert elsewhere.requests == []  # neither the key nor the snippet went there
    assert run.status == "toolchain_missing" and "302" in run.detail


@pytest.mark.parametrize("mode", ["echo_message", "echo_error", "echo_repl", "echo_reason"])
def test_every_echo_of_the_key_is_redacted_before_it_is_kept(
    hostile: HostileKimina, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    hostile.mode = mode
    kimina = backend(hostile.url, monkeypatch=monkeypatch)
    run = kimina.check(SOURCE, rel_path="A.lean")
    kimina.close()
    kept = repr((run.detail, run.messages, run.reply)).encode()
    assert b"***" in kept  # the echo arrived, and was masked
    assert leaks(kept) == [], kept
    if mode == "echo_message":  # a Lean message is Lean's verdict; the rest the server's failure
        assert run.status == "ok" and any("***" in m.data for m in run.messages)
    else:
        assert run.status == "toolchain_missing", run


def test_a_key_with_a_carriage_return_is_refused_before_anything_is_sent(
    hostile: HostileKimina, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY + "\r")
    path = profile_file(tmp_path, hostile.url)
    verifier = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(path)}))
    with pytest.raises(LsrbUsageError) as err:
        verifier.preflight()
    assert_one_sentence(str(err.value), path)
    assert f"the key in ${KEY_ENV} holds a control character" in str(err.value)
    assert KEY[:6] not in str(err.value) and hostile.requests == []


def test_an_unset_key_variable_is_refused_before_anything_is_sent(
    hostile: HostileKimina, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    path = profile_file(tmp_path, hostile.url)
    verifier = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(path)}))
    with pytest.raises(
        LsrbUsageError, match=f"field 'kimina_api_key_env': the environment variable {KEY_ENV}"
    ):
        verifier.preflight()
    assert hostile.requests == []


# -- preflight: reachable, key accepted, before any model call --------------------------------------


def test_a_refused_key_stops_the_run_at_preflight(
    hostile: HostileKimina, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    hostile.expected_key = "another-key-entirely"
    path = profile_file(tmp_path, hostile.url)
    verifier = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(path)}))
    with pytest.raises(LsrbUsageError) as err:
        verifier.preflight()
    verifier.close()
    message = str(err.value)
    assert_one_sentence(message, path)
    assert "field 'kimina_url'" in message and f"refused the key in ${KEY_ENV}" in message
    assert [r["body"] for r in hostile.requests] == [{"snippets": [], "timeout": 1}]  # no Lean ran


def test_an_unreachable_server_stops_the_run_at_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    path = profile_file(tmp_path, "http://127.0.0.1:9")
    verifier = SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(path)}))
    with pytest.raises(LsrbUsageError) as err:
        verifier.preflight()
    verifier.close()
    assert_one_sentence(str(err.value), path)
    assert "connection" in str(err.value)


def test_a_server_that_accepts_the_key_passes_preflight(
    hostile: HostileKimina, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    hostile.expected_key = KEY
    verifier = SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profile_file(tmp_path, hostile.url))})
    )
    verifier.preflight()
    res = verifier.verify(row(), "exact ⟨hp, hq⟩", attempt_seed=1)
    verifier.close()
    assert (res.outcome, res.success) == ("closed", True)


# -- bounded: a dripping answer, a 300 MB answer ------------------------------------------------------


def _wait_for(predicate: Any, seconds: float = 30.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_dripping_server_is_cut_at_check_timeout(
    hostile: HostileKimina, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile.mode = "drip"  # 10,000 bytes, one every 0.2 s: 2,000 s if we read it all
    kimina = backend(hostile.url, timeout_s=1.0, monkeypatch=monkeypatch)
    run = kimina.check(SOURCE, rel_path="A.lean")
    kimina.close()
    assert run.status == "timeout" and "check_timeout_s" in run.detail  # the environment's
    assert _wait_for(lambda: hostile.hung_up >= 1)  # we stopped reading; the server noticed
    assert len(hostile.requests) == 1  # a timeout is not retried


def test_a_300_mb_answer_is_refused_without_reading_it_whole(
    hostile: HostileKimina, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile.mode = "huge"
    kimina = backend(hostile.url, monkeypatch=monkeypatch)
    run = kimina.check(SOURCE, rel_path="A.lean")
    kimina.close()
    assert run.status == "toolchain_missing" and "larger than" in run.detail
    assert _wait_for(lambda: hostile.hung_up >= 1)  # the rest of the 300 MB was never read
    assert len(hostile.requests) == 1


# -- a garbled answer is the environment's ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["garbage", "bad_shape", "bad_reply", "no_messages", "echo_reason"])
def test_a_garbled_or_failed_answer_is_the_environments(
    hostile: HostileKimina, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    verifier = SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profile_file(tmp_path, hostile.url))})
    )
    verifier.preflight()
    hostile.mode = mode
    results = [verifier.verify(row(), t, attempt_seed=1) for t in ("exact ⟨hp, hq⟩", "simp", "constructor")]
    verifier.close()
    assert [r.error_domain for r in results] == ["environment"] * 3, results
    assert not any(r.outcome in ("lean_error", "progress", "closed") for r in results)  # not Lean's verdict


# -- profiles ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_a_check_timeout_that_is_not_finite_is_refused(tmp_path: Path, value: str) -> None:
    path = tmp_path / "timeouts.toml"
    path.write_text(
        'schema_version = 1\nreplay_method = "kimina"\nkimina_url = "http://127.0.0.1:9"\n'
        f"check_timeout_s = {value}\n"
    )
    with pytest.raises(LsrbUsageError) as err:
        create_verifier(VerifierConfig(mode="synthetic", options={"profiles": str(path)}))
    assert_one_sentence(str(err.value), path)
    assert "check_timeout_s" in str(err.value)


def test_repo_replay_refuses_a_kimina_profile_in_one_sentence(tmp_path: Path) -> None:
    path = profile_file(tmp_path, "http://127.0.0.1:9")
    with pytest.raises(LsrbUsageError) as err:
        create_verifier(VerifierConfig(mode="repo_replay", options={"profiles": str(path)}))
    assert_one_sentence(str(err.value), path)
    assert "field 'replay_method'" in str(err.value)


# -- logging: every logger, every level ------------------------------------------------------------------


def test_a_key_in_any_log_record_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    register_key(KEY)
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("httpcore.http11").debug(
            "receive_response_headers.complete return_value=%r",
            (b"HTTP/1.1", 200, b"OK", [(b"X", KEY.encode())]),
        )
        try:
            raise ValueError(f"server said {KEY[:5]}\x00{KEY[5:]}")
        except ValueError:
            logging.getLogger("anything").exception("failed")
    text = caplog.text.encode()
    assert leaks(text) == [] and "***" in caplog.text


# -- the whole run, as a user runs it --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["echo_message", "echo_error", "echo_repl", "echo_reason"])
def test_an_echoing_kimina_server_gets_its_key_stored_nowhere(
    run_suite: Any, tmp_path: Path, hostile: HostileKimina, mode: str
) -> None:
    hostile.mode = mode
    profile = profile_file(tmp_path, hostile.url)
    junit = tmp_path / "junit.xml"
    report = tmp_path / "report.html"
    result = run_suite(
        "--lsrb-verification=synthetic",
        f"--lsrb-profiles={profile}",
        "--lsrb-max-items=3",
        "--lsrb-outcome=record",
        f"--junitxml={junit}",
        "-rA",
        "--log-level=DEBUG",
        "-o",
        "log_cli=true",
        env={KEY_ENV: KEY},
    )
    assert result.returncode in (0, 1), result.stdout[-3000:] + result.stderr[-3000:]
    checks = [r for r in hostile.requests if (r["body"] or {}).get("snippets")]
    assert checks and all(r["auth"] == f"Bearer {KEY}" for r in hostile.requests)
    records = result.attempts()
    assert records
    if mode != "echo_message":  # the server's failure is recorded: with its echo masked
        assert any("***" in str(r) for r in records), records
    rendered = subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", "report", str(result.out_dir), "-o", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rendered.returncode == 0, rendered.stderr
    files = [p for p in [*result.out_dir.rglob("*"), junit, report] if p.is_file()]
    assert {p.name for p in files} >= {"attempts.jsonl", "summary.json", "junit.xml", "report.html"}
    printed = (result.stdout + result.stderr + rendered.stdout + rendered.stderr).encode()
    assert leaks(printed) == []
    for path in files:
        assert leaks(path.read_bytes()) == [], path


@pytest.mark.parametrize(
    ("key", "url_ok", "said"),
    [
        (KEY + "\r", True, f"the key in ${KEY_ENV} holds a control character"),
        (KEY, False, "field 'kimina_url': the Kimina server"),
    ],
)
def test_a_run_with_a_bad_kimina_key_or_server_stops_before_any_model_call(
    run_suite: Any, tmp_path: Path, hostile: HostileKimina, key: str, url_ok: bool, said: str
) -> None:
    from fakes.ollama_server import FakeOllama

    profile = profile_file(tmp_path, hostile.url if url_ok else "http://127.0.0.1:9")
    with FakeOllama() as model:
        result = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={model.url}/v1",
            "--lsrb-verification=synthetic",
            f"--lsrb-profiles={profile}",
            env={KEY_ENV: key},
        )
        assert model.requests == []  # the model was not even asked whether it is up
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert said in result.stderr and "Traceback" not in result.stderr
    assert not [r for r in hostile.requests if (r["body"] or {}).get("snippets")]
    assert leaks((result.stdout + result.stderr).encode()) == []


def test_a_key_in_the_kimina_url_is_never_shown(
    hostile: HostileKimina, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kimina_url` holding the key (as `user:KEY@` or in the query) is the user's choice; what is
    printed or recorded of it still holds no key."""
    monkeypatch.setenv(KEY_ENV, KEY)
    for url in (f"http://user:{KEY}@127.0.0.1:9", f"http://127.0.0.1:9/?token={KEY}"):
        with pytest.raises(LsrbUsageError) as err:
            verifier = SyntheticVerifier(
                VerifierConfig(mode="synthetic", options={"profiles": str(profile_file(tmp_path, url))})
            )
            verifier.preflight()
        assert leaks(str(err.value).encode()) == [], err.value
    hostile.mode = "echo_error"
    run = KiminaBackend(f"http://user:{KEY}@{hostile.url.removeprefix('http://')}", 5.0).check(
        SOURCE, rel_path="A.lean"
    )
    assert run.status == "toolchain_missing" and leaks(run.detail.encode()) == [], run.detail
