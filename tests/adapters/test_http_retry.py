"""Pure parts of the HTTP layer: backoff laws, Retry-After parsing, status classification."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.adapters.http import classify_status, error_text
from pytest_lsrb.adapters.retry import RetryPolicy, parse_retry_after
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


# -- the schedule over a whole outage (adapters/retry.py: next_wait) ------------------------------

hints = st.none() | st.floats(0, 200, allow_nan=False)
policies = st.builds(
    RetryPolicy,
    max_retries=st.integers(0, 200),
    base_delay_s=st.floats(0.001, 5),
    max_delay_s=st.floats(0.001, 60),
    max_retry_after_s=st.floats(0, 120),
    total_s=st.floats(0, 600),
)


def _outage(
    policy: RetryPolicy, seed: int, failures: list[tuple[float, float | None]]
) -> tuple[list[float], float]:
    """The waits a call takes while each request fails after `took` seconds with hint `hint`, and
    the seconds from its first failure to its last retry being sent."""
    rng = random.Random(seed)
    waits: list[float] = []
    spent = 0.0
    for index, (took, hint) in enumerate(failures):
        if index:
            spent += took  # the retried request's own time counts too
        wait = policy.next_wait(index, spent, hint, rng)
        if wait is None:
            break
        waits.append(wait)
        spent += wait
    return waits, spent


@given(policies, st.integers(0, 2**31 - 1), st.lists(st.tuples(st.floats(0, 30), hints), max_size=300))
def test_a_call_retries_for_its_total_time_and_no_longer(
    policy: RetryPolicy, seed: int, failures: list[tuple[float, float | None]]
) -> None:
    waits, spent = _outage(policy, seed, failures)
    assert len(waits) <= policy.max_retries
    assert sum(waits) <= policy.total_s + 1e-6
    assert spent <= policy.total_s + 30 + 1e-6  # the last wait fits; only a request may overrun it


@given(policies, st.integers(0, 30), st.floats(0, 600), hints, st.integers(0, 2**31 - 1))
def test_each_wait_is_capped_and_honours_retry_after(
    policy: RetryPolicy, n: int, spent: float, hint: float | None, seed: int
) -> None:
    wait = policy.next_wait(n, spent, hint, random.Random(seed))
    if wait is None:
        return
    assert 0 <= wait <= policy.total_s - spent + 1e-9
    if hint is None:
        assert wait <= policy.max_delay_s
    else:
        asked = min(hint, policy.max_retry_after_s)
        assert asked <= wait <= asked * 1.1 + 1e-9  # never sooner than the server asked


@given(policies, st.integers(0, 30), st.floats(0, 600), hints, st.integers(0, 2**31 - 1))
def test_it_gives_up_only_when_the_count_or_the_time_is_spent(
    policy: RetryPolicy, n: int, spent: float, hint: float | None, seed: int
) -> None:
    wait = policy.next_wait(n, spent, hint, random.Random(seed))
    left = policy.total_s - spent
    asked = 0.0 if hint is None else min(hint, policy.max_retry_after_s)
    assert (wait is None) == (n >= policy.max_retries or left <= 0 or asked > left)


def test_the_default_rides_out_a_two_minute_restart() -> None:
    """Connection refused at once, every time: the default keeps trying for about two minutes, and
    a server back within that time gets a request within one capped wait (20 s) of coming back."""
    policy = RetryPolicy()
    waits, spent = _outage(policy, 7, [(0.0, None)] * 1000)
    assert 119 <= spent <= 120 and max(waits) <= policy.max_delay_s
    assert 8 <= len(waits) <= 20, waits
