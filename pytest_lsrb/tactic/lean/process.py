"""Bounded subprocesses: every Lean, Lake or git process runs with a timeout and a memory cap.

A hang ends as `timeout` (the whole process group is killed), a process killed by a signal or
one that reports running out of memory ends as `oom_or_crash`, a missing executable as
`missing`. Nothing here raises for those: the caller classifies a `ProcessResult`.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

ProcessStatus = Literal["exited", "timeout", "oom_or_crash", "memory_limit", "missing"]

# What a process prints when it dies for lack of memory or stack (Lean's runtime, C++, Linux).
OOM_MARKERS: Final[tuple[str, ...]] = (
    "out of memory",
    "std::bad_alloc",
    "Stack overflow detected",
    "INTERNAL PANIC",
    "Cannot allocate memory",
    "MemoryError",
)
# Of those, what an allocation refused by the address-space cap prints: under a cap, the cap was
# hit (`memory_limit`, the environment's setting, not the model's fault).
MEMORY_MARKERS: Final[tuple[str, ...]] = (
    "out of memory",
    "std::bad_alloc",
    "Cannot allocate memory",
    "MemoryError",
)
_TAIL = 2000  # characters of stderr kept in a detail


def hit_memory_cap(memory_mb: int | None, stderr: str) -> bool:
    """Whether a process run under `memory_mb` died because an allocation hit that cap."""
    return bool(memory_mb) and any(marker in stderr for marker in MEMORY_MARKERS)


@dataclass(frozen=True)
class ProcessResult:
    status: ProcessStatus
    returncode: int | None
    stdout: str
    stderr: str
    elapsed_s: float
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "exited"


def memory_limiter(memory_mb: int | None) -> Callable[[], None] | None:
    """A preexec_fn capping the child's address space (RLIMIT_AS); None when uncapped."""
    if not memory_mb:
        return None
    limit = int(memory_mb) * 1024 * 1024

    def limit_memory() -> None:  # runs in the child between fork and exec: no locks, no imports
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return limit_memory


def which(executable: str) -> str | None:
    """The resolved path of `executable` (a name on PATH or a path), or None."""
    if os.sep in executable:
        return executable if os.access(executable, os.X_OK) else None
    return shutil.which(executable)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process and everything it started (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def describe_death(returncode: int | None, stderr: str) -> str | None:
    """Why a finished process counts as crashed (signal or out-of-memory report), or None."""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    for marker in OOM_MARKERS:
        if marker in stderr:
            return f"reported '{marker}' (exit code {returncode})"
    return None


def run_bounded(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    timeout_s: float,
    memory_mb: int | None,
    stdin_text: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run `argv` to completion within `timeout_s` seconds and `memory_mb` MiB of address space."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=str(cwd) if cwd is not None else None,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=dict(env) if env is not None else None,
            start_new_session=True,
            preexec_fn=memory_limiter(memory_mb),  # only setrlimit runs in the child
        )
    except FileNotFoundError:
        return ProcessResult("missing", None, "", "", 0.0, f"{argv[0]}: not found")
    except PermissionError as exc:
        return ProcessResult("missing", None, "", "", 0.0, f"{argv[0]}: not executable ({exc})")
    try:
        stdout, stderr = proc.communicate(stdin_text, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        stdout, stderr = proc.communicate()
        elapsed = time.monotonic() - start
        return ProcessResult(
            "timeout", None, stdout, stderr, elapsed, f"no answer within {timeout_s:g} s; killed"
        )
    finally:
        if proc.poll() is None:
            kill_group(proc)
            proc.wait()
    elapsed = time.monotonic() - start
    death = describe_death(proc.returncode, stderr)
    if death is not None:
        tail = stderr[-_TAIL:].strip()
        detail = f"{argv[0]} {death}" + (f": {tail}" if tail else "")
        if hit_memory_cap(memory_mb, stderr):
            detail = f"{argv[0]} hit the memory cap of {memory_mb} MiB (profile memory_mb): {death}"
            return ProcessResult("memory_limit", proc.returncode, stdout, stderr, elapsed, detail)
        return ProcessResult("oom_or_crash", proc.returncode, stdout, stderr, elapsed, detail)
    return ProcessResult("exited", proc.returncode, stdout, stderr, elapsed)


def run_before(
    argv: Sequence[str],
    *,
    deadline: float,
    cwd: Path | str | None = None,
    memory_mb: int | None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """`run_bounded` with the time left until `deadline` (a `time.monotonic()` value), and at
    least one second: the steps of one clone-and-build share one budget."""
    remaining = max(1.0, deadline - time.monotonic())
    return run_bounded(argv, cwd=cwd, timeout_s=remaining, memory_mb=memory_mb, env=env)
