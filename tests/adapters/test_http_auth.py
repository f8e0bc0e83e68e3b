"""The HTTP endpoint sends a key in the header its API names (issue #49): `Authorization: Bearer
KEY` by default, `x-api-key: KEY` for Anthropic's; and every credential it is handed, the key or a
credential header an adapter adds itself, is registered for redaction before any request."""

from __future__ import annotations

import secrets

from pytest_lsrb.adapters.http import HttpEndpoint, credentials_in
from pytest_lsrb.adapters.retry import RetryPolicy
from pytest_lsrb.core.redaction import RUN_KEYS


def endpoint(**kwargs: object) -> HttpEndpoint:
    return HttpEndpoint("http://127.0.0.1:9", timeout_s=1.0, pool_size=1, retry=RetryPolicy(0), **kwargs)


def fresh() -> str:
    return "k-" + secrets.token_hex(16)


def test_the_key_goes_in_the_header_the_api_names_and_is_registered() -> None:
    bearer, plain = fresh(), fresh()
    assert endpoint(api_key=bearer).client.headers["authorization"] == f"Bearer {bearer}"
    anthropic = endpoint(api_key=plain, auth_header="x-api-key", auth_scheme=None)
    assert anthropic.client.headers["x-api-key"] == plain and "authorization" not in anthropic.client.headers
    for key in (bearer, plain):
        assert key not in RUN_KEYS.redact(f"the server said {key}")


def test_a_credential_header_an_adapter_adds_itself_is_registered_too() -> None:
    own, token = fresh(), fresh()
    ep = endpoint(
        headers={"X-Api-Key": own, "Proxy-Authorization": f"Basic {token}", "anthropic-version": "1"}
    )
    assert ep.client.headers["x-api-key"] == own
    shown = RUN_KEYS.redact(f"echo: {own} / {token}")
    assert own not in shown and token not in shown
    assert credentials_in({"anthropic-version": "2023-06-01", "user-agent": "x"}) == []
