"""Output files: attempts.jsonl (appended and flushed per attempt), summary.json, run.json.

A killed run loses nothing that finished: each record is one `write` of a whole line followed by a
flush. A reader that meets a torn last line (the process died mid-write) reports it and carries on;
under xdist, where other workers go on appending after a worker killed mid-write, the cut-short
record is glued to the start of the next worker's line: the reader keeps that record and reports
the fragment (`glued_record`).
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic_core import PydanticSerializationError
from pydantic_core import to_json as _fast_json

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.metrics import finite_float
from pytest_lsrb.core.nofollow import open_nofollow
from pytest_lsrb.core.redaction import RUN_KEYS, redact_json
from pytest_lsrb.core.textfiles import json_message, loads_json, lone_surrogate_problem, shown, surrogate_line

if TYPE_CHECKING:
    from pytest_lsrb.engine.records import AttemptRecord

ATTEMPTS_FILE = "attempts.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"


def dumps_record(record: AttemptRecord) -> str:
    """One record as one line of strict JSON: NaN and infinities become null."""
    return _strict_json(record)[0]


def record_line(record: AttemptRecord) -> tuple[bytes, AttemptRecord]:
    """One record as the bytes of its attempts.jsonl line, and the record a reader will get back.

    Every key of the run is redacted here, the one way records leave the process
    (`redacted_record`): the answer was judged as the server sent it.

    backslashreplace: a lone surrogate (it can come from a model's JSON reply) can only stand
    inside a JSON string, where `\\udXXX` is the same character as a JSON escape; the line is
    valid UTF-8 whatever the model wrote.

    Written once per attempt, so it takes pydantic-core's serializer (~4x faster than `json`'s)
    whenever that gives the very bytes `json` would: same key order, separators and string
    escapes. Where the two can differ it leaves the record to `json`: a non-finite float (NaN,
    Infinity), a float pydantic-core spells another way (`1e-9` for `1e-09`, `0.00001` for
    `1e-05`: below 1e-4; from 1e16 up, left to `json` too), a key that is not a str or an int
    (json writes a `None` key as `null`, pydantic-core as `None`), a lone surrogate
    (pydantic-core refuses it) and any value that is not plain JSON data.
    """
    if RUN_KEYS.secrets():
        record = redacted_record(record)
    try:
        line = _fast_json(record)
    except (PydanticSerializationError, ValueError, TypeError):
        line = None
    # Looked at after serializing, not before: the serializer has just brought every value into
    # the CPU's caches (in a run, between two tests, they are not: looking first costs double).
    if line is not None and _spelled_alike(record):
        return line + b"\n", record
    text, record = _strict_json(record)
    return (text + "\n").encode("utf-8", "backslashreplace"), record


def redacted_record(record: AttemptRecord) -> AttemptRecord:
    """`record` with every key of the run masked (`core.redaction.redact_json`), but for its field
    names and the fields that hold the engine's own words (`OWN_WORD_FIELDS`)."""
    from pytest_lsrb.engine.records import OWN_WORD_FIELDS  # (pydantic: only once a key is held)

    secrets, names = RUN_KEYS.secrets(), RUN_KEYS.long_secrets()
    out: dict[str, Any] = {}
    for name, value in record.items():
        out[name] = value if name in OWN_WORD_FIELDS or value is None else redact_json(value, secrets, names)
    return cast("AttemptRecord", out)


_PLAIN: Final = frozenset({str, int, bool, type(None)})
_KEYS: Final = frozenset({str, int})


def _spelled_alike(value: Any) -> bool:
    """Whether pydantic-core writes `value` as `json` does (strings aside: pydantic-core refuses
    the one kind it would spell otherwise). Only floats, dict keys and other types can differ,
    so only the values that are not str/int/bool/None are looked into."""
    kind = type(value)
    if kind is float:
        return bool(value == 0.0 or 1e-4 <= abs(value) < 1e16)
    if kind is dict:
        if not _KEYS.issuperset(map(type, value)):  # a None, bool or float key
            return False
        value = value.values()
    elif kind is not list and kind is not tuple:
        return kind in _PLAIN
    return all(map(_spelled_alike, [item for item in value if type(item) not in _PLAIN]))


# Built once: `json.dumps` with any option set builds a new encoder on every call (per record).
_STRICT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _strict_json(record: AttemptRecord) -> tuple[str, AttemptRecord]:
    """(`record` as compact JSON text, the record that text holds): non-finite floats as null."""
    try:
        return _STRICT.encode(record), record
    except ValueError:
        record = finite_or_none(record)
        return _STRICT.encode(record), record


