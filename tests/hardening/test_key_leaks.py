"""API keys (issue #14, attack 4): a server that echoes the key — in its answers, in an error
message long enough that a cut lands inside the key, URL-encoded or inside a Basic header — gets it
stored nowhere: no byte of the output directory, the response cache, the JUnit XML, the HTML report
or anything printed holds the key, a prefix of it, or its encoded forms. A key that cannot be sent
(control or non-ASCII characters) stops the run in one sentence that does not quote it."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fakes.ollama_server import FakeOllama

from pytest_lsrb.core.redaction import Secrets, secret_forms

CANARY = "sk-canary-7f3a9c1e5b2d4f60a8e1+/=QX"


def forbidden_spellings(key: str) -> list[bytes]:
    """What must appear nowhere: the key, a 12-character prefix (a cut inside it), its URL and
    Basic-auth forms."""
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    return [s.encode() for s in (key, key[:12], quote(key, safe=""), basic[8:])]


def test_every_spelling_of_a_key_is_redacted() -> None:
    secrets = Secrets([CANARY])
    for offset in range(6):
        blob = base64.b64encode(b"u" * offset + b":" + CANARY.encode() + b"!").decode()
        assert "***" in secrets.redact(blob)
    assert secrets.redact(f"a {quote(CANARY, safe='')} b") == "a *** b"
    assert secrets.redact_tree({"k": [CANARY, {CANARY: 1}]}) == {"k": ["***", {"***": 1}]}
    assert all(len(form) >= 8 for form in secret_forms(CANARY))


def test_an_echoing_server_gets_the_key_stored_nowhere(run_suite: Any, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    junit = tmp_path / "junit.xml"
    report = tmp_path / "report.html"
    with FakeOllama(require_key=CANARY) as fake:
        fake.queue(["echo_key_200", "echo_key_long", "echo_auth_500", "echo_key_200", "echo_key_long"])
        result = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-api-key-env=LSRB_CANARY_KEY",
            f"--lsrb-cache-dir={cache}",
            "--lsrb-max-items=6",
            "--lsrb-outcome=record",
            "--lsrb-max-retries=0",
            "--lsrb-concurrency=1",
            f"--junitxml={junit}",
            "-rA",
            "--log-level=DEBUG",
            "-o",
            "log_cli=true",
            env={"LSRB_CANARY_KEY": CANARY},
        )
        sent = fake.requests
    assert sent and all(r.headers.get("Authorization") == f"Bearer {CANARY}" for r in sent)
    records = result.attempts()
    # The echoes really arrived (so their absence below means something).
    assert any("***" in (r.get("raw_output") or "") for r in records), records
    assert any("***" in (r.get("generation_error_message") or "") for r in records), records
    rendered = subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", "report", str(result.out_dir), "-o", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rendered.returncode == 0, rendered.stderr
    files = [p for p in [*result.out_dir.rglob("*"), *cache.rglob("*"), junit, report] if p.is_file()]
    assert {p.name for p in files} >= {"attempts.jsonl", "summary.json", "junit.xml", "report.html"}
    assert any(p.name.startswith("responses.sqlite3") for p in files)
    printed = (result.stdout + result.stderr + rendered.stdout + rendered.stderr).encode()
    for spelling in forbidden_spellings(CANARY):
        assert spelling not in printed, spelling
        for path in files:
            assert spelling not in path.read_bytes(), (path, spelling)


@pytest.mark.parametrize("key", ["sk-line\nbreak", "sk-carriage\r", "sk-clé", "sk-tab\there"])
def test_a_key_that_cannot_be_sent_stops_the_run_in_one_sentence(run_suite: Any, key: str) -> None:
    with FakeOllama() as fake:
        result = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-api-key-env=LSRB_BAD_KEY",
            env={"LSRB_BAD_KEY": key},
        )
        assert fake.requests == []
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--lsrb-api-key-env: the key in $LSRB_BAD_KEY holds" in result.stderr
    assert "INTERNALERROR" not in result.stderr and "Traceback" not in result.stderr
    assert key[:6].encode() not in (result.stdout + result.stderr).encode()


@pytest.mark.parametrize("adapter", ["openai", "ollama"])
def test_a_key_echoed_in_a_response_header_is_not_logged_at_debug(run_suite: Any, adapter: str) -> None:
    """httpcore logs every response's headers at DEBUG: a server echoing the key there must not
    get it printed (issue #27: both adapters printed it)."""
    with FakeOllama(require_key=CANARY) as fake:
        fake.queue(["echo_key_header"] * 3)
        result = run_suite(
            f"--lsrb-adapter={adapter}",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}" + ("/v1" if adapter == "openai" else ""),
            "--lsrb-api-key-env=LSRB_CANARY_KEY",
            "--lsrb-max-items=3",
            "--lsrb-outcome=record",
            "--lsrb-concurrency=1",
            "--log-level=DEBUG",
            "-o",
            "log_cli=true",
            "-rA",
            env={"LSRB_CANARY_KEY": CANARY},
        )
        assert not fake.script  # every echo was sent
    printed = result.stdout + result.stderr
    assert "X-Upstream-Authorization" in printed  # the DEBUG header lines were printed ...
    for spelling in forbidden_spellings(CANARY):  # ... without the key
        assert spelling not in printed.encode(), spelling
        for path in result.out_dir.rglob("*"):
            if path.is_file():
                assert spelling not in path.read_bytes(), (path, spelling)


