"""The run's spend, shared by every process of a run: `<run dir>/.lsrb-budget.json`.

What it holds: the settled spend (tokens the server reported for answered requests), and one
`Reservation` per request in flight, with the most that request may cost (its worst case) and
whose it is (host, pid, a lease). Each change is a read-modify-write under an exclusive `flock`
of the file (and a lock for this process's threads): a few hundred bytes, twice per request.

A reservation belongs to the process that took it. When that process dies (the OOM killer, a
segfault, a SIGKILLed `-n` worker) its reservations expire: every change of the ledger first drops
those of a process that is gone from this host (a pid no longer running, or a zombie), and any
whose lease ran out (a request has a whole-response deadline, so a live one never outlasts it).
An expired reservation is counted as spent at its worst case (`expired` says how many were): the
server may have billed the dead request in full, and nobody is left to read what it reported, so
the bound holds whatever it billed. So a crash can neither hang the run (nobody waits for an
answer that will never come) nor hold budget in flight forever.
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

LEDGER_FILE: Final = ".lsrb-budget.json"
# The lease of a request whose adapter states none (the HTTP adapters state theirs): so that no
# reservation, even one of a process on another host, is waited for forever.
DEFAULT_LEASE_S: Final = 3600.0
HOST: Final = socket.gethostname()
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
        return cls(data["id"], counts[0], data["host"], counts[1], counts[2], float(until))


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
            elif name == "reservations":
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
        return data


def process_alive(pid: int) -> bool:
    """Whether `pid` runs on this host (a zombie, killed and not yet reaped, does not)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return False
    try:  # Linux: "pid (comm) S ..."; the state follows the last ')'
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return True  # no /proc: the signal said it exists


def live(reservation: Reservation, now: float, alive: Callable[[int], bool] = process_alive) -> bool:
    """Whether a reservation still counts: its lease runs and its owner (on this host) lives."""
    if reservation.until and now > reservation.until:
        return False
    return reservation.host != HOST or alive(reservation.pid)


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

    def open_session(self, earlier: Spent | None, started: float) -> Spent:
        """The controller, when a session opens the run: keep what earlier sessions spent (or start
        from `earlier` when given), with nothing in flight, no stop, and this session's clock."""
        with self.change() as box:
            base = earlier if earlier is not None else box[0]
            box[0] = replace(base, reservations=(), stopped=None, session_started=started)
            return box[0]

    def settle(self, reservation_id: str, prompt: int | None, completion: int | None) -> None:
        """The reserved request was answered: its reservation goes, what it cost is added (None:
        not reported). Tokens past its worst case raise the allowance for every later one."""
        with self.change() as box:
            spent = box[0]
            mine = next((r for r in spent.reservations if r.id == reservation_id), None)
            # (not held any more: it expired, and was counted then at its worst case)
            p, c = (prompt or 0, completion or 0) if mine is not None else (0, 0)
            box[0] = replace(
                spent,
                reservations=tuple(r for r in spent.reservations if r.id != reservation_id),
                prompt_tokens=spent.prompt_tokens + p,
                completion_tokens=spent.completion_tokens + c,
                requests=spent.requests + 1,
                unreported=spent.unreported + (prompt is None and completion is None),
                largest_prompt=max(spent.largest_prompt, p),
                largest_completion=max(spent.largest_completion, c),
                prompt_excess=max(spent.prompt_excess, p - mine.prompt if mine else 0),
                completion_excess=max(spent.completion_excess, c - mine.completion if mine else 0),
            )

    def release(self, reservation_id: str) -> None:
        """The reserved request was not answered (a failure the provider bills not, a cache hit)."""
        with self.change() as box:
            held = box[0].reservations
            box[0] = replace(box[0], reservations=tuple(r for r in held if r.id != reservation_id))


def expire(spent: Spent, held: tuple[Reservation, ...]) -> Spent:
    """`spent` keeping only the reservations `held`: every other one is counted at its worst case."""
    gone = [r for r in spent.reservations if r not in held]
    return replace(
        spent,
        reservations=held,
        prompt_tokens=spent.prompt_tokens + sum(r.prompt + spent.prompt_excess for r in gone),
        completion_tokens=spent.completion_tokens + sum(r.completion + spent.completion_excess for r in gone),
        expired=spent.expired + len(gone),
    )


def new_reservation(prompt: int, completion: int, lease_s: float | None) -> Reservation:
    """A reservation of this process for a request of that worst case."""
    until = time.time() + (lease_s or DEFAULT_LEASE_S)
    return Reservation(f"{HOST}:{os.getpid()}:{next(_ids)}", os.getpid(), HOST, prompt, completion, until)
