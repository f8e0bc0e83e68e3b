"""Pure parts of the HTTP layer: backoff laws, Retry-After parsing, status classification."""

from __future__ import annotations

import math
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


@given(st.floats(0, 10_000), st.integers(0, 10), st.integers(0, 2**31 - 1))
def test_retry_after_lengthens_the_backoff_up_to_its_cap_and_never_shortens_it(
    hint: float, n: int, seed: int
) -> None:
    policy = RetryPolicy(max_retry_after_s=60.0)
    floor = policy.floor(n, random.Random(seed))
    delay = policy.delay(n, hint, random.Random(seed))
    assert delay >= floor
    assert delay >= min(hint, 60.0)
    assert delay <= max(floor, 60.0)


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


# Hostile hints (issue #46 item 4): each is read as what it says, and none makes a wait shorter
# than the backoff's floor; a hint asking for more than the time left ends the call.
NOW = 1_700_000_000.0
HOSTILE_HINTS = {
    "zero": ({"retry-after": "0"}, 0.0),
    "zero ms": ({"retry-after-ms": "0"}, 0.0),
    "negative": ({"retry-after": "-5"}, None),
    "negative ms": ({"retry-after-ms": "-5"}, None),
    "NaN": ({"retry-after": "nan"}, None),
    "NaN ms": ({"retry-after-ms": "NaN"}, None),
    "inf": ({"retry-after": "inf"}, math.inf),
    "-inf": ({"retry-after": "-inf"}, None),
    "huge": ({"retry-after": "1e308"}, 1e308),
    "overflowing": ({"retry-after": "1e999"}, math.inf),
    "past date": ({"retry-after": formatdate(NOW - 3600, usegmt=True)}, 0.0),
    "epoch date": ({"retry-after": "Thu, 01 Jan 1970 00:00:00 GMT"}, 0.0),
    "future date": ({"retry-after": formatdate(NOW + 30, usegmt=True)}, 30.0),
    "far future date": ({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}, 253402300799.0 - NOW),
    "garbage": ({"retry-after": "soon, please"}, None),
    "garbage ms": ({"retry-after-ms": "a while", "retry-after": "2"}, 2.0),
    "empty": ({"retry-after": ""}, None),
    "bad date": ({"retry-after": "Mon, 99 Foo 2024 99:99:99 GMT"}, None),
    "long": ({"retry-after": "9" * 10_000}, None),
    "control bytes": ({"retry-after": "\x00\x1b[2J"}, None),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_HINTS))
def test_a_hostile_hint_is_read_as_what_it_says(name: str) -> None:
    headers, expected = HOSTILE_HINTS[name]
    assert parse_retry_after(headers, now=NOW) == expected


@pytest.mark.parametrize("name", sorted(HOSTILE_HINTS))
@pytest.mark.parametrize("retry", [0, 3, 12])
def test_no_hostile_hint_makes_a_wait_shorter_than_the_floor(name: str, retry: int) -> None:
    hint = parse_retry_after(HOSTILE_HINTS[name][0], now=NOW)
    policy = RetryPolicy(total_s=120.0)
    floor = policy.floor(retry, random.Random(retry))
    wait = policy.next_wait(retry, 0.0, hint, random.Random(retry))
    if hint is not None and min(hint, policy.max_retry_after_s) > policy.total_s:
        assert wait is None  # (the capped hint never passes 120 s here: no hint gives up)
    assert wait is not None and floor <= wait <= policy.max_retry_after_s * 1.1


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

hints = st.none() | st.floats(allow_nan=True, allow_infinity=True)
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
def test_each_wait_is_at_least_the_floor_and_at_most_the_cap(
    policy: RetryPolicy, n: int, spent: float, hint: float | None, seed: int
) -> None:
    """The law of issue #46 item 4: floor <= wait <= cap, whatever the server hints. The floor is
    the capped jittered backoff; the cap is the time left (and, for a hint, `max_retry_after_s`).
    The one wait under the floor is a last one that ends exactly where the retry time ends."""
    floor = policy.floor(n, random.Random(seed))
    wait = policy.next_wait(n, spent, hint, random.Random(seed))
    if wait is None:
        return
    left = policy.total_s - spent
    assert 0 < wait <= left + 1e-9
    assert wait >= floor or wait == left
    assert wait <= max(floor, policy.max_retry_after_s) + 1e-9
    asked = policy.asked(hint)
    if asked is not None:
        assert wait >= min(asked, left)  # never sooner than the server asked (within the time left)


@given(policies, st.integers(0, 30), st.floats(0, 600), hints, st.integers(0, 2**31 - 1))
def test_it_gives_up_only_when_the_count_or_the_time_is_spent(
    policy: RetryPolicy, n: int, spent: float, hint: float | None, seed: int
) -> None:
    wait = policy.next_wait(n, spent, hint, random.Random(seed))
    left = policy.total_s - spent
    asked = policy.asked(hint) or 0.0
    assert (wait is None) == (n >= policy.max_retries or left <= 0 or asked > left)


def test_a_server_saying_retry_now_cannot_turn_the_backoff_off() -> None:
    """`Retry-After: 0` on every answer (issue #46: 101 requests an attempt in 3 s before): a call
    still waits its floor each time, so a 120 s outage costs it about as many requests as a
    server that says nothing."""
    policy = RetryPolicy()
    silent, _ = _outage(policy, 7, [(0.0, None)] * 1000)
    told_now, spent = _outage(policy, 7, [(0.0, 0.0)] * 1000)
    assert len(told_now) == len(silent) and sum(told_now) == pytest.approx(sum(silent))
    assert 8 <= len(told_now) <= 20 and 119 <= spent <= 120


def test_the_default_rides_out_a_two_minute_restart() -> None:
    """Connection refused at once, every time: the default keeps trying for about two minutes, and
    a server back within that time gets a request within one capped wait (20 s) of coming back."""
    policy = RetryPolicy()
    waits, spent = _outage(policy, 7, [(0.0, None)] * 1000)
    assert 119 <= spent <= 120 and max(waits) <= policy.max_delay_s
    assert 8 <= len(waits) <= 20, waits
