"""Bounded calls: run one function in a child process under a wall-clock and a memory budget.

Some work on a model's answer has no useful bound of its own: sympy can spend minutes and tens of
gigabytes expanding one innocent-looking expression. `call_bounded(fn, *args, budget=...)` runs
`fn` in a fresh child process, with `RLIMIT_AS` capping how much address space it may add and a
wall-clock timeout after which the child is killed. It never raises for what the child did: the
result says `ok` (with the value), `timeout`, `memory`, `crashed` or `error`.

Children are forked from a `forkserver` (a clean single-threaded process started once per
process), never from the caller: the runner calls from threads, and forking a threaded process
can copy a lock some other thread held. Modules named with `preload()` are imported once in the
forkserver, so a child starts in milliseconds with them ready. `fn`, its arguments and its value
travel by pickle.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")
Status = Literal["ok", "timeout", "memory", "crashed", "error"]

_PRELOAD: list[str] = []
_LOCK = threading.Lock()
_CONTEXT: Any = None


@dataclass(frozen=True)
class Budget:
    time_s: float  # wall clock for the whole call, child start-up included
    memory_mb: int | None = 2048  # address space the call may add to what the child starts with


@dataclass(frozen=True)
class Bounded(Generic[T]):
    status: Status
    value: T | None = None
    detail: str = ""
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def preload(*modules: str) -> None:
    """Import `modules` in the forkserver before its first child (no effect once it runs)."""
    with _LOCK:
        for module in modules:
            if module not in _PRELOAD:
                _PRELOAD.append(module)


def _context() -> Any:
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(list(_PRELOAD))
            _CONTEXT = ctx
        return _CONTEXT


def _vm_bytes() -> int:
    """This process's current address-space size (VmSize), 0 when unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _child(
    conn: Connection,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    memory_mb: int | None,
) -> None:
    try:
        if memory_mb:
            limit = _vm_bytes() + memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            message: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        except MemoryError:
            message = ("memory", f"needed more than {memory_mb} MB")
        except RecursionError:
            message = ("memory", "recursion too deep")
        except Exception as exc:  # the caller classifies; a traceback helps whoever reads it
            message = ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}")
        try:
            conn.send(message)
        except MemoryError:
            conn.send(("memory", "the result was too large to send back"))
    finally:
        conn.close()


def call_bounded(fn: Callable[..., T], *args: Any, budget: Budget, **kwargs: Any) -> Bounded[T]:
    """`fn(*args, **kwargs)` in a child process within `budget`; never raises for the child."""
    start = time.monotonic()
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args, kwargs, budget.memory_mb), daemon=True)
    try:
        proc.start()
    except OSError as exc:
        receive.close()
        send.close()
        return Bounded("crashed", detail=f"could not start a worker ({exc})")
    send.close()  # the child holds the other end; EOF then means it died
    try:
        remaining = max(0.0, budget.time_s - (time.monotonic() - start))
        if not receive.poll(remaining):
            return Bounded(
                "timeout",
                detail=f"no result within {budget.time_s:g} s; stopped",
                elapsed_s=time.monotonic() - start,
            )
        try:
            status, payload = receive.recv()
        except (EOFError, OSError):
            proc.join(1.0)
            return Bounded(
                "crashed",
                detail=f"the worker died (exit code {proc.exitcode})",
                elapsed_s=time.monotonic() - start,
            )
    finally:
        receive.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
        proc.close()
    elapsed = time.monotonic() - start
    if status == "ok":
        return Bounded("ok", value=payload, elapsed_s=elapsed)
    return Bounded(status, detail=str(payload), elapsed_s=elapsed)
