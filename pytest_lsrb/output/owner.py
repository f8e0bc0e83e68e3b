"""One command owns a run directory at a time: `<run>/.lsrb-lock`.

Two commands on one run (the printed resume command run twice, a scheduler restarting a job whose
old process still runs) would each send and pay for the same attempts and append them twice. The
controller (or an `lsrb run` of several models, for its group folder) takes an exclusive `flock`
of the lock file for its whole life and writes who it is there (pid, host, start, a token). The
kernel releases a `flock` when its process dies, however it dies, so a lock left by a killed
command is taken over without anyone having to judge it.

Where the file system has no `flock` (some FUSE mounts), the file's content decides instead
(`is_stale`): a holder on this host whose process is gone, or whose pid now belongs to a process
that started at another time, has left; a holder on another host is believed.

Processes a controller starts check that it still owns the run: xdist workers and the children of
an `lsrb run` of several models get its token (`owner_problem`) and stop when it is gone
(`parent_gone`).

The lock is held, not assumed (issue #46 item 6). A cleanup that deletes dot-files (`git clean`,
`rsync --delete`, a script) can remove `.lsrb-lock` under a running command; the kernel's lock
stays on the deleted file, and the same command started again used to create a new file, lock it
and run beside the first (70 records for 40 attempts, 30 paid twice). So the command also locks
the run directory itself (a `flock` of the folder, which no cleanup of its files removes): a
second command is refused while the first runs, file or no file. And before each attempt every
process of the run checks that `.lsrb-lock` is still the file it locked (`lock_problem`: one
stat(2), its device and inode): when it is gone or replaced, the run stops in one sentence.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import socket
from collections.abc import Callable, MutableMapping
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.nofollow import open_nofollow
from pytest_lsrb.core.processes import RUNNING_UNKNOWN_START, process_start

LOCK_FILE: Final = ".lsrb-lock"
MAX_LOCK_BYTES: Final = 4096
# errno values of a file system that has no flock (then the file's content decides)
NO_FLOCK: Final = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})


@dataclass(frozen=True)
class Holder:
    """Who holds a run directory: what the refusal names, and what tells a stale lock."""

    pid: int
    host: str
    started: str  # when it took the lock (UTC, ISO 8601)
    token: str  # handed to its workers and children: the lock is still theirs while it is there
    since_boot: int | None = None  # its process's start (clock ticks after boot): tells a reused pid

    @classmethod
    def from_text(cls, text: str) -> Holder | None:
        """The holder a lock file names; None for anything else (the file is a stranger's)."""
        try:
            obj: Any = json.loads(text)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        pid, host, started, token = (obj.get(k) for k in ("pid", "host", "started", "token"))
        since = obj.get("since_boot")
        if not (isinstance(pid, int) and not isinstance(pid, bool) and pid > 0):
            return None
        if not (isinstance(host, str) and isinstance(started, str) and isinstance(token, str)):
            return None
        if since is not None and not (isinstance(since, int) and not isinstance(since, bool)):
            return None
        return cls(pid, host, started, token, since)

    def to_text(self) -> str:
        return json.dumps(asdict(self), sort_keys=True) + "\n"

    def named(self) -> str:
        """pid, host and start, for a sentence (printable characters only: the file is on disk)."""
        host = "".join(c for c in self.host if c.isprintable())[:100]
        return f"pid {self.pid} on {host}, since {''.join(c for c in self.started if c.isprintable())[:40]}"


def is_stale(holder: Holder | None, here: str, start_of: Callable[[int], int | None]) -> bool:
    """Whether a lock whose file names `holder` may be taken over, judged from the file alone
    (where the kernel's `flock` cannot tell). `start_of(pid)`: the start of the process with that
    pid on this host (`RUNNING_UNKNOWN_START` when it runs but its start is unknown), None when
    no process has it.

    - a file naming no holder (empty, a stranger's text): stale, no command claims it;
    - a holder on another host: never stale from here (its processes cannot be seen);
    - on this host: stale when its pid has no process, or has one that started at another time
      than the holder's (the pid was reused after the holder died).
    """
    if holder is None:
        return True
    if holder.host != here:
        return False
    start = start_of(holder.pid)
    if start is None:
        return True
    if holder.since_boot is None or start == RUNNING_UNKNOWN_START:
        return False
    return start != holder.since_boot


def this_host() -> str:
    return socket.gethostname()


def read_holder(path: Path) -> Holder | None:
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return Holder.from_text(os.read(fd, MAX_LOCK_BYTES).decode("utf-8", "replace"))
    finally:
        os.close(fd)


def held(run_dir: Path) -> bool:
    """Whether a live command holds `run_dir` now (the run is going on), judged from its lock
    file as a second command would (`is_stale`); a released lock names no holder."""
    return not is_stale(read_holder(run_dir / LOCK_FILE), this_host(), process_start)


def in_use(run_dir: Path, holder: Holder | None) -> str:
    """The one sentence refusing a second command on a run directory."""
    who = holder.named() if holder is not None else "it did not say who it is"
    return (
        f"{run_dir} is in use by another lsrb command ({who}); two commands on one run would send "
        "and pay for the same attempts twice: wait for it to end or stop it, then run this again."
    )


class RunDirLock:
    """The lock this process holds on one run directory (`acquire`), until `release` or its end."""

    def __init__(self, run_dir: Path, fd: int, holder: Holder, dir_fd: int | None = None) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_FILE
        self.holder = holder
        self._fd: int | None = fd
        self._dir_fd = dir_fd  # the run directory's own lock (None: its file system has no flock)
        st = os.fstat(fd)
        self.identity: tuple[int, int] = (st.st_dev, st.st_ino)  # the file this command locked

    @classmethod
    def acquire(cls, run_dir: Path) -> RunDirLock:
        """Take `run_dir`'s lock, or LsrbUsageError in one sentence naming its holder."""
        path = run_dir / LOCK_FILE
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LsrbUsageError(f"cannot lock {path}: {exc.strerror or exc}; nothing was run.") from None
        dir_fd = cls._lock_folder(run_dir)
        try:
            fd = open_nofollow(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            _close(dir_fd)
            raise LsrbUsageError(f"cannot lock {path}: {exc.strerror or exc}; nothing was run.") from None
        holder = Holder(
            os.getpid(),
            this_host(),
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
            secrets.token_hex(8),
            process_start(os.getpid()),
        )
        try:
            taken = cls._flock(fd)
            if taken is not True:  # another process holds it (False), or no flock here (None)
                found = Holder.from_text(os.pread(fd, MAX_LOCK_BYTES, 0).decode("utf-8", "replace"))
                if taken is False or not is_stale(found, holder.host, process_start):
                    raise LsrbUsageError(in_use(run_dir, found))
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.to_text().encode("utf-8"), 0)
        except BaseException:
            os.close(fd)
            _close(dir_fd)
            raise
        return cls(run_dir, fd, holder, dir_fd)

    @classmethod
    def _lock_folder(cls, run_dir: Path) -> int | None:
        """Lock the run directory itself (its fd, kept open), or LsrbUsageError while another
        command holds it; None where its file system has no `flock` of a folder."""
        try:
            dir_fd = os.open(run_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return None
        try:
            taken = cls._flock(dir_fd)
        except OSError:  # (EBADF: a network file system that locks only files opened for writing)
            taken = None
        if taken is True:
            return dir_fd
        os.close(dir_fd)
        if taken is False:  # another command runs here, whatever became of its lock file
            raise LsrbUsageError(in_use(run_dir, read_holder(run_dir / LOCK_FILE)))
        return None

    def problem(self) -> str | None:
        """One sentence when `.lsrb-lock` is no longer the file this command locked."""
        return lock_problem(self.path, self.identity)

    @staticmethod
    def _flock(fd: int) -> bool | None:
        """True when the kernel gave this process the lock, False while another process holds
        it, None where the file system has no `flock` (the file's content decides)."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno in NO_FLOCK:
                return None
            raise
        return True

    def release(self) -> None:
        """Empty the file (no holder is named once it is gone) and let the lock go."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            if read_holder(self.path) == self.holder:
                os.ftruncate(self._fd, 0)
        os.close(self._fd)
        self._fd = None
        _close(self._dir_fd)
        self._dir_fd = None


def _close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def lock_problem(path: Path, identity: tuple[int, int]) -> str | None:
    """One sentence when the lock file at `path` is no longer the file with `identity` (device,
    inode) that the run's command locked: deleted, or replaced by another; None while it is."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        what = "deleted"
    except OSError:
        return None  # (cannot be looked at now: not a sign that it is gone)
    else:
        if (st.st_dev, st.st_ino) == identity:
            return None
        what = "replaced by another file"
    return (
        f"{path} was {what} while this run held it (a cleanup of dot-files such as `git clean` or "
        "`rsync --delete`?); this run stops so that two commands never send and write the same "
        "attempts: resume it once nothing else uses the folder."
    )


def owner_problem(run_dir: Path, token: str) -> str | None:
    """A process its controller started: one sentence when the run directory is no longer owned
    by that controller (the lock names another command, or none), else None."""
    found = read_holder(run_dir / LOCK_FILE)
    if found is not None and found.token == token:
        return None
    now = f" (it is now held by {found.named()})" if found is not None else ""
    return (
        f"{run_dir} is no longer owned by the command that started this process{now}; this "
        "process stops without sending more requests."
    )


def parent_gone(parent_pid: int) -> bool:
    """Whether the process that started this one has died (this one was handed to init or a
    subreaper): the fallback where the parent-death signal is not there."""
    return os.getppid() != parent_pid


OWNER_ENV: Final = "LSRB_OWNER"  # an `lsrb run` of several models -> each child: who owns the group


def owner_env(group: Path, holder: Holder) -> dict[str, str]:
    """The environment entry telling a child which command owns its group folder."""
    return {OWNER_ENV: json.dumps({"dir": str(group), "token": holder.token, "pid": holder.pid})}


@dataclass(frozen=True)
class Owner:
    """The command that started this process and must still own `run_dir` for it to go on."""

    run_dir: Path
    token: str
    pid: int
    lock: tuple[int, int] | None = None  # (device, inode) of the lock file that command locked

    def problem(self) -> str | None:
        """One sentence when that command no longer owns its folder or has died, else None."""
        return self.parent_problem() or self.lock_problem() or owner_problem(self.run_dir, self.token)

    def lock_problem(self) -> str | None:
        """One sentence when the run's lock file is no longer the one its command locked (one
        stat(2): asked before each attempt)."""
        return None if self.lock is None else lock_problem(self.run_dir / LOCK_FILE, self.lock)

    def parent_problem(self) -> str | None:
        """One sentence when that command has died (one getppid(2): asked before each attempt)."""
        if not parent_gone(self.pid):
            return None
        return (
            f"the command that started this process (pid {self.pid}) has ended; this process "
            "stops without sending more requests."
        )


def owner_from_env(environ: MutableMapping[str, str]) -> Owner | None:
    """The owner an `lsrb run` of several models named for this child (taken out of `environ`,
    so the child's own children do not take it as theirs); None for any other process."""
    text = environ.pop(OWNER_ENV, None)
    if text is None:
        return None
    try:
        obj = json.loads(text)
        return Owner(Path(str(obj["dir"])), str(obj["token"]), int(obj["pid"]))
    except (ValueError, KeyError, TypeError):
        return None
