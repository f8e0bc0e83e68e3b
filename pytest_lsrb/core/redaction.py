"""Keeping secrets out of records, logs and caches: redact known values, strip URL credentials."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def strip_userinfo(url: str) -> str:
    """The URL without `user:password@` (URLs are logged and recorded; credentials must not be)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
