"""Keeping secrets out of records, logs and caches: redact known values, strip URL credentials.

A key can come back from a server in more spellings than its own: URL-encoded (a proxy that
echoes the request line), or inside base64 (an echoed `Authorization: Basic` header, where the key
follows `user:` at any byte offset). `Secrets` knows every such form of every key and replaces
them all; callers redact a text *before* they cut it to length, so no prefix of a key survives a
cut either.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

MASK = "***"
# Shorter base64 fragments than this could match ordinary text; a key's own spelling is always
# redacted, whatever its length.
MIN_FORM = 8


def _base64_cores(raw: bytes) -> set[str]:
    """The base64 characters that spell `raw` whatever precedes it (0, 1 or 2 bytes mod 3) and
    whatever follows it, in the standard and the URL-safe alphabet."""
    cores: set[str] = set()
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + raw).decode("ascii").rstrip("=")
        skip = (0, 2, 3)[lead]  # characters that also hold bits of the leading bytes
        end = len(encoded) - (1 if (lead + len(raw)) % 3 else 0)  # the last one may hold the next
        core = encoded[skip:end]
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def secret_forms(secret: str) -> set[str]:
    """Every spelling of `secret` to redact: itself, URL-encoded, and inside base64."""
    if not secret:
        return set()
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}
    forms |= {c for c in _base64_cores(raw) if len(c) >= MIN_FORM}
    return {f for f in forms if f}


class Secrets:
    """The secrets of one endpoint and the one pattern that finds all their forms."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= secret_forms(secret)
        # Longest first, so a form that contains another is replaced whole.
        ordered = sorted(forms, key=lambda f: (-len(f), f))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def redact_tree(self, value: Any) -> Any:
        """A parsed JSON value with every string in it (keys too) redacted."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_tree(v) for v in value]
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_tree(v) for k, v in value.items()}
        return value


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every form of every secret replaced by `***`."""
    return Secrets(secrets).redact(text)


def strip_userinfo(url: str) -> str:
    """The URL without `user:password@` (URLs are logged and recorded; credentials must not be)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def key_problem(key: str) -> str | None:
    """Why `key` cannot be sent in an HTTP header (never quoting the key), or None."""
    if any(ord(c) > 126 for c in key):
        return "holds a non-ASCII character"
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        return (
            "holds a control character (a newline or carriage return, perhaps from the file it was read from)"
        )
    if key != key.strip():
        return "starts or ends with a space"
    return None
