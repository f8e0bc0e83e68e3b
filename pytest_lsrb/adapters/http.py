"""What every HTTP adapter shares: one `httpx.Client`, retries, and error classification.

`HttpEndpoint.call` sends one JSON request and returns either the parsed value or a classified
failure (a kind from `errors.GENERATION_ERROR_DOMAINS`); it never raises for a transport or
provider problem. Transient kinds are retried with capped, jittered exponential backoff that
honours `Retry-After` and `retry-after-ms`, for a total time (`adapters.retry`). Quota and auth
errors are never retried: the first one stops the endpoint, so calls already queued return at
once without being sent.

Secrets: the API key lives only in the client's default headers (httpx masks `Authorization` in
its reprs) and goes to this endpoint's origin only: redirects are never followed (a 3xx is a
`client_error`). The answer is handed on as the server sent it: what is judged is what the model
said, so a key that is also a word of the answer (`simp`) never turns a right answer into `***`.
Keys are redacted where text leaves the process (records, logs, the terminal, JUnit XML: see
core.redaction). An error message made here is redacted at once, in every form any key of the run
can take (core.redaction.RUN_KEYS), and only then cut to length, so no start of a key survives the
cut. The HTTP reason phrase is never read.

Outages: a refused connection (nothing listens: a server restarting) is retried with backoff
capped at `REFUSED_MAX_DELAY_S`, so a server back is found within two seconds; a reset or a
connection closed mid-answer (a server killed with the request in flight) is sent again with the
usual backoff, never after a whole request timeout. Generation calls share the run's outage state
(`adapters.outage`): once every call has failed for the retry time, every waiting call gives up at
once and the run stops what is left.

What counts as an answer: a 2xx JSON body of the protocol's success shape. Anything else (a
truncated or HTML body, `200 {"error": ...}`, a body without the answer's fields) is the server's
fault, not the model's: it is retried like a server error and ends as an infrastructure error.
Each request has a whole-response deadline of `timeout_s` besides httpx's per-read timeout, so a
server dripping bytes cannot hold an attempt, and a body over `MAX_BODY_BYTES` is refused.
"""

from __future__ import annotations

import ipaddress
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Generic, TypeVar
from urllib.parse import urlsplit

import httpx

from pytest_lsrb.adapters.base import GenerationResult
from pytest_lsrb.adapters.concurrency import CURRENT, NOT_SENT, AdaptiveLimit, Admission
from pytest_lsrb.adapters.outage import Outage, is_over, time_left
from pytest_lsrb.adapters.retry import WAITING, RetryPolicy, parse_retry_after
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS, RETRYABLE_GENERATION_KINDS
from pytest_lsrb.core.redaction import RUN_KEYS, register_key, strip_userinfo
from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.core.textfiles import loads_json

log = logging.getLogger("pytest_lsrb.http")

T = TypeVar("T")

MESSAGE_LIMIT = 300  # characters of a provider's error message kept in a record
OUTAGE_MARGIN_S = 0.05  # a call waiting out an outage wakes just past its window's end
OUTAGE_GRACE_S = 0.5  # a call's own retry window outlasts the run's outage window by this
MAX_BODY_BYTES = 16 * 1024 * 1024  # a chat answer is kilobytes; more is a broken or hostile server


