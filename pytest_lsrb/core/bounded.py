"""Bounded calls: run one function in a child process under a wall-clock and a memory budget.

Some work on a model's answer has no useful bound of its own: sympy can spend minutes and tens of
gigabytes expanding one innocent-looking expression. `call_bounded(fn, *args, budget=...)` runs
`fn` in a fresh child process, with `RLIMIT_AS` capping how much address space it may add and a
wall-clock timeout after which the child is killed. It never raises for what the child did: the
result says `ok` (with the value), `timeout`, `memory`, `crashed` or `error`.

Children are forked from a fork host (`core.forkhost`: a clean single-threaded process started
once per process as `python -m pytest_lsrb.core.forkhost`), never from the caller: the runner
calls from threads, and forking a threaded process can copy a lock some other thread held. The
host starts from our own module, so the caller's `__main__` (a user's script that calls
`pytest.main()` without a guard) is never run again. Modules named with `preload()` are imported
once in the host, so a child starts in milliseconds with them ready. `fn`, its arguments and its
value travel by pickle.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")
Status = Literal["ok", "timeout", "memory", "crashed", "error"]

_PRELOAD: list[str] = []
_LOCK = threading.Lock()


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
    """Import `modules` in the fork host before its first child (no effect once it runs)."""
    with _LOCK:
        for module in modules:
            if module not in _PRELOAD:
                _PRELOAD.append(module)


class _Host:
    """This process's fork host: its control socket, and the process itself."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ)
        # A checkout that is not installed: the host finds the package where this one was found
        # (an installed one is found anyway; its site-packages is not put before the stdlib).
        package_parent = os.path.realpath(Path(__file__).resolve().parents[2])
        paths = sysconfig.get_paths()
        if package_parent not in {os.path.realpath(paths["purelib"]), os.path.realpath(paths["platlib"])}:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pytest_lsrb.core.forkhost", str(theirs.fileno()), *_PRELOAD],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # a Ctrl-C in the terminal is the caller's to handle
            )
        finally:
            theirs.close()
        self.control = ours
        self.owner = os.getpid()

    def hand_over(self, sock: socket.socket) -> None:
        """Give the host one end of a call's socket pair (it forks a child to serve it)."""
        socket.send_fds(self.control, [b"c"], [sock.fileno()])

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None


_HOST: _Host | None = None


def _connect() -> Connection:
    """A connection to a fresh child of this process's fork host (started on first use)."""
    global _HOST
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _LOCK:
            for _ in range(2):  # a host that died (killed from outside) is started again once
                if _HOST is None or not _HOST.alive():
                    _HOST = _Host()
                try:
                    _HOST.hand_over(theirs)
                    break
                except OSError:
                    _HOST = None
            else:
                raise OSError("the fork host does not take calls")
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return Connection(ours.detach())


def _kill(pid: int | None) -> None:
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def call_bounded(fn: Callable[..., T], *args: Any, budget: Budget, **kwargs: Any) -> Bounded[T]:
    """`fn(*args, **kwargs)` in a child process within `budget`; never raises for the child."""
    start = time.monotonic()
    payload = pickle.dumps((fn, args, kwargs))  # a call that does not pickle is the caller's bug
    setup = pickle.dumps((list(sys.path), os.getcwd(), budget.memory_mb, budget.time_s))
    try:
        conn = _connect()
    except OSError as exc:
        return Bounded("crashed", detail=f"could not start a worker ({exc})")
    pid: int | None = None

    def elapsed() -> float:
        return time.monotonic() - start

    try:
        conn.send_bytes(setup)
        conn.send_bytes(payload)
        if conn.poll(max(0.0, budget.time_s - elapsed())):
            pid = conn.recv()
        if pid is None or not conn.poll(max(0.0, budget.time_s - elapsed())):
            _kill(pid)  # still running (a child that has not said its pid yet ends with our socket)
            return Bounded(
                "timeout", detail=f"no result within {budget.time_s:g} s; stopped", elapsed_s=elapsed()
            )
        status, value = conn.recv()
    except (EOFError, OSError):
        return Bounded("crashed", detail="the worker died before it sent a result", elapsed_s=elapsed())
    finally:
        conn.close()
    if status == "ok":
        return Bounded("ok", value=value, elapsed_s=elapsed())
    return Bounded(status, detail=str(value), elapsed_s=elapsed())
