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
        data: dict[str, Any] = tomllib.loads(text.removeprefix(BOM))
        return data
    except tomllib.TOMLDecodeError as exc:
        raise LsrbUsageError(f"{path}: not valid TOML ({exc}).") from None
    except RecursionError:
        raise LsrbUsageError(f"{path}: not valid TOML (arrays or tables nested too deeply).") from None
    except ValueError:  # an integer with more digits than int() accepts
        raise LsrbUsageError(f"{path}: not valid TOML (a number with too many digits).") from None


# A code point between U+D800 and U+DFFF alone (a pair is decoded into one character). JSON may
# spell one as an escape (`"\\ud800"`), but no UTF-8 text, hash input, terminal or HTML page can
# hold it: every input file refuses a string holding one (model answers are escaped instead).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> tuple[str, str] | None:
    """`(field, code point)` of the first string in `value` (keys, values and list items, at any
    depth) holding a lone surrogate, e.g. `("tags.2", "\\ud800")`; None when there is none."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        field, item = stack.pop()
        if isinstance(item, str):
            found = _LONE_SURROGATE.search(item)
            if found:
                return field or "(value)", f"\\u{ord(found.group()):04x}"
        elif isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                name = f"{field}.{key}" if field else str(key)
                stack += [(name, sub), (name, key)]  # the key first: it names the field
        elif isinstance(item, (list, tuple)):
            stack += [
                (f"{field}.{i}" if field else str(i), sub) for i, sub in reversed(list(enumerate(item)))
            ]
    return None


def lone_surrogate_problem(value: Any) -> str | None:
    """`field 'x' holds a lone surrogate (\\ud800), ...` for the first one in `value`, or None."""
    hit = lone_surrogate(value)
    if hit is None:
        return None
    field, code = hit
    return f"field '{field}' holds a lone surrogate ({code}), which no UTF-8 text can hold; remove it"


def refuse_lone_surrogates(value: Any, where: str) -> None:
    """Raise `where: field 'x' holds a lone surrogate ...` when `value` holds one."""
    problem = lone_surrogate_problem(value)
    if problem is not None:
        raise LsrbUsageError(f"{where}: {problem}.")


def surrogate_line(text: str) -> int | None:
    """The line of the first JSON escape of a lone surrogate in `text`, for naming where it is."""
    found = _LONE_ESCAPE.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def shown(value: Any, limit: int = 60) -> str:
    """A value as a short JSON-ish snippet for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