class ResponseError(Exception):
    """Raised by a response parser: the body is not what the API promises (or holds no text)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def bad_response(message: str) -> ResponseError:
    return ResponseError("bad_response", message)


def error_in_success(where: str, error: Any) -> ResponseError:
    """`200 {"error": ...}`: the server failed and said so with the wrong status (retried)."""
    return ResponseError("server_error", f"{where} answered 200 with an error: {error}")


# Headers whose value is a credential (lower case): registered for redaction when an adapter passes
# one in `headers` (a key in `x-api-key`, a token in `authorization`), never written anywhere.
CREDENTIAL_HEADERS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
    }
)


def credentials_in(headers: Mapping[str, str]) -> list[str]:
    """The secrets among `headers` (names in lower case): each credential header's value, and the
    token after an `Authorization` scheme word (`Bearer KEY`: `KEY` too)."""
    found = []
    for name, value in headers.items():
        if name in CREDENTIAL_HEADERS and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token.strip() and scheme.isalpha():
                found.append(token.strip())
    return found


@dataclass(frozen=True)
class Failure:
    kind: str
    message: str
    status: int | None = None
    retry_after_s: float | None = None
    refused: bool = False  # the connection itself was refused: nothing listens there (yet)


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """The end of one `call`: a value or a failure, after `http_attempts` requests."""

    value: T | None
    failure: Failure | None
    http_attempts: int
    latency_ms: float


def error_text(body: str) -> str:
    """The provider's own error message out of a body (OpenAI, Ollama, llama.cpp, vLLM shapes)."""
    text = body.strip()
    try:
        data = loads_json(text)
    except ValueError:
        return text[:MESSAGE_LIMIT]
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            msg = err.get("message") or err.get("code") or err.get("type")
            if msg:
                return str(msg)[:MESSAGE_LIMIT]
        elif err:
            return str(err)[:MESSAGE_LIMIT]
    return text[:MESSAGE_LIMIT]


def clip(message: str) -> str:
    """A redacted message cut to `MESSAGE_LIMIT` characters (always redact first, then clip)."""
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"


def classify_status(status: int, body: bytes) -> str:
    """The generation error kind for an HTTP error status."""
    if status == 429:
        return "quota" if b"insufficient_quota" in body else "rate_limit"
    if status == 402:  # payment required: some gateways' way of saying "out of credit"
        return "quota"
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server_error"
    return "client_error"


def normalize_base_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    return url


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class EndpointState:
    """Shared by every thread using one endpoint: why it stopped, if it did."""

    stop: threading.Event = field(default_factory=threading.Event)
    fatal: Failure | None = None
    closed: bool = False


