"""The values of run options, checked before the run: one sentence per bad value, exit 4 under
pytest (2 from `lsrb`), never a traceback, a hang or an error in every test.

A numeric option must be finite and inside its bounds (`Option.bounds`, declared with the
option). An upper bound stands where a larger value would hang the run before its first test
(every item x sample is one test, created up front) or let one call or retry loop run for days.
Strings must be text (a command-line byte that is not UTF-8 arrives as a lone surrogate), and the
base URL must parse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import lone_surrogate
from pytest_lsrb.engine.option_spec import Option


def flag(key: str) -> str:
    return "--lsrb-" + key.replace("_", "-")


def check_values(values: Mapping[str, Any], options: Iterable[Option] | None = None) -> None:
    """Raise LsrbUsageError naming the first option whose value is out of its bounds (each
    option declares its own, `Option.bounds`) or not text. `options`: those the run holds
    (default: every installed one)."""
    if options is None:
        from pytest_lsrb.engine.option_sets import installed_sets

        options = installed_sets().options()
    for opt in options:
        value = values.get(opt.key)
        if opt.bounds is None or value is None or opt.bounds.holds(float(value)):
            continue
        raise LsrbUsageError(f"{opt.flag_name}: expected {opt.bounds.describe()} (got {value!r}).")
    for key, value in values.items():
        if isinstance(value, str):
            hit = lone_surrogate(value)
            if hit is not None:
                raise LsrbUsageError(
                    f"{flag(key)}: the value is not UTF-8 text (it holds {hit[1]}, a byte the "
                    "command line could not decode or a lone surrogate)."
                )
    check_base_url(values.get("base_url"))


def check_base_url(url: str | None) -> None:
    """An http(s) URL with a host. The value is not repeated in the message: it may hold a key."""
    if url is None:
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is what refuses 'http://host:99999'
    except ValueError as exc:
        raise LsrbUsageError(f"--lsrb-base-url: not a valid URL ({exc}).") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LsrbUsageError(
            "--lsrb-base-url: expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]."
        )
