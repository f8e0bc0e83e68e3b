"""The opt-in response cache (`--lsrb-cache-dir`): SQLite from the standard library.

A response is keyed by everything that decides it: the adapter's identity (adapter, base URL,
model and request-shape settings), every sampling setting, the messages and the attempt seed. Only
successful generations are stored, never errors. The database runs in WAL mode with a busy
timeout (on a network filesystem, where WAL is unsafe, in rollback-journal mode: see
`adapters.filesystems`), so the threads of one process and the processes of `-n 4` share it safely; a cache
problem is logged and treated as a miss, never as a failed attempt.

Nothing secret is stored: adapters' identities hold no keys and the key is never part of a request
object (it lives in the HTTP client's headers). An answer that holds a key of the run (a server
that echoes it, or a short key that is also a word of the answer) is not stored at all: stored
masked, a replay would judge another answer than the server gave.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_lsrb.adapters.base import (
    Adapter,
    GenerationRequest,
    GenerationResult,
    admits_budget,
    interrupt,
    served_slots,
)
from pytest_lsrb.adapters.filesystems import filesystem_type, is_network_filesystem
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import RUN_KEYS

log = logging.getLogger("pytest_lsrb.adapters.cache")

CACHE_FILE = "responses.sqlite3"
ROUNDS_DIR = ".lsrb-rounds"  # a run's own answers, kept for a resume (`keep_rounds`)
CACHE_KEY_VERSION = 1
BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    text TEXT NOT NULL,
    usage TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    created_at TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS responses_endpoint ON responses (endpoint);
"""


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def holds_a_key(text: str, meta: Mapping[str, Any]) -> bool:
    secrets = RUN_KEYS.secrets()
    return bool(secrets) and (secrets.redact(text) != text or secrets.redact_tree(dict(meta)) != meta)


def endpoint_id(identity: Mapping[str, Any]) -> str:
    return canonical(dict(identity))


def cache_key(identity: Mapping[str, Any], request: GenerationRequest) -> str:
    """SHA-256 over the endpoint, every sampling field, the messages and the seed."""
    material = {
        "v": CACHE_KEY_VERSION,
        "endpoint": dict(identity),
        "sampling": dataclasses.asdict(request.sampling),  # every field, including future ones
        "messages": [[m.role, m.content] for m in request.messages],
        "seed": request.seed,
    }
    return hashlib.sha256(canonical(material).encode("utf-8")).hexdigest()


# What a response says about itself besides its text (GenerationResult fields of the same name).
META_FIELDS = ("finish_reason", "served_model", "system_fingerprint")


@dataclasses.dataclass(frozen=True)
class CachedResponse:
    text: str
    usage: dict[str, int]
    latency_ms: float
    meta: dict[str, str] = dataclasses.field(default_factory=dict)


JOURNAL_CHOICES = ("auto", "wal", "delete")


def journal_mode(directory: Path, choice: str) -> str:
    """`--lsrb-cache-journal`: WAL on a local disk, the rollback journal on a network filesystem
    (auto), or as the user says."""
    if choice == "wal":
        return "WAL"
    if choice == "delete":
        return "DELETE"
    if choice != "auto":
        raise LsrbUsageError(
            f"--lsrb-cache-journal: expected one of {', '.join(JOURNAL_CHOICES)} (got {choice!r})."
        )
    fs_type = filesystem_type(directory)
    if is_network_filesystem(fs_type):
        log.info("response cache %s is on %s: using SQLite's rollback journal, not WAL", directory, fs_type)
        return "DELETE"
    return "WAL"