def test_an_echoed_prefix_of_the_key_is_stored_nowhere(run_suite: Any, tmp_path: Path) -> None:
    """OpenAI's 401 quotes a key's first characters and its last four ("Incorrect API key provided:
    sk-proj-abcd****wxyz"): every prefix of eight characters or more is the key's (issue #38, 8)."""
    junit = tmp_path / "junit.xml"
    with FakeOllama() as fake:
        fake.queue(["echo_key_prefix"] * 2)
        result = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-api-key-env=LSRB_CANARY_KEY",
            "--lsrb-max-items=2",
            "--lsrb-outcome=record",
            "--lsrb-max-retries=0",
            "--lsrb-concurrency=1",
            f"--junitxml={junit}",
            "-rA",
            env={"LSRB_CANARY_KEY": CANARY},
        )
        assert not fake.script  # both echoes were sent
    messages = [r.get("generation_error_message") or "" for r in result.attempts()]
    assert any("Incorrect API key provided: ***" in m for m in messages), messages
    printed = (result.stdout + result.stderr).encode()
    files = [p for p in [*result.out_dir.rglob("*"), junit] if p.is_file()]
    for n in (8, 12, 20):
        assert CANARY[:n].encode() not in printed, n
        for path in files:
            assert CANARY[:n].encode() not in path.read_bytes(), (path, n)


def test_a_key_pasted_as_the_variable_name_is_refused_unquoted(run_suite: Any) -> None:
    with FakeOllama() as fake:
        result = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}/v1",
            f"--lsrb-api-key-env={CANARY}",
        )
        assert fake.requests == []
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--lsrb-api-key-env: the value looks like a key" in result.stderr
    assert "Traceback" not in result.stderr
    assert CANARY[:8].encode() not in (result.stdout + result.stderr).encode()


def test_credentials_in_the_base_url_are_sent_but_never_printed(run_suite: Any, tmp_path: Path) -> None:
    """`--lsrb-base-url=http://user:KEY@host` (issue #38, 8): the server gets them (HTTP Basic), the
    "to finish it" line, the output files and the summary never show them, and the printed command
    works once they are given again through $LSRB_BASE_URL_USERINFO."""
    secret = "pw-7f3a9c1e5b2d4f60"
    basic = "Basic " + base64.b64encode(f"alice:{secret}".encode()).decode()
    out = tmp_path / "run"
    with FakeOllama() as fake:
        fake.queue(["server_500"] * 2)
        authed = fake.url.replace("http://", f"http://alice:{secret}@") + "/v1"
        first = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={authed}",
            "--lsrb-max-items=2",
            "--lsrb-max-retries=0",
            "--lsrb-concurrency=1",
            out=out,
        )
        printed = first.stdout + first.stderr
        line = next(x for x in printed.splitlines() if "to finish it, run:" in x)
        assert f"--lsrb-base-url={fake.url}/v1" in line and "LSRB_BASE_URL_USERINFO" in line, line
        assert secret[:8] not in printed
        for path in out.rglob("*"):
            if path.is_file():
                assert secret[:8].encode() not in path.read_bytes(), path
        again = run_suite(
            "--lsrb-adapter=openai",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-max-items=2",
            "--lsrb-max-retries=0",
            "--lsrb-concurrency=1",
            "--lsrb-resume",
            "--lsrb-retry-errors",
            out=out,
            env={"LSRB_BASE_URL_USERINFO": f"alice:{secret}"},
        )
        sent = [r.headers.get("Authorization") for r in fake.requests if "chat" in r.path]
    assert again.returncode == 0, again.stdout + again.stderr
    assert sent and all(header == basic for header in sent), sent
    assert secret[:8] not in again.stdout + again.stderr