def finite_or_none(value: Any) -> Any:
    """Replace non-finite floats (anywhere inside lists and dicts) by None."""
    if isinstance(value, float):
        return finite_float(value)
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


class AttemptsWriter:
    """Appends records to attempts.jsonl: each record is one `write(2)` of one whole line.

    The file is opened O_APPEND without a Python buffer, so a record is in the kernel (and
    survives the process being killed) as soon as `write` returns, without a separate flush.
    """

    def __init__(self, path: Path, *, repair_tail: bool = True) -> None:
        """`repair_tail=False`: an xdist worker appending beside others (only the controller, which
        opens the file before any worker starts, may cut a torn last line)."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._shared = not repair_tail
        if repair_tail:
            truncate_torn_tail(path)
        # never through a link (`core.nofollow`): records would land in whatever it names
        self._fd: int | None = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        self.written = 0

    def write(self, record: AttemptRecord) -> AttemptRecord:
        """Append one record; returns it as a reader will see it (non-finite floats as None)."""
        line, record = record_line(record)
        self.write_line(line)
        return record

    def write_line(self, line: bytes) -> None:
        """Append one line made by `record_line`.

        A write the kernel cut short (a full disk, a file-size limit) is finished by more writes
        when this is the file's only writer. Beside other writers (`repair_tail=False`) the rest
        could land after another process's line and tear both, so it is a write error instead:
        the cut-short part is then glued to the next line, where readers find it.
        """
        if self._fd is None:
            raise RuntimeError("attempts writer is closed")
        view = memoryview(line)
        while view:
            done = os.write(self._fd, view)
            if self._shared and done < len(view):
                raise OSError(errno.ENOSPC, f"only {done} of {len(line)} bytes of a record were written")
            view = view[done:]
        self.written += 1

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None


@dataclass
class AttemptsReadReport:
    records: int = 0
    torn_tail_line: int | None = None
    # lines that began with a record cut short, glued to the start of another process's record
    glued_lines: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def iter_attempts(path: Path, report: AttemptsReadReport | None = None) -> Iterator[AttemptRecord]:
    """Stream the records of an attempts.jsonl (see `iter_numbered_attempts`)."""
    for _, record in iter_numbered_attempts(path, report):
        yield record


def iter_numbered_attempts(
    path: Path, report: AttemptsReadReport | None = None
) -> Iterator[tuple[int, AttemptRecord]]:
    """Stream (line number, record) from an attempts.jsonl.

    A last line that is not a complete JSON object (a torn write) is skipped and noted in `report`,
    and so is a cut-short record glued to the start of a complete one (`glued_record`); any other
    bad line is a usage error naming the line.
    """
    report = report if report is not None else AttemptsReadReport()
    if not path.exists():
        return
    with path.open("rb") as fh:
        pending: tuple[int, bytes] | None = None
        for lineno, raw in enumerate(fh, start=1):
            if pending is not None:
                yield pending[0], _parse_or_unglue(path, *pending, report)
                report.records += 1
            pending = (lineno, raw)
        if pending is None:
            return
        lineno, raw = pending
        try:
            record = _parse_or_unglue(path, lineno, raw, report)
        except LsrbUsageError:
            if raw.endswith(b"\n"):
                raise
            report.torn_tail_line = lineno
            report.warnings.append(
                f"{path}:{lineno}: last line is incomplete (the run was killed mid-write); ignored."
            )
            return
        # (complete JSON without its newline is still a finished record)
        report.records += 1
        yield lineno, record


# How every record's line begins: the runner puts `record_schema_version` first, and inside a JSON
# string a quote is always escaped, so these bytes can only start a record.
RECORD_START = b'{"record_schema_version":'


def glued_record(path: Path, lineno: int, raw: bytes) -> AttemptRecord | None:
    """The complete record in a line that starts with a cut-short one, else None.

    Under xdist each worker appends whole lines to the same file; a worker killed in the middle of
    its write (or refused by a full disk) leaves part of a line, and the next worker's record is
    appended right after it. The record that follows starts at the line's last RECORD_START, and
    what comes before it must be the start of a record (anything else is not what a killed writer
    leaves, and stays an error).
    """
    at = raw.rfind(RECORD_START)
    if at <= 0:
        return None
    cut_short = raw[:at]
    if not (cut_short.startswith(RECORD_START) or RECORD_START.startswith(cut_short)):
        return None
    try:
        return _parse_line(path, lineno, raw[at:])
    except LsrbUsageError:
        return None


def glued_warning(path: Path, lineno: int) -> str:
    return (
        f"{path}:{lineno}: the line starts with a record cut short (a process was killed while "
        "writing it) followed by a complete record; the cut-short part is ignored and its attempt "
        "is run again by --lsrb-resume."
    )


def _parse_or_unglue(path: Path, lineno: int, raw: bytes, report: AttemptsReadReport) -> AttemptRecord:
    try:
        return _parse_line(path, lineno, raw)
    except LsrbUsageError as exc:
        error = exc
    record = glued_record(path, lineno, raw)
    if record is None:
        raise error
    report.glued_lines.append(lineno)
    report.warnings.append(glued_warning(path, lineno))
    return record


def _parse_line(path: Path, lineno: int, raw: bytes) -> AttemptRecord:
    try:
        obj = loads_json(raw)
    except json.JSONDecodeError as exc:
        raise LsrbUsageError(
            f"{path}:{lineno}: not a valid attempt record ({json_message(exc)} at column {exc.colno})."
        ) from None
    if not isinstance(obj, dict) or "item_id" not in obj or "sample_index" not in obj:
        raise LsrbUsageError(
            f"{path}:{lineno}: not an attempt record (expected an object with item_id and sample_index)."
        )
    item_id, sample = obj["item_id"], obj["sample_index"]
    if not isinstance(item_id, str) or not item_id:
        raise LsrbUsageError(
            f"{path}:{lineno}: field 'item_id': expected a non-empty string (got {shown(item_id)})."
        )
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        raise LsrbUsageError(
            f"{path}:{lineno}: field 'sample_index': expected a whole number >= 0 (got {shown(sample)})."
        )
    # Typed as the record it was written as; readers that rely on more fields check them
    # (`engine.records.check_record`).
    return cast("AttemptRecord", obj)


def truncate_torn_tail(path: Path) -> int | None:
    """Cut a torn last line (no trailing newline and not valid JSON) so appends start clean.

    Returns the number of bytes removed, or None when the file was intact.
    """
    if not path.exists():
        return None
    size = path.stat().st_size
    if size == 0:
        return None
    with os.fdopen(open_nofollow(path, os.O_RDWR), "rb+") as fh:
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return None
        # Find the start of the last line.
        block = 1 << 16
        pos = size
        start = 0
        while pos > 0:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            chunk = fh.read(step)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                start = pos + idx + 1
                break
        fh.seek(start)
        tail = fh.read()
        try:
            loads_json(tail)
        except json.JSONDecodeError:
            fh.truncate(start)
            return size - start
        fh.seek(size)
        fh.write(b"\n")  # a complete record that only lacked its newline
        return 0


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write JSON through a temp file and rename, so readers never see half a file.

    Every key of the run is redacted (run.json, summary.json, gate.json leave the process here);
    non-finite floats become null; a lone surrogate is written as its JSON escape (as in
    `record_line`), so the file is valid UTF-8 whatever a string held.
    """
    if RUN_KEYS.secrets():
        obj = redact_json(obj, RUN_KEYS.secrets(), RUN_KEYS.long_secrets())
    text = json.dumps(finite_or_none(obj), indent=2, sort_keys=True, ensure_ascii=False)
    text += "\n"
    write_atomic(path, text.encode("utf-8", "backslashreplace"))