class ResponseCache:
    """One SQLite file; one connection per process, serialised by a lock across its threads."""

    def __init__(self, directory: Path, journal: str = "auto") -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LsrbUsageError(f"--lsrb-cache-dir: cannot create {directory} ({exc}).") from None
        self.path = directory / CACHE_FILE
        self.journal = journal_mode(directory, journal)
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._init_schema()
        except sqlite3.Error as exc:
            raise LsrbUsageError(f"--lsrb-cache-dir: {self.path} is not a usable cache ({exc}).") from None

    def _init_schema(self) -> None:
        # Several workers may open a fresh cache at the same moment; switching to WAL needs a
        # brief exclusive lock, so give it a few tries on top of the busy timeout.
        for attempt in range(5):
            try:
                self._conn.execute(f"PRAGMA journal_mode={self.journal}")
                self._conn.execute(
                    "PRAGMA synchronous=NORMAL" if self.journal == "WAL" else "PRAGMA synchronous=FULL"
                )
                self._conn.executescript(_SCHEMA)
                self._add_meta_column()
                return
            except sqlite3.OperationalError:
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _add_meta_column(self) -> None:
        """A cache written before responses kept their meta gets the column (empty for old rows)."""
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(responses)")}
        if "meta" not in columns:
            try:
                self._conn.execute("ALTER TABLE responses ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'")
            except sqlite3.OperationalError as exc:  # another process added it a moment ago
                if "duplicate column" not in str(exc):
                    raise

    def get(self, key: str) -> CachedResponse | None:
        try:
            with self._lock:
                row = self._conn.execute(
                    "SELECT text, usage, latency_ms, meta FROM responses WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            log.warning("response cache %s: read failed (%s); calling the model", self.path, exc)
            return None
        if row is None:
            return None
        text, latency = row[0], row[2]
        # A row damaged on disk (another type, an empty answer, a latency that is no number) is a
        # miss: the model is asked again rather than a broken value taken for its answer.
        if not (
            isinstance(text, str)
            and text.strip()
            and isinstance(latency, (int, float))
            and math.isfinite(latency)
            and latency >= 0
        ):
            log.warning("response cache %s: a damaged row for this request; calling the model", self.path)
            return None
        try:
            usage = {str(k): int(v) for k, v in json.loads(row[1]).items()}
        except (ValueError, TypeError, AttributeError):
            usage = {}
        try:
            stored = json.loads(row[3])
            meta = {k: stored[k] for k in META_FIELDS if isinstance(stored.get(k), str)}
        except (ValueError, TypeError, AttributeError):
            meta = {}
        return CachedResponse(text=text, usage=usage, latency_ms=float(latency), meta=meta)

    def put(self, key: str, endpoint: str, result: GenerationResult) -> None:
        if not result.ok:  # errors are never cached
            return
        meta = {k: v for k in META_FIELDS if (v := getattr(result, k)) is not None}
        if holds_a_key(result.text, meta):  # masked it would be judged otherwise when replayed
            log.info("response cache %s: an answer holding a run key is not cached", self.path)
            return
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        try:
            with self._lock:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, endpoint, text, usage, latency_ms,"
                    " created_at, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        endpoint,
                        result.text,
                        canonical(dict(result.usage)),
                        result.latency_ms,
                        created,
                        canonical(meta),
                    ),
                )
        except sqlite3.Error as exc:
            log.warning("response cache %s: write failed (%s); result not cached", self.path, exc)

    def has_endpoint(self, endpoint: str) -> bool:
        try:
            with self._lock:
                row = self._conn.execute(
                    "SELECT 1 FROM responses WHERE endpoint = ? LIMIT 1", (endpoint,)
                ).fetchone()
        except sqlite3.Error:
            return False
        return row is not None

    def count(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class CachingAdapter(Adapter):
    """Wraps an adapter: answers from the cache when it can, stores every successful answer.

    `check()` is deferred when the cache already holds answers from this endpoint, so a fully
    cached rerun sends no request at all; the deferred check then runs before the first miss.
    """

    def __init__(self, inner: Adapter, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.model = inner.model
        self.default_concurrency = inner.default_concurrency
        self.admits_budget = admits_budget(inner)  # (a miss is its adapter's request)
        self._identity = dict(inner.identity())
        self._endpoint = endpoint_id(self._identity)
        self._check_pending = cache.has_endpoint(self._endpoint)
        self._check_error: str | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        if not self._check_pending:
            self.inner.check()

    def _deferred_check(self) -> str | None:
        """Run the deferred check once per process; the error message if it failed."""
        with self._lock:
            if self._check_pending:
                self._check_pending = False
                try:
                    self.inner.check()
                except LsrbUsageError as exc:
                    self._check_error = str(exc)
            return self._check_error

    def generate(self, request: GenerationRequest) -> GenerationResult:
        start = time.perf_counter()
        key = cache_key(self._identity, request)
        hit = self.cache.get(key)
        if hit is not None:
            # The latency is the model's, from when the answer was made; no request was sent.
            return GenerationResult(
                text=hit.text,
                latency_ms=hit.latency_ms,
                http_attempts=0,
                cached=True,
                usage=hit.usage,
                finish_reason=hit.meta.get("finish_reason"),
                served_model=hit.meta.get("served_model"),
                system_fingerprint=hit.meta.get("system_fingerprint"),
            )
        problem = self._deferred_check()
        if problem is not None:
            return GenerationResult.failure(
                "client_error", problem, (time.perf_counter() - start) * 1000.0, http_attempts=0
            )
        result = self.inner.generate(request)
        if result.ok and result.text.strip():
            self.cache.put(key, self._endpoint, result)
        return result

    def identity(self) -> Mapping[str, Any]:
        return self._identity

    def interrupt(self) -> None:
        interrupt(self.inner)

    def served_slots(self) -> int | None:
        return served_slots(self.inner)

    def close(self) -> None:
        self.inner.close()
        self.cache.close()


def keep_rounds(adapter: Adapter, run_dir: Path, journal: str = "auto") -> Adapter:
    """`adapter` keeping the answers of this run's calls in `<run dir>/.lsrb-rounds`, so that a
    resume answers the finished rounds of an attempt cut short from there (see the module doc);
    `adapter` itself when it is not `cacheable` or the folder cannot be used (a warning)."""
    if not adapter.cacheable:
        return adapter
    try:
        cache = ResponseCache(run_dir / ROUNDS_DIR, journal)
    except LsrbUsageError as exc:
        log.warning("the run's own answers are not kept for a resume: %s", exc)
        return adapter
    return CachingAdapter(adapter, cache)


def drop_rounds(run_dir: Path) -> None:
    """Remove a run's own answers (`keep_rounds`): a new run does not take an earlier run's, and a
    finished one needs them no more. Never follows a link (`.lsrb-*` links refuse the run)."""
    import shutil

    folder = run_dir / ROUNDS_DIR
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
