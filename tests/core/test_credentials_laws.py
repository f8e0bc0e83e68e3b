"""Where a key may be written (issue #38, item 8): no URL's credentials on a printed or child
command line, no key pasted as a variable name quoted back, every prefix of 8+ characters of a key
masked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.core.credentials import (
    USERINFO_ENV,
    child_command,
    looks_like_key,
    shown_command,
    url_with_env_userinfo,
    variable_problem,
)
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import MIN_PREFIX, Secrets

KEY_CHARS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=9)


@given(KEY_CHARS, st.integers(min_value=MIN_PREFIX, max_value=200), st.text(max_size=30))
def test_every_prefix_of_eight_or_more_is_masked(key: str, n: int, around: str) -> None:
    secrets = Secrets([key])
    shown = secrets.redact(f"{around}[{key[:n]}]{around}")
    assert key[:MIN_PREFIX] not in shown


def test_shorter_prefixes_are_ordinary_text() -> None:
    assert Secrets(["sk-proj-abcdefgh"]).redact("sk-proj and more") == "sk-proj and more"


@pytest.mark.parametrize(
    "words",
    [
        ["lsrb", "run", "x", "--lsrb-base-url=http://u:SECRETpw1@h:8/v1"],
        ["pytest", "--lsrb-base-url", "https://u:SECRETpw1@h/v1", "-q"],
    ],
)
def test_a_child_gets_the_url_credentials_by_environment(words: list[str]) -> None:
    env: dict[str, str] = {}
    out = child_command(words, env)
    assert env == {USERINFO_ENV: "u:SECRETpw1"}
    assert not any("SECRETpw1" in w for w in out) and any("@" not in w and "://h" in w for w in out)
    shown, stripped = shown_command(words)
    assert stripped and not any("SECRETpw1" in w for w in shown)


def test_the_variable_fills_a_url_without_credentials() -> None:
    # (passwords registered here are masked in this process from now on: distinctive ones)
    env = {USERINFO_ENV: "u:pw-3c9e1f7a2b"}
    assert url_with_env_userinfo("http://h:1/v1", env) == "http://u:pw-3c9e1f7a2b@h:1/v1"
    own = "http://a:pw-8d2e6b0c4f@h/v1"
    assert url_with_env_userinfo(own, env) == own  # its own win
    with pytest.raises(LsrbUsageError):
        url_with_env_userinfo("http://h/v1", {USERINFO_ENV: "u:p\nw"})


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        ("OPENAI_API_KEY", False),
        ("my_key", False),
        ("sk-proj-abc123", True),
        ("hf_AbCdEfGhIjKlMnOpQrStUv123", True),
        ("aB3dE6gH9jK2mN5pQ8sT", True),
        ("1BAD", True),
        ("has space", True),
    ],
)
def test_a_key_shaped_variable_name_is_refused(value: str, refused: bool) -> None:
    assert (variable_problem(value) is not None) is refused
    if variable_problem(value) is not None:
        assert value not in str(variable_problem(value))
    assert looks_like_key(value) is (refused and " " not in value and value != "1BAD")