def write_failure(path: Path, exc: OSError, *, running: bool = True) -> str:
    """One sentence for a refused write: which file, why, and (`running`) that what was written
    before is kept."""
    code = errno.errorcode.get(exc.errno or 0, "")
    why = f"{exc.strerror or exc}{f' ({code})' if code else ''}"
    if not running:
        return f"cannot write {path}: {why}; nothing was run."
    return (
        f"cannot write {path}: {why}; the run stops here and every attempt written before it is "
        "kept: free some space and continue the run with --lsrb-resume."
    )


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` through a temp file and rename, so readers never see half a file.

    The file gets the mode a plain `open()` would give it (0o666 less the umask): mkstemp's own
    0o600 would hide run.json or summary.json from colleagues sharing a results folder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        if hasattr(os, "fchmod"):  # not on Windows, where mkstemp's mode is not 0o600 anyway
            os.fchmod(fd, FILE_MODE & ~current_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


FILE_MODE = 0o666  # what open() asks for; the kernel takes the umask off


def current_umask() -> int:
    """The process umask, read without changing it where Linux tells it (threads may be creating
    files meanwhile); elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LsrbUsageError(f"{path}: not found.") from None
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    try:
        obj = loads_json(raw)
    except json.JSONDecodeError as exc:
        raise LsrbUsageError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}).") from None
    problem = lone_surrogate_problem(obj)  # run.json, summary.json, manifests: no model text
    if problem is not None:
        line = surrogate_line(raw.decode("utf-8"))
        raise LsrbUsageError(f"{path}{f':{line}' if line else ''}: {problem}.")
    return obj
