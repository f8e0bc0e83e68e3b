"""The prompt hash a record carries: SHA-256 of the prompt's messages as `json.dumps` writes them
(`[[role, content], ...]`, ensure_ascii=False, default separators), so two runs that asked the
same thing can be told apart from two that did not, whatever the family."""

from __future__ import annotations

import functools
import hashlib
from json.encoder import encode_basestring as _json_string  # json's, ensure_ascii=False
from typing import Any

from pytest_lsrb.adapters.base import Message


def prompt_hash(messages: tuple[Message, ...]) -> str:
    """SHA-256 of `json.dumps([[role, content], ...], ensure_ascii=False)` (default separators).

    Spelled out with json's own string encoder: the same text without an encoder object, its
    circular-reference table and a list of lists per prompt (tests/engine/test_prompt_hash.py
    holds it equal to json.dumps). Every prompt of a suite starts with the same system message,
    so the hash of everything before the last message is taken once and continued from a copy."""
    if not messages:
        return hashlib.sha256(b"[]").hexdigest()
    hashed = _hashed_head(messages[:-1]).copy()
    hashed.update(f"{_json_message(messages[-1])}]".encode())
    return str(hashed.hexdigest())


def _json_message(message: Message) -> str:
    return f"[{_json_string(message.role)}, {_json_string(message.content)}]"


@functools.lru_cache(maxsize=64)
def _hashed_head(head: tuple[Message, ...]) -> Any:
    """SHA-256 fed with the prompt's JSON text up to its last message (copy it before adding)."""
    return hashlib.sha256("".join(["[", *(f"{_json_message(m)}, " for m in head)]).encode())