class HttpEndpoint:
    """One provider endpoint: a pooled client, explicit timeouts, retries. Thread-safe."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float,
        pool_size: int,
        retry: RetryPolicy,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        in_flight: int | None = None,
        outage_dir: str | None = None,
        auth_header: str = "Authorization",
        auth_scheme: str | None = "Bearer",
    ) -> None:
        """`api_key` is sent in `auth_header`, after `auth_scheme` and a space when there is one
        (`Authorization: Bearer KEY`; Anthropic's `x-api-key: KEY` is `auth_header="x-api-key",
        auth_scheme=None`). The key, and the value of every header in `headers` that carries a
        credential (`CREDENTIAL_HEADERS`), is registered for redaction before any request."""
        self.base_url = normalize_base_url(base_url)
        # Requests in flight at once: --lsrb-concurrency, adapted to the server (adapters.concurrency).
        self.limit = AdaptiveLimit(in_flight or max(1, pool_size))
        self.retry = retry
        self.timeout_s = timeout_s
        # How long a request's budget reservation may live: a request has a whole-response
        # deadline (`timeout_s`, after a connect of at most as long), so a live one ends sooner.
        self.lease_s = 2 * timeout_s + 30.0
        # This endpoint's key and every other key of the run: a server may echo any it learnt.
        given = {name.lower(): value for name, value in (headers or {}).items()}
        register_key(api_key, urlsplit(self.base_url).password, *credentials_in(given))
        # safe to print and record: no `user:password@`, no key anywhere else in it (`?key=...`)
        self.shown_url = RUN_KEYS.redact(strip_userinfo(self.base_url))
        # The server's outage state: the run's (shared by its processes), else this process's.
        folder = None if outage_dir is None else Path(outage_dir)
        self.outage = Outage(self.shown_url, retry.total_s, folder)
        all_headers = {"Accept": "application/json", "User-Agent": "pytest-lsrb", **(headers or {})}
        if api_key:
            all_headers[auth_header] = f"{auth_scheme} {api_key}" if auth_scheme else api_key
        pool = max(1, pool_size)
        self.client = httpx.Client(
            base_url=self.base_url,
            headers=all_headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            # A proxy from the environment must not sit between us and a local server.
            trust_env=not is_loopback(self.base_url),
            follow_redirects=False,
        )
        self.state = EndpointState()
        self._lock = threading.Lock()
        self._client_closed = False

    # -- one request ---------------------------------------------------------------------------

    def _once(self, method: str, path: str, payload: Any, parse: Callable[[Any], T]) -> T | Failure:
        received = self._receive(method, path, payload)
        if isinstance(received, Failure):
            return received
        response, body = received
        status = response.status_code
        text = self.redact(body.decode("utf-8", errors="replace"))  # before anything is cut
        if status >= 300:
            return Failure(
                classify_status(status, body),
                clip(self.redact(f"HTTP {status}: {error_text(text)}")),  # again: JSON escapes
                status=status,
                retry_after_s=parse_retry_after(response.headers),
            )
        try:
            data = loads_json(body)  # its one failure is ValueError, nesting too deep included
        except ValueError as exc:
            return Failure(
                "bad_response", clip(f"not JSON ({exc}); the body starts {text[:80]!r}"), status=status
            )
        try:
            return parse(data)  # as the server sent it: redacted only where it leaves the process
        except ResponseError as exc:
            return Failure(exc.kind, clip(self.redact(str(exc))), status=status)
        except RecursionError:  # parsed, but too deep for the parser's walk over it
            return Failure("bad_response", "not usable JSON (nested too deeply)", status=status)

    def _receive(self, method: str, path: str, payload: Any) -> tuple[httpx.Response, bytes] | Failure:
        """The response and its whole body, within `timeout_s` in all (not just per read)."""
        deadline = time.monotonic() + self.timeout_s
        try:
            with self.client.stream(method, path, json=payload) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():  # decoded: the cap also stops a zip bomb
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        return Failure(
                            "bad_response",
                            f"the body is larger than {MAX_BODY_BYTES} bytes",
                            status=response.status_code,
                        )
                    if time.monotonic() > deadline:
                        return Failure(
                            "timeout",
                            f"the answer took longer than {self.timeout_s:g}s "
                            "in all (the server sends it too slowly)",
                        )
                return response, b"".join(chunks)
        except httpx.TimeoutException as exc:
            return Failure("timeout", f"no answer within {self.timeout_s:g}s ({type(exc).__name__})")
        except httpx.ConnectError as exc:  # refused (or no such host): nothing answered at all
            return Failure("connection", clip(self.redact(f"{type(exc).__name__}: {exc}")), refused=True)
        except httpx.HTTPError as exc:  # reset, closed mid-body, bad URL
            return Failure("connection", clip(self.redact(f"{type(exc).__name__}: {exc}")))
        except RuntimeError as exc:  # the client was closed under us (the run is ending)
            return Failure("connection", f"{type(exc).__name__}: {exc}")

    # -- with retries --------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        payload: Any,
        *,
        parse: Callable[[Any], T],
        seed: int,
        max_retries: int | None = None,
        retry_kinds: frozenset[str] = RETRYABLE_GENERATION_KINDS,
        admission: Admission | None = None,
        watch_outage: bool = True,
    ) -> Outcome[T]:
        """Send until success, a non-retryable failure (a kind not in `retry_kinds`), the retry
        cap, or the end of the server's outage window; never raises. `admission`: the run's
        budget, asked for each request sent while its permit is held (see `adapters.concurrency`).
        `watch_outage`: whether this call tells and follows the server's outage state (a
        generation call does; a check before the run does not)."""
        policy = self.retry if max_retries is None else replace(self.retry, max_retries=max_retries)
        # (--lsrb-retry-time 0: no retries, so no outage either: each call fails on its own)
        outage = self.outage if watch_outage and policy.total_s > 0 else None
        rng = random.Random(stable_hash("backoff", seed))  # deterministic jitter per attempt
        start = time.perf_counter()
        first_failure: float | None = None  # the retry time counts from here
        token = object()  # this call's entry on the WAITING board
        sent = 0
        last: Failure | None = None  # this call's latest failure
        try:
            while True:
                # Another thread met a quota/auth refusal, or the run is ending: send nothing more.
                stopped = self._stopped_failure()
                if stopped is not None:
                    return self._outcome(None, stopped, sent, start)
                queued = time.perf_counter()
                if not self.limit.acquire(self.state.stop, CURRENT.get()):  # in test order
                    continue  # stopped while waiting for a permit: the check above says why
                if outage is not None and outage.over():  # it ended while this call queued
                    self.limit.release(NOT_SENT)
                    unsent = Failure("connection", "not sent: the run is stopping")
                    return self._outcome(None, self._down(last or unsent, outage.state().since), sent, start)
                if admission is not None and (admitted := admission.enter(self.lease_s)) is not True:
                    self.limit.release(NOT_SENT)  # never wait for the budget holding a permit
                    start += time.perf_counter() - queued
                    if admitted is False:
                        return self._outcome(None, Failure("connection", "stopped: the budget"), sent, start)
                    admission.pause(self.state.stop)
                    continue
                start += time.perf_counter() - queued  # our own queue is no time of the model's
                sent += 1
                sent_at = time.time()
                result: T | Failure = Failure("connection", "no answer")
                try:
                    result = self._once(method, path, payload, parse)
                    if isinstance(result, Failure) and result.kind in FATAL_GENERATION_KINDS:
                        # Stop before the permit goes back: a waiting request must not be sent after it.
                        self._go_fatal(result)
                finally:
                    if admission is not None:  # settled before the permit goes back
                        admission.leave(None if isinstance(result, Failure) else getattr(result, "usage", {}))
                    self.limit.release(result.kind if isinstance(result, Failure) else None)
                transient = isinstance(result, Failure) and result.kind in RETRYABLE_GENERATION_KINDS
                if (
                    outage is not None
                    and not transient
                    and (not isinstance(result, Failure) or result.status is not None)
                ):
                    outage.answered()  # an answer, or an error the server chose to send: it is up
                if not isinstance(result, Failure):
                    return self._outcome(result, None, sent, start)
                last = result
                if result.kind in FATAL_GENERATION_KINDS or result.kind not in retry_kinds:
                    return self._outcome(None, result, sent, start)
                down = outage.failed(sent_at) if outage is not None and transient else None
                if down is not None and is_over(down.since, down.last, down.window):
                    return self._outcome(None, self._down(result, down.since), sent, start)
                now = time.monotonic()
                first_failure = now if first_failure is None else first_failure
                # A call's own window (it bounds a call that fails while others get answers) ends
                # a little after the run's, so that with no answer at all the run's ends first.
                spent_s = now - first_failure - (OUTAGE_GRACE_S if down is not None else 0.0)
                wait = policy.next_wait(sent - 1, spent_s, result.retry_after_s, rng, result.refused)
                if wait is None:
                    return self._outcome(None, result, sent, start)
                if down is not None:  # wake by the outage window's end: one last try tells
                    wait = min(wait, time_left(down.since, time.time(), down.window) + OUTAGE_MARGIN_S)
                log.info(
                    "%s %s%s: %s; retry %d/%d in %.2fs (retrying for %gs at most)",
                    method,
                    self.shown_url,
                    path,
                    result.message,
                    sent,
                    policy.max_retries,
                    wait,
                    policy.total_s,
                )
                WAITING.waiting(id(token), sent, first_failure)
                self.state.stop.wait(wait)  # woken early when the endpoint stops
                WAITING.done(id(token))  # sending again: no longer waiting (until it fails again)
                if outage is not None and outage.over():  # another call or process saw it through
                    return self._outcome(None, self._down(result, outage.state().since), sent, start)
        finally:
            WAITING.done(id(token))

    def _down(self, failure: Failure, since: float | None) -> Failure:
        """The failure a call ends with when the server's outage is over (the run stops)."""
        from pytest_lsrb.adapters.outage import clock_time

        when = clock_time(since) if since is not None else "?"
        return replace(
            failure,
            message=clip(
                f"the server has been down since {when} (every call failed for "
                f"{self.retry.total_s:g}s); {failure.message}"
            ),
        )

    def _outcome(self, value: T | None, failure: Failure | None, sent: int, start: float) -> Outcome[T]:
        return Outcome(value, failure, sent, (time.perf_counter() - start) * 1000.0)

    def _go_fatal(self, failure: Failure) -> None:
        with self._lock:
            if self.state.fatal is None:
                self.state.fatal = failure
                log.warning(
                    "%s refused with %s (%s); no further requests will be sent",
                    self.shown_url,
                    failure.kind,
                    failure.message,
                )
        self.state.stop.set()

    def _stopped_failure(self) -> Failure | None:
        fatal = self.state.fatal
        if fatal is not None:
            return Failure(fatal.kind, f"stopped: the endpoint already refused ({fatal.message})")
        if self.state.closed:
            return Failure("connection", "stopped: the adapter was closed")
        return None

    def redact(self, text: str) -> str:
        return RUN_KEYS.redact(text)

    def interrupt(self) -> None:
        """Wake threads waiting to retry and refuse new calls; the pool stays open until `close`."""
        with self._lock:
            self.state.closed = True
        self.state.stop.set()

    def close(self) -> None:
        """Wake threads waiting to retry, then close the pool (idempotent)."""
        self.interrupt()
        with self._lock:
            if self._client_closed:
                return
            self._client_closed = True
        self.client.close()


@dataclass(frozen=True)
class Reply:
    """What a response parser reads out of one successful generation response."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None


REPLY_FIELD_LIMIT = 200  # characters kept of a server-reported name (model, fingerprint, reason)


def reply_string(data: Mapping[str, Any], key: str) -> str | None:
    """A short string field of a response (`model`, `finish_reason`...); odd values are dropped."""
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:REPLY_FIELD_LIMIT]


def to_result(outcome: Outcome[Reply]) -> GenerationResult:
    """A generation outcome as the engine's neutral result."""
    if outcome.failure is not None:
        return GenerationResult.failure(
            outcome.failure.kind, outcome.failure.message, outcome.latency_ms, outcome.http_attempts
        )
    assert outcome.value is not None
    reply = outcome.value
    return GenerationResult(
        text=reply.text,
        latency_ms=outcome.latency_ms,
        http_attempts=outcome.http_attempts,
        usage=dict(reply.usage),
        finish_reason=reply.finish_reason,
        served_model=reply.served_model,
        system_fingerprint=reply.system_fingerprint,
    )


def api_key_from_env(name: str | None) -> str | None:
    """The key held by the environment variable `name` (options.resolve checked it is set)."""
    import os

    if not name:
        return None
    return os.environ.get(name) or None


def token_usage(raw: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, int]:
    """Integer usage counters renamed to our spelling; anything odd is dropped, not fatal."""
    out: dict[str, int] = {}
    for theirs, ours in fields.items():
        value = raw.get(theirs)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[ours] = value
    return out


SHOWN_MODELS = 12


def shown_models(names: list[str]) -> str:
    """The models a server offers, for an error message (at most SHOWN_MODELS of them, keys
    redacted: the names are the server's words)."""
    if not names:
        return "none"
    more = f", … ({len(names) - SHOWN_MODELS} more)" if len(names) > SHOWN_MODELS else ""
    return RUN_KEYS.redact(", ".join(sorted(names)[:SHOWN_MODELS]) + more)
