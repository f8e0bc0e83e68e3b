"""A client for the Lean REPL (leanprover-community/repl): JSON requests separated by blank lines.

Requests are `{"cmd": ..., "env": n}`, `{"tactic": ..., "proofState": n}` and friends; the REPL
answers each with one JSON object followed by a blank line. The process runs in its own session
with a memory cap; a reply that does not come within the timeout kills it (`ReplTimeout`), a
process that dies mid-request raises `ReplCrashed`.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_lsrb.tactic.lean.process import describe_death, hit_memory_cap, kill_group, memory_limiter


class ReplError(Exception):
    """The REPL could not answer a request."""


class ReplMissing(ReplError):
    """The REPL executable does not exist."""


class ReplTimeout(ReplError):
    """No reply within the timeout; the process was killed."""


class ReplCrashed(ReplError):
    """The process exited (signal, out of memory, or an unexpected end of its output)."""


class ReplMemoryLimit(ReplCrashed):
    """The process died because an allocation hit its memory cap."""


class ReplProtocolError(ReplError):
    """The process answered something that is not a JSON object."""


def encode_request(request: Mapping[str, Any]) -> str:
    """One request as the REPL reads it: JSON on one line, then a blank line."""
    return json.dumps(request, ensure_ascii=False) + "\n\n"


def split_blocks(text: str) -> list[str]:
    """Blank-line separated blocks (the REPL's framing of requests and replies)."""
    return [b for b in re.split(r"\n[ \t]*\n", text) if b.strip()]


def decode_block(block: str) -> dict[str, Any]:
    """Parse one request or reply block.

    Lean's JSON reader accepts a raw line break inside a string and drops it (the REPL's own
    tests rely on that: `"by\\nsorry"` split over two lines means `by` + `sorry`), so raw line
    breaks are removed before parsing; outside strings they are only whitespace.
    """
    obj = json.loads(block.replace("\r", "").replace("\n", ""))
    if not isinstance(obj, dict):
        raise ReplProtocolError(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The requests (X.in) or replies (X.expected.out) of a recorded REPL session."""
    return [decode_block(b) for b in split_blocks(path.read_text(encoding="utf-8"))]


class ReplClient:
    """One running REPL process. Not thread-safe: callers serialise requests."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str | None = None,
        memory_mb: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.memory_mb = memory_mb
        self.env = dict(env) if env is not None else None
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        if self.alive:
            return
        self._lines = queue.Queue()
        self._stderr = []
        try:
            self._proc = subprocess.Popen(
                self.argv,
                cwd=str(self.cwd) if self.cwd is not None else None,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                env=self.env,
                start_new_session=True,
                preexec_fn=memory_limiter(self.memory_mb),
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise ReplMissing(f"{self.argv[0]}: cannot be started ({exc})") from None
        proc = self._proc
        threading.Thread(target=self._pump_stdout, args=(proc, self._lines), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(proc, self._stderr), daemon=True).start()

    @staticmethod
    def _pump_stdout(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in proc.stdout:
                lines.put(line)
        lines.put(None)

    @staticmethod
    def _pump_stderr(proc: subprocess.Popen[str], sink: list[str]) -> None:
        assert proc.stderr is not None
        with contextlib.suppress(ValueError, OSError):
            for line in proc.stderr:
                if sum(len(s) for s in sink) < 20000:
                    sink.append(line)

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.close()  # the REPL exits at the end of its input
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> ReplClient:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests --------------------------------------------------------------------------------

    def send(self, request: Mapping[str, Any], *, timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply."""
        self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(encode_request(request))
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crashed("its input closed") from None
        return self._read_reply(timeout_s)

    def command(self, cmd: str, *, env: int | None = None, timeout_s: float, **extra: Any) -> dict[str, Any]:
        request: dict[str, Any] = {"cmd": cmd}
        if env is not None:
            request["env"] = env
        request.update(extra)
        return self.send(request, timeout_s=timeout_s)

    def _read_reply(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        buf: list[str] = []
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise queue.Empty
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                self._kill()
                raise ReplTimeout(f"no reply within {timeout_s:g} s; the REPL was killed") from None
            if line is None:
                raise self._crashed("it stopped answering")
            if line.strip():
                buf.append(line)
            elif buf:
                break
        block = "".join(buf)
        try:
            return decode_block(block)
        except (json.JSONDecodeError, ReplProtocolError) as exc:
            raise ReplProtocolError(
                f"the REPL answered something that is not JSON ({exc}): {block[:200]!r}"
            ) from None

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_group(proc)
            proc.wait()

    def _crashed(self, what: str) -> ReplCrashed:
        proc, self._proc = self._proc, None
        code: int | None = None
        if proc is not None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                code = proc.wait()
        stderr = "".join(self._stderr)
        death = describe_death(code, stderr) or f"exited with code {code}"
        tail = stderr.strip()[-500:]
        if hit_memory_cap(self.memory_mb, stderr):
            return ReplMemoryLimit(
                f"the REPL hit the memory cap of {self.memory_mb} MiB (profile memory_mb): {death}"
            )
        return ReplCrashed(f"the REPL {death} ({what})" + (f": {tail}" if tail else ""))
