"""The run's spend, shared by every process of a run: `<run dir>/.lsrb-budget.json`.

What it holds: the settled spend (tokens the server reported for answered requests), and one
`Reservation` per request in flight, with the most that request may cost (its worst case) and
whose it is (host, pid and the process's start, a lease). Each change is a read-modify-write under
an exclusive `flock` of the file (and a lock for this process's threads): a few hundred bytes,
twice per request.

A reservation belongs to the process that took it. When that process dies (the OOM killer, a
segfault, a SIGKILLed `-n` worker or controller) its reservations expire: every change of the
ledger first drops those of a process that is gone from this host (a pid no longer running, a
zombie, or a pid now held by a process that started at another time), and any whose lease ran out
(a request has a whole-response deadline, so a live one never outlasts it). An expired reservation
is counted as spent at its worst case (`expired` says how many are): the server may have billed
the dead request in full, and nobody may be left to read what it reported, so the bound holds
whatever it billed. Its answer may still come, to a process whose lease ran out or that outlived
its controller: whoever settles it then replaces the worst case by what was billed (`charged`
keeps the last `KEPT_CHARGES` expired reservations for that). So a crash can neither hang the run
(nobody waits for an answer that will never come) nor hold budget in flight forever.

A crash then the printed `--lsrb-resume` (issue #46): the resumed session opens the ledger as it
was left, every reservation of a dead process counted at its worst case and those of a process
still running (an `-n` worker whose controller was SIGKILLed, finishing its request) still held,
so their answers settle against the resumed session's budget: the spend over all sessions of a
run stays within its budget (tests/engine/test_budget_crash.py).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.nofollow import open_nofollow
from pytest_lsrb.core.processes import own_start, process_alive, started_elsewhen

LEDGER_FILE: Final = ".lsrb-budget.json"
# The lease of a request whose adapter states none (the HTTP adapters state theirs): so that no
# reservation, even one of a process on another host, is waited for forever.
DEFAULT_LEASE_S: Final = 3600.0
HOST: Final = socket.gethostname()
KEPT_CHARGES: Final = 256  # expired reservations kept so that a late answer settles its own
_ids = itertools.count()


@dataclass(frozen=True)
class Reservation:
    """One request in flight: the most it may cost, and whose it is."""

    id: str
    pid: int
    host: str
    prompt: int  # the most prompt tokens it may be billed
    completion: int  # the most completion tokens (its max_tokens)
    until: float = 0.0  # time.time() past which it expires whatever its owner (0: never)
    started: int | None = None  # its process's start (clock ticks after boot): tells a reused pid

    @classmethod
    def from_json(cls, data: Any) -> Reservation | None:
        """A reservation read back; None for anything malformed (a damaged or hostile file)."""
        if not isinstance(data, dict):
            return None
        ints = [data.get(k) for k in ("pid", "prompt", "completion")]
        counts = [v for v in ints if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
        if len(counts) != len(ints):
            return None
        until = data.get("until", 0.0)
        if not isinstance(until, (int, float)) or isinstance(until, bool) or not math.isfinite(until):
            return None
        if not isinstance(data.get("id"), str) or not isinstance(data.get("host"), str):
            return None
        started = data.get("started")
        if not (isinstance(started, int) and not isinstance(started, bool)):
            started = None
        return cls(data["id"], counts[0], data["host"], counts[1], counts[2], float(until), started)


@dataclass(frozen=True)
class Spent:
    """What a run has spent (the ledger's content)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # requests answered (with or without usage)
    unreported: int = 0  # of those, answered without `usage`: counted as nothing
    expired: int = 0  # reservations of dead processes or spent leases, counted at their worst case
    largest_prompt: int = 0  # the largest prompt_tokens of one request
    largest_completion: int = 0
    # How far reported tokens went past a reservation's worst case (a chat template longer than
    # the allowance, a server ignoring max_tokens): added to every later worst case.
    prompt_excess: int = 0
    completion_excess: int = 0
    session_started: float = 0.0  # time.time() when this session's controller opened the run
    stopped: dict[str, Any] | None = None  # the first budget stop of this session (`BudgetStop`)
    reservations: tuple[Reservation, ...] = ()  # requests in flight, over every process
    # The last KEPT_CHARGES expired reservations, each with what it was counted at (prompt and
    # completion, the excess then included): a late answer replaces that by what it cost.
    charged: tuple[Reservation, ...] = ()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def in_flight(self) -> int:
        return len(self.reservations)

    @classmethod
    def from_json(cls, data: Any) -> Spent:
        """The ledger's content; a field of the wrong type (a damaged or hostile file) reads as
        its default, so arithmetic on it never fails."""
        if not isinstance(data, dict):
            return cls()
        known: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            value = data.get(name)
            if name == "stopped":
                known[name] = value if isinstance(value, dict) else None
            elif name in ("reservations", "charged"):
                held = [Reservation.from_json(x) for x in value] if isinstance(value, list) else []
                known[name] = tuple(r for r in held if r is not None)
            elif name == "session_started":
                number = (
                    float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
                )
                known[name] = number if math.isfinite(number) else 0.0
            else:
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
                known[name] = value if ok else 0
        return cls(**known)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["reservations"] = [asdict(r) for r in self.reservations]
        data["charged"] = [asdict(r) for r in self.charged]
        return data


def live(reservation: Reservation, now: float, alive: Callable[[int], bool] = process_alive) -> bool:
    """Whether a reservation still counts: its lease runs and its owner (on this host) lives, and
    is the process that took it (not a later one given the same pid)."""
    if reservation.until and now > reservation.until:
        return False
    if reservation.host != HOST:
        return True
    return alive(reservation.pid) and not started_elsewhen(reservation.pid, reservation.started)


class Ledger:
    """The run's spend in `<run dir>/.lsrb-budget.json` (see the module doc)."""

    def __init__(self, run_dir: Path, alive: Callable[[int], bool] = process_alive) -> None:
        self.path = run_dir / LEDGER_FILE
        self.alive = alive
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[Any]:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # never through a link
            with os.fdopen(fd, "r+", encoding="utf-8") as handle:
                try:
                    import fcntl

                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                except ImportError:  # pragma: no cover - no fcntl (Windows): one process's threads
                    pass
                yield handle

    @staticmethod
    def _read(handle: Any) -> Spent:
        handle.seek(0)
        text = handle.read(1 << 20)
        try:
            return Spent.from_json(json.loads(text)) if text.strip() else Spent()
        except ValueError:
            return Spent()

    @staticmethod
    def _write(handle: Any, spent: Spent) -> None:
        """Overwrite in place, padded with spaces to the file's length: never truncated (on ext4
        a truncate-and-rewrite forces the data to disk, ~3 ms a request instead of ~30 us)."""
        text = json.dumps(spent.to_json(), sort_keys=True)
        size = os.fstat(handle.fileno()).st_size
        handle.seek(0)
        handle.write(text.ljust(size))
        handle.flush()

    def read(self) -> Spent:
        if not self.path.is_file():
            return Spent()
        with self._locked() as handle:
            return self._read(handle)

    @contextlib.contextmanager
    def change(self) -> Iterator[list[Spent]]:
        """Read the ledger, without the reservations of dead processes or spent leases, for a
        change: `box[0]` on leaving is written back (when it differs from what was read)."""
        with self._locked() as handle:
            read = self._read(handle)
            now = time.time()
            held = tuple(r for r in read.reservations if live(r, now, self.alive))
            box = [read if held == read.reservations else expire(read, held)]
            yield box
            if box[0] != read:
                self._write(handle, box[0])

    def open_session(self, started: float, at_least: tuple[int, int] | None = None) -> Spent:
        """The controller, when a session opens the run. A new run (`at_least` None) starts from
        nothing. A resumed one keeps what earlier sessions spent, with at least `at_least` (prompt,
        completion) tokens (what its records say was paid), every reservation of a dead process
        counted at its worst case, and those of live ones still in flight: a process that outlived
        its controller may yet settle them. No stop, and this session's clock."""
        with self.change() as box:
            if at_least is None:
                box[0] = Spent(session_started=started)
                return box[0]
            base = box[0]
            box[0] = replace(
                base,
                prompt_tokens=max(base.prompt_tokens, at_least[0]),
                completion_tokens=max(base.completion_tokens, at_least[1]),
                stopped=None,
                session_started=started,
            )
            return box[0]

    def settle(self, reservation_id: str, prompt: int | None, completion: int | None) -> None:
        """The reserved request was answered: its reservation goes, what it cost is added (None:
        not reported). Tokens past its worst case raise the allowance for every later one. One
        that had expired was counted at its worst case then: that count is replaced by what it
        cost (while it is among the last `KEPT_CHARGES` expired; else the worst case stands)."""
        with self.change() as box:
            spent = box[0]
            p, c = prompt or 0, completion or 0
            mine = next((r for r in spent.reservations if r.id == reservation_id), None)
            late = None if mine else next((r for r in spent.charged if r.id == reservation_id), None)
            counted = (0, 0) if late is None else (late.prompt, late.completion)
            unreported = prompt is None and completion is None
            if (mine is None and late is None) or (late is not None and unreported):
                # long expired (counted at its worst case then, forgotten since), or expired and
                # answered without usage: the worst case it was counted at stands
                p, c, late, counted = 0, 0, None, (0, 0)
            box[0] = replace(
                spent,
                reservations=tuple(r for r in spent.reservations if r.id != reservation_id),
                charged=tuple(r for r in spent.charged if r.id != reservation_id),
                prompt_tokens=spent.prompt_tokens + p - counted[0],
                completion_tokens=spent.completion_tokens + c - counted[1],
                expired=spent.expired - (late is not None),
                requests=spent.requests + 1,
                unreported=spent.unreported + unreported,
                largest_prompt=max(spent.largest_prompt, p),
                largest_completion=max(spent.largest_completion, c),
                prompt_excess=max(spent.prompt_excess, p - mine.prompt if mine else 0),
                completion_excess=max(spent.completion_excess, c - mine.completion if mine else 0),
            )

    def release(self, reservation_id: str) -> None:
        """The reserved request was not answered (a failure the provider bills not, a cache hit).
        One that had expired stays counted at its worst case: it may have been billed."""
        with self.change() as box:
            held = box[0].reservations
            box[0] = replace(box[0], reservations=tuple(r for r in held if r.id != reservation_id))


def expire(spent: Spent, held: tuple[Reservation, ...]) -> Spent:
    """`spent` keeping only the reservations `held`: every other one is counted at its worst case
    (and kept in `charged` with that count, for a late answer)."""
    gone = [
        replace(r, prompt=r.prompt + spent.prompt_excess, completion=r.completion + spent.completion_excess)
        for r in spent.reservations
        if r not in held
    ]
    return replace(
        spent,
        reservations=held,
        prompt_tokens=spent.prompt_tokens + sum(r.prompt for r in gone),
        completion_tokens=spent.completion_tokens + sum(r.completion for r in gone),
        expired=spent.expired + len(gone),
        charged=(*spent.charged, *gone)[-KEPT_CHARGES:],
    )


def new_reservation(
    prompt: int, completion: int, lease_s: float | None, pid: int | None = None
) -> Reservation:
    """A reservation of this process (or of `pid`: a test's stand-in for another process) for a
    request of that worst case."""
    until = time.time() + (lease_s or DEFAULT_LEASE_S)
    own = os.getpid()
    who = own if pid is None else pid
    started = own_start() if who == own else None
    return Reservation(f"{HOST}:{who}:{next(_ids)}", who, HOST, prompt, completion, until, started)
