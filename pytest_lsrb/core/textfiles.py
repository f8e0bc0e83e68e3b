"""Reading files a user hands us (indexes, SorryDB dumps, profiles, manifests, earlier runs).

The standard library fails on hostile text in ways its callers rarely catch: `json.loads` raises
RecursionError on deeply nested arrays and a bare ValueError on integers longer than Python's
int-string limit; `tomllib` does the same; reading text raises UnicodeDecodeError. Here each of
those becomes the error the caller already handles (`json.JSONDecodeError`, or an
`LsrbUsageError` naming the file), so a bad file always ends in one sentence.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

_LONG_NUMBER = re.compile(r"\d{1000,}")
BOM = "\ufeff"


def loads_json(text: str | bytes) -> Any:
    """`json.loads` whose only failure is `json.JSONDecodeError` (with a line and column).

    A leading byte-order mark is ignored (editors on Windows write one).
    """
    if isinstance(text, (bytes, bytearray)):
        text = decode_utf8(bytes(text))
    text = text.removeprefix(BOM)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("arrays or objects nested too deeply", text, 0) from None
    except ValueError:  # an integer with more digits than int() accepts
        found = _LONG_NUMBER.search(text)
        raise json.JSONDecodeError(
            "a number with too many digits", text, found.start() if found else 0
        ) from None


def decode_utf8(raw: bytes) -> str:
    """UTF-8 text, or a JSONDecodeError at the first bad byte (its line and column are exact)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8")
        doc = good + raw[exc.start :].decode("utf-8", "replace")
        raise json.JSONDecodeError(
            f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x})", doc, len(good)
        ) from None


def json_problem(exc: json.JSONDecodeError) -> str:
    """`line L column C: what` for a JSONDecodeError."""
    return f"{json_message(exc)} at line {exc.lineno} column {exc.colno}"


def json_message(exc: json.JSONDecodeError) -> str:
    """The decoder's message without its own dangling "at" ("Invalid control character at")."""
    return exc.msg.removesuffix(" at")


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; any failure is one sentence naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise LsrbUsageError(f"{path}: not valid UTF-8 text.") from None
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    try:
        return tomllib.loads(text.removeprefix(BOM))
    except tomllib.TOMLDecodeError as exc:
        raise LsrbUsageError(f"{path}: not valid TOML ({exc}).") from None
    except RecursionError:
        raise LsrbUsageError(f"{path}: not valid TOML (arrays or tables nested too deeply).") from None
    except ValueError:  # an integer with more digits than int() accepts
        raise LsrbUsageError(f"{path}: not valid TOML (a number with too many digits).") from None


def shown(value: Any, limit: int = 60) -> str:
    """A value as a short JSON-ish snippet for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
