"""Pure parts of the HTTP layer: backoff laws, Retry-After parsing, status classification."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.adapters.http import RetryPolicy, classify_status, error_text, parse_retry_after
from pytest_lsrb.core.errors import GENERATION_ERROR_DOMAINS
from pytest_lsrb.core.redaction import redact, strip_userinfo


@given(st.integers(0, 30), st.integers(0, 2**31 - 1), st.floats(0.001, 5), st.floats(0.001, 60))
def test_backoff_is_jittered_within_half_to_full_of_a_capped_exponential(
    n: int, seed: int, base: float, cap: float
) -> None:
    policy = RetryPolicy(base_delay_s=base, max_delay_s=cap)
    ceiling = min(cap, base * 2**n)
    delay = policy.delay(n, None, random.Random(seed))
    assert ceiling / 2 <= delay <= ceiling
    assert delay <= cap


@given(st.integers(0, 2**31 - 1))
def test_backoff_jitter_is_deterministic_per_seed(seed: int) -> None:
    policy = RetryPolicy()
    first = [policy.delay(n, None, random.Random(seed)) for n in range(5)]
    again = [policy.delay(n, None, random.Random(seed)) for n in range(5)]
    assert first == again


@given(st.floats(0, 10_000), st.integers(0, 10))
def test_retry_after_is_honoured_up_to_its_cap(hint: float, n: int) -> None:
    policy = RetryPolicy(max_retry_after_s=60.0)
    delay = policy.delay(n, hint, random.Random(0))
    wanted = min(hint, 60.0)
    assert wanted <= delay <= wanted * 1.1 + 1e-9


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    # retry-after-ms is the more precise of the two and wins
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = 1_700_000_000.0
    assert parse_retry_after({"retry-after": formatdate(now + 30, usegmt=True)}, now=now) == 30.0
    assert parse_retry_after({"retry-after": formatdate(now - 30, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-4"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (429, b'{"error":{"code":"insufficient_quota","type":"insufficient_quota"}}', "quota"),
        (429, b'{"error":{"code":"rate_limit_exceeded"}}', "rate_limit"),
        (402, b"{}", "quota"),
        (401, b"{}", "auth"),
        (403, b"{}", "auth"),
        (408, b"", "timeout"),
        (500, b"", "server_error"),
        (502, b"", "server_error"),
        (503, b"", "server_error"),
        (400, b"", "client_error"),
        (404, b"", "client_error"),
        (422, b"", "client_error"),
    ],
)
def test_status_classification(status: int, body: bytes, kind: str) -> None:
    assert classify_status(status, body) == kind
    assert kind in GENERATION_ERROR_DOMAINS


def test_error_text_reads_every_provider_shape() -> None:
    assert error_text('{"error": "model \\"x\\" not found"}') == 'model "x" not found'
    assert error_text('{"error": {"message": "Incorrect API key", "code": 401}}') == "Incorrect API key"
    assert error_text('{"detail": "Not Found"}') == "Not Found"
    assert error_text("<html>bad gateway</html>") == "<html>bad gateway</html>"


def test_secrets_are_redacted_and_userinfo_stripped() -> None:
    assert redact("echo sk-abc back", ["sk-abc"]) == "echo *** back"
    assert strip_userinfo("https://user:pw@host:1/v1") == "https://host:1/v1"
    assert strip_userinfo("http://host/v1") == "http://host/v1"
