"""Shared pieces of the hostile-input tests: mutation strategies and the one-sentence check.

A loader given a broken file must end in one `LsrbUsageError` whose message is one printable
line that names the file (and, where the mutation tells us, the line or field) and ends with a
full stop. Anything else escaping the loader (a traceback) is a bug.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from pytest_lsrb.core.errors import LsrbUsageError

# Any JSON value, small: what a hostile file puts where a field should be.
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
# Any code point at all: control characters, lone surrogates, RTL marks, NUL.
any_character = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
# Text that stresses printing.
hostile_text = st.text(alphabet=any_character, max_size=20)


def assert_one_sentence(message: str, path: Path | str) -> None:
    """One printable line naming `path`, ending with a full stop."""
    assert "\n" not in message and "\r" not in message, message
    assert str(path) in message, f"the message does not name {path}: {message}"
    assert message.endswith("."), message
    assert "Traceback" not in message
    message.encode("utf-8")  # printable: no lone surrogates left to crash a terminal


def outcome(load: Callable[[], Any]) -> tuple[Any, str | None]:
    """(result, None) when `load` accepted the input, (None, message) for a usage error.

    Any other exception propagates: that is the bug hypothesis is looking for.
    """
    try:
        return load(), None
    except LsrbUsageError as exc:
        return None, str(exc)


@st.composite
def byte_mutations(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` after 1-3 random byte-level edits: truncation, insertion, overwrite, deletion, splice."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "insert", "overwrite", "delete", "duplicate"]))
        pos = draw(st.integers(0, len(out)))
        if op == "truncate":
            del out[pos:]
        elif op == "insert":
            out[pos:pos] = draw(
                st.binary(min_size=1, max_size=8)
                | st.sampled_from(
                    [
                        b"\xff",
                        b"\xc3",
                        b"\x00",
                        b"\n",
                        b"\r",
                        b"{",
                        b"}",
                        b"[",
                        b"]",
                        b'"',
                        b",",
                        b":",
                        b"\xef\xbb\xbf",
                        b"9" * 5000,
                        b"[" * 3000,
                    ]
                )
            )
        elif op == "overwrite" and pos < len(out):
            out[pos] = draw(st.integers(0, 255))
        elif op == "delete":
            end = draw(st.integers(pos, min(len(out), pos + 16)))
            del out[pos:end]
        elif op == "duplicate":
            end = draw(st.integers(pos, min(len(out), pos + 64)))
            out[pos:pos] = out[pos:end]
    return bytes(out)


@st.composite
def field_mutations(draw: st.DrawFn, obj: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(`obj` with one top-level field removed, retyped or added, the field's name)."""
    key = draw(st.sampled_from(sorted(obj)) | st.text(min_size=1, max_size=8))
    changed = dict(obj)
    if key in obj and draw(st.booleans()):
        del changed[key]
    else:
        changed[key] = draw(json_values)
    return changed, key


def dumps_line(obj: Any, ascii_only: bool) -> bytes:
    """One JSON line as bytes. NaN/Infinity allowed (Python's json reads them); a lone surrogate
    becomes either a `\\ud800` escape (`ascii_only`) or the invalid UTF-8 bytes it would encode to."""
    text = json.dumps(obj, ensure_ascii=ascii_only, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")
