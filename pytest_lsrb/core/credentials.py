"""API keys read from the environment, checked once at start and scoped to their own server.

Each endpoint names the variable that holds its key (`--lsrb-api-key-env` for the model under
test, `--lsrb-sr-judge-api-key-env` for the judge, `kimina_api_key_env` in a Lean profile). A key
is read, checked (set, and sendable in an HTTP header: no control or non-ASCII character, no
surrounding space) and registered for redaction (core.redaction.RUN_KEYS) before any model call;
the sentence that refuses it names the variable, never the key. A key goes only to the origin
(scheme, host, port) of its own endpoint: `same_origin` is the one test of that.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import key_problem, register_key

_DEFAULT_PORTS = {"http": 80, "https": 443}


def checked_key(variable: str | None, where: str) -> str | None:
    """The key in `$variable` (None when no variable is named), checked and registered.

    `where` names the option or field that named the variable, for the refusal's sentence.
    """
    if not variable:
        return None
    value = os.environ.get(variable)
    if not value:
        raise LsrbUsageError(f"{where}: the environment variable {variable} is not set or empty.")
    problem = key_problem(value)
    if problem is not None:  # the sentence names the variable, never the key
        raise LsrbUsageError(f"{where}: the key in ${variable} {problem}; fix the variable.")
    register_key(value)
    return value


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, the default port filled in; a URL without a scheme is http."""
    parts = urlsplit(url.strip() if "://" in url else "http://" + url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def same_origin(a: str, b: str) -> bool:
    return origin(a) == origin(b)
