"""Rows: validated JSONL input files (indexes, problem indexes) and their content hashes.

Every row that enters the system goes through a pydantic model. A bad row stops the run before
any model is called, with one sentence naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import json_message, loads_json, refuse_lone_surrogates, shown

# The canonical JSON: json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=False),
# built once (json.dumps builds a new encoder on every call that sets an option).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(model: BaseModel) -> str:
    """SHA-256 of a model's canonical JSON (sorted keys, no whitespace, UTF-8).

    A row of strings, integers, booleans, nulls and lists of strings (an index row) is spelled by
    pydantic-core's serializer, in key order, about three times faster than by json's encoder
    and to the same bytes: both escape the same characters the same way (checked for every code
    point). Anything else (floats, nested objects) goes through json's encoder itself.
    """
    data = model.model_dump(mode="json")
    if all(map(_spelled_alike, data.values())):
        canonical = to_json({key: data[key] for key in sorted(data)})
    else:
        canonical = _CANONICAL.encode(data).encode("utf-8")
    return hashlib.sha256(canonical).hexdigest()


def _spelled_alike(value: Any) -> bool:
    """Whether json's canonical encoder and pydantic-core's `to_json` spell `value` the same."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    return kind is list and all(type(item) is str for item in value)


M = TypeVar("M", bound=BaseModel)


def describe_validation_error(err: ValidationError, prefix: str = "") -> str:
    """The first problem in a pydantic error, as `field 'x': what was expected`.

    `prefix` names where the validated object sits in its file (e.g. `config.`).
    """
    first = err.errors()[0]
    loc = prefix + ".".join(str(p) for p in first["loc"]) or "(row)"
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"field '{loc}' is missing (required)"
    given = first.get("input")
    got = shown(given) if _is_plain(given) else type(given).__name__
    return f"field '{loc}': {msg[0].lower() + msg[1:]} (got {got})"


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """`(line_number, bytes)` of each non-blank line. Lines end at `\n` only (as `wc -l` and
    editors count them), and each is decoded on its own, so a bad byte is reported on its line."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    with handle:
        for lineno, line in enumerate(handle, start=1):
            if line.strip():
                yield lineno, line


def _parse_line(path: Path, lineno: int, line: bytes) -> Any:
    """One line's JSON. A string holding a lone surrogate is refused here, so no row, hash,
    record, message or page downstream ever meets one (pydantic's own JSON parser refuses them
    too, which sends such a line down this path)."""
    try:
        obj = loads_json(line)
    except json.JSONDecodeError as exc:
        raise LsrbUsageError(
            f"{path}:{lineno}: not valid JSON ({json_message(exc)} at column {exc.colno})."
        ) from None
    refuse_lone_surrogates(obj, f"{path}:{lineno}")
    return obj


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield `(line_number, parsed_json)` for each non-blank line; bad JSON is a usage error."""
    for lineno, line in _raw_lines(path):
        yield lineno, _parse_line(path, lineno, line)


def stream_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Validate and yield the rows of a JSONL file one at a time (memory flat in file size).

    Stops at the first bad row with file:line:field. Duplicate `item_id`s are found with 8 bytes
    of memory per row (a hash each, compared when the file ends), then named with both lines.
    """
    id_hashes = [array("Q") for _ in range(_BUCKETS)]  # by the hash's top byte
    count = 0
    for lineno, line in _raw_lines(path):
        try:
            # Fast path: pydantic parses and validates the JSON in one pass (twice as fast as
            # json.loads + model_validate on index rows).
            row = model.model_validate_json(line)
        except ValidationError:
            # Slow path, for the message (and for what only Python's json reads, e.g. NaN or a
            # byte-order mark): parse, then validate the object.
            obj = _parse_line(path, lineno, line)
            if not isinstance(obj, dict):
                raise LsrbUsageError(
                    f"{path}:{lineno}: expected a JSON object per line, got {type(obj).__name__}."
                ) from None
            try:
                row = model.model_validate(obj)
            except ValidationError as exc:
                raise LsrbUsageError(f"{path}:{lineno}: {describe_validation_error(exc)}.") from None
        item_id = getattr(row, "item_id", None)
        if isinstance(item_id, str):
            hashed = _id_hash(item_id)
            id_hashes[hashed >> 56].append(hashed)
        count += 1
        yield row
    if count == 0:
        raise LsrbUsageError(f"{path}: holds no rows.")
    _check_unique_ids(path, id_hashes)


def load_jsonl(path: Path, model: type[M]) -> list[M]:
    """All validated rows of a JSONL file (see `stream_jsonl`)."""
    return list(stream_jsonl(path, model))


def _id_hash(item_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(item_id.encode("utf-8"), digest_size=8).digest(), "big")


_BUCKETS = 256


def _first_repeat(values: array[int]) -> int | None:
    seen: set[int] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def _check_unique_ids(path: Path, id_hashes: list[array[int]]) -> None:
    """Find a repeated id hash: 8 bytes per row in 256 buckets, each checked with a small set
    (so the peak is the hashes plus one bucket's set, ~1/256 of them)."""
    dup = next((d for d in map(_first_repeat, id_hashes) if d is not None), None)
    if dup is None:
        return
    # Rare path: read the file again to name the item and both lines.
    first: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        item_id = obj.get("item_id") if isinstance(obj, dict) else None
        if isinstance(item_id, str) and _id_hash(item_id) == dup:
            if item_id in first:
                raise LsrbUsageError(
                    f"{path}:{lineno}: field 'item_id': '{item_id}' already appears on line "
                    f"{first[item_id]} (item ids must be unique)."
                )
            first[item_id] = lineno
