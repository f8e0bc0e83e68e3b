"""Keeping secrets out of records, logs and caches: redact known values, strip URL credentials.

A key can come back from a server in more spellings than its own: URL-encoded (a proxy that
echoes the request line), or inside base64 (an echoed `Authorization: Basic` header, where the key
follows `user:` at any byte offset). `Secrets` knows every such form of every key and replaces
them all; callers redact a text *before* they cut it to length, so no prefix of a key survives a
cut either. A server may also echo the start of a key on its own (OpenAI's "Incorrect API key
provided: sk-proj-abcd****qrst"): any prefix of a key of at least `MIN_PREFIX` characters is
redacted wherever it stands. A key split by control or invisible characters (`sk-ab\x00cd`,
`sk-ab\\r\\ncd` as JSON or a repr writes them) is still the key: each form matches with such
characters between its letters.

`RUN_KEYS` holds every key this process sends anywhere (the model's, the judge's, a Kimina
server's): whoever reads a key from the environment registers it, every endpoint redacts what it
receives with all of them, and the first registration makes every log record redacted too
(`logging.setLogRecordFactory`: any logger, any level, any handler, tracebacks included).
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

MASK = "***"
# Shorter base64 fragments than this could match ordinary text; a key's own spelling is always
# redacted, whatever its length.
MIN_FORM = 8
# An echoed start of a key this long or longer is the key's (shorter ones are ordinary text).
MIN_PREFIX = 8
# What may stand between two letters of a key that is still the key: C0/C1 controls, soft hyphen,
# zero-width and bidi marks, BOM, and their escaped spellings in JSON or a Python repr.
_SPLIT = (
    r"(?:[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]"
    r"|\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[rnt0abfv]))*"
)


def _split_tolerant(form: str) -> str:
    """A pattern for `form` that also matches it with control characters between its letters."""
    return _SPLIT.join(re.escape(c) for c in form)


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


def _prefix_pattern(secret: str) -> str | None:
    """A pattern matching the longest prefix of `secret` that is at least `MIN_PREFIX` long: the
    first `MIN_PREFIX` characters, then each following one optional in turn (linear in the key's
    length, unlike one alternative per prefix)."""
    if len(secret) <= MIN_PREFIX:
        return None
    head = _split_tolerant(secret[:MIN_PREFIX])
    tail = ""
    for char in reversed(secret[MIN_PREFIX:]):
        tail = f"(?:{_SPLIT}{re.escape(char)}{tail})?"
    return head + tail


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
        prefixes: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= secret_forms(secret)
                prefix = _prefix_pattern(secret)
                if prefix is not None:
                    prefixes.add(prefix)
        # Longest first, so a form that contains another is replaced whole; the prefix patterns
        # last (each takes the longest prefix it can, so a whole key is matched by its own form).
        ordered = sorted(forms, key=lambda f: (-len(f), f))
        alternatives = [*map(_split_tolerant, ordered), *sorted(prefixes)]
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None

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


class KeyRing:
    """Every key this process holds (thread-safe); `secrets()` redacts all their forms."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: frozenset[str] = frozenset()
        self._secrets = Secrets(())

    def add(self, *keys: str | None) -> None:
        new = {k for k in keys if k} - self._keys
        if not new:
            return
        with self._lock:
            self._keys = self._keys | new
            self._secrets = Secrets(self._keys)
        install_log_redaction()

    def secrets(self) -> Secrets:
        return self._secrets

    def redact(self, text: str) -> str:
        return self._secrets.redact(text)


RUN_KEYS = KeyRing()


def register_key(*keys: str | None) -> None:
    """Add keys this process sends somewhere: from now on they are redacted everywhere."""
    RUN_KEYS.add(*keys)


_LOG_FACTORY_LOCK = threading.Lock()
_log_factory_installed = False


def install_log_redaction() -> None:
    """Make every log record carry its message (and traceback) with every run key redacted."""
    global _log_factory_installed
    with _LOG_FACTORY_LOCK:
        if _log_factory_installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            secrets = RUN_KEYS.secrets()
            if not secrets:
                return record
            try:
                message = record.getMessage()
            except Exception:  # a malformed %-format: logging reports it itself later
                return record
            clean = secrets.redact(message)
            if clean != message:
                record.msg, record.args = clean, None
            if record.exc_info and not record.exc_text:
                record.exc_text = secrets.redact(logging.Formatter().formatException(record.exc_info))
            return record

        logging.setLogRecordFactory(factory)
        _log_factory_installed = True


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
