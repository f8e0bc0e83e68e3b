"""`lsrb serve`'s front door (tools/gateway.py; issues #46 item 7, #50 item 1): in front of a real
HTTP server speaking OpenAI's API (the fake Ollama, as llama.cpp's stand-in here; the real
llama.cpp is tests/tools/test_serve.py's), the gateway forwards requests and answers as they are,
adds the key only it knows, refuses other hosts (DNS rebinding) and other origins (no CORS header
ever), and its stop cuts a request in flight: the client sees the connection close."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fakes.ollama_server import FakeOllama
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tools.gateway import Gateway, allowed_host, host_name, is_loopback_host, same_origin

INNER_KEY = "gateway-only-key-5b2d4f60a8e1"
CHAT = {"model": "qwen2.5:7b", "messages": [{"role": "user", "content": "n : Nat ⊢ n + 0 = n"}], "seed": 1}


@pytest.fixture
def upstream() -> Iterator[FakeOllama]:
    with FakeOllama(require_key=INNER_KEY) as fake:
        yield fake


def front(fake: FakeOllama, **kwargs: Any) -> Gateway:
    host, port = fake.url.removeprefix("http://").rsplit(":", 1)
    return Gateway("127.0.0.1", 0, (host, int(port)), upstream_key=INNER_KEY, **kwargs).start()


def url(gateway: Gateway) -> str:
    host, port = gateway.address
    return f"http://{host}:{port}"


def test_requests_and_answers_go_through_as_they_are(upstream: FakeOllama) -> None:
    gateway = front(upstream)
    try:
        with httpx.Client(base_url=url(gateway)) as client:  # keep-alive: two requests, one connection
            models = client.get("/v1/models")
            chat = client.post(
                "/v1/chat/completions", json=CHAT, headers={"Authorization": "Bearer sk-client"}
            )
            direct = httpx.post(f"{upstream.url}/v1/chat/completions", json=CHAT,
                                headers={"Authorization": f"Bearer {INNER_KEY}"})  # fmt: skip
    finally:
        gateway.stop()
    assert models.status_code == 200 and "qwen2.5:7b" in models.text
    assert chat.status_code == 200 and chat.json()["choices"] == direct.json()["choices"]
    # the client's own key is replaced by the one only the gateway knows
    assert {r.headers["Authorization"] for r in upstream.chat_requests()} == {f"Bearer {INNER_KEY}"}


def test_without_its_own_key_the_clients_key_goes_through(upstream: FakeOllama) -> None:
    host, port = upstream.url.removeprefix("http://").rsplit(":", 1)
    gateway = Gateway("127.0.0.1", 0, (host, int(port)), upstream_key=None).start()
    try:
        refused = httpx.post(f"{url(gateway)}/v1/chat/completions", json=CHAT)
        keyed = httpx.post(
            f"{url(gateway)}/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {INNER_KEY}"}
        )
    finally:
        gateway.stop()
    assert refused.status_code == 401 and keyed.status_code == 200


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8080", "127.0.0.1.nip.io"])
def test_a_request_for_another_host_is_refused(upstream: FakeOllama, host: str) -> None:
    """DNS rebinding: a page on attacker.example, its name rebound to 127.0.0.1, sends `Host:
    attacker.example`."""
    gateway = front(upstream)
    try:
        answer = httpx.post(f"{url(gateway)}/v1/chat/completions", json=CHAT, headers={"Host": host})
        allowed = front(upstream, allow_hosts=["attacker.example"])
        try:
            named = httpx.get(f"{url(allowed)}/v1/models", headers={"Host": "attacker.example:1"})
        finally:
            allowed.stop()
    finally:
        gateway.stop()
    assert answer.status_code == 403 and "--allow-host" in answer.json()["error"]["message"]
    assert upstream.chat_requests() == []  # nothing reached the model
    assert named.status_code == 200 or host != "attacker.example"


@pytest.mark.parametrize("method", ["GET", "POST", "OPTIONS"])
def test_a_page_of_another_origin_is_refused_and_no_cors_header_is_sent(
    upstream: FakeOllama, method: str
) -> None:
    gateway = front(upstream)
    own = url(gateway)
    try:
        foreign = httpx.request(
            method,
            f"{own}/v1/chat/completions",
            json=CHAT if method == "POST" else None,
            headers={"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST"},
        )
        same = httpx.get(f"{own}/v1/models", headers={"Origin": own})
    finally:
        gateway.stop()
    assert foreign.status_code == 403
    assert same.status_code == 200  # a page the server itself serves (llama.cpp's web UI)
    for answer in (foreign, same):
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")]
    assert upstream.chat_requests() == []


def test_stop_cuts_a_request_in_flight(upstream: FakeOllama) -> None:
    upstream.latency_s = 60.0  # an answer that would take a minute
    gateway = front(upstream)
    outcome: dict[str, Any] = {}

    def ask() -> None:
        try:
            outcome["answer"] = httpx.post(f"{url(gateway)}/v1/chat/completions", json=CHAT, timeout=None)
        except httpx.HTTPError as exc:
            outcome["error"] = exc

    client = threading.Thread(target=ask)
    client.start()
    while upstream.in_flight == 0:  # the request is at the model
        threading.Event().wait(0.02)
    assert gateway.upstream_busy()
    assert gateway.stop() is True  # it was busy: `lsrb serve` ends its process at once
    client.join(timeout=30)  # a hang detector, not a timing
    assert not client.is_alive(), "the client was left waiting"
    assert isinstance(outcome.get("error"), (httpx.RemoteProtocolError, httpx.ReadError)), outcome
    with pytest.raises(httpx.ConnectError):  # and nothing listens any more
        httpx.get(f"{url(gateway)}/v1/models")


def test_a_client_that_hangs_up_frees_the_model(upstream: FakeOllama) -> None:
    """A client's own timeout closes its connection: the gateway closes llama.cpp's too, so the
    slot is not kept decoding an answer nobody waits for."""
    upstream.latency_s = 60.0
    gateway = front(upstream)
    try:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{url(gateway)}/v1/chat/completions", json=CHAT, timeout=0.5)
        for _ in range(500):  # the fake notes the request's end when its connection goes
            if gateway.in_flight == 0:
                break
            threading.Event().wait(0.02)
        assert gateway.in_flight == 0 and gateway.left_at is not None
    finally:
        gateway.stop()


@given(st.sampled_from(["localhost", "127.0.0.1", "::1", "[::1]", "127.8.9.1"]))
def test_loopback_names_are_loopback(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "gpu-box.lab"])
def test_other_binds_are_not(host: str) -> None:
    assert not is_loopback_host(host)


@given(st.ip_addresses(), st.integers(1, 65535))
def test_any_ip_address_may_be_asked_for(ip: Any, port: int) -> None:
    """A rebound domain name never arrives as an IP address: those are the machine's own."""
    header = f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"
    assert host_name(header) == str(ip) and allowed_host(host_name(header), frozenset())


def test_names_and_origins() -> None:
    assert host_name("Example.ORG:80") == "example.org" and host_name("[::1]") == "::1"
    assert not allowed_host("example.org", frozenset()) and allowed_host(
        "example.org", frozenset({"example.org"})
    )
    assert same_origin("http://127.0.0.1:8080", "127.0.0.1:8080")
    assert not same_origin("http://127.0.0.1:8081", "127.0.0.1:8080")
    assert not same_origin("null", "127.0.0.1:8080") and not same_origin("file://", "")
