"""Lean backends: run Lean on a source text.

- `FileBackend`: writes the source to a scratch directory and runs `lake lean FILE -- --json`
  in a Lake project (or plain `lean --json FILE`), with a timeout and a memory cap.
- `ReplBackend`: one Lean REPL process (our `ReplClient`, or LeanInteract's server when it is
  installed); the imports of a source run once and their environment is reused.

Every call returns a `LeanRun`; none raises for a hang (`timeout`), a dead process
(`oom_or_crash`) or a missing toolchain (`toolchain_missing`). A process-wide semaphore per
profile bounds how many Lean processes run at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol, runtime_checkable

from pytest_lsrb.core.paths import inside, relative_path_problem
from pytest_lsrb.tactic.lean.modules import SCRATCH_MODULE, ModuleCheck, is_module, split_module
from pytest_lsrb.tactic.lean.outcome import (
    REPL_PROTOCOL_ERRORS,
    LeanMessage,
    SorryInfo,
    messages_from_reply,
    parse_lean_output,
    sorries_from_reply,
)
from pytest_lsrb.tactic.lean.process import ProcessResult, hit_memory_cap, run_bounded, which
from pytest_lsrb.tactic.lean.proofstate import TacticStep, step_from_reply, tactic_request
from pytest_lsrb.tactic.lean.repl import (
    ReplClient,
    ReplCrashed,
    ReplError,
    ReplMemoryLimit,
    ReplMissing,
    ReplProtocolError,
    ReplTimeout,
)

RunStatus = Literal["ok", "timeout", "oom_or_crash", "memory_limit", "toolchain_missing", "failed"]


@dataclass(frozen=True)
class LeanRun:
    """What one Lean run produced. `status` is `ok` when Lean ran to the end (errors or not)."""

    status: RunStatus
    messages: tuple[LeanMessage, ...] = ()
    sorries: tuple[SorryInfo, ...] = ()
    reply: Mapping[str, Any] | None = None  # the raw REPL reply, when there was one
    detail: str = ""
    elapsed_s: float = 0.0

    @property
    def errors(self) -> list[LeanMessage]:
        return [m for m in self.messages if m.is_error]


@runtime_checkable
class LeanBackend(Protocol):
    name: str

    def unavailable(self) -> str | None:
        """Why this backend cannot run here (no `lean`/`lake` on PATH...), or None."""
        ...

    def check(self, source: str, *, rel_path: str, header_lines: int = 0) -> LeanRun:
        """Run Lean on `source` (its first `header_lines` lines are the imports)."""
        ...

    def close(self) -> None: ...


# -- parallelism -------------------------------------------------------------------------------

_SLOTS: dict[str, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()


def lean_slots(key: str, limit: int) -> threading.BoundedSemaphore:
    """The process-wide semaphore bounding Lean processes for one profile."""
    with _SLOTS_LOCK:
        sem = _SLOTS.get(key)
        if sem is None:
            sem = _SLOTS[key] = threading.BoundedSemaphore(max(1, limit))
        return sem


@contextlib.contextmanager
def _slot(sem: threading.BoundedSemaphore | None) -> Iterator[None]:
    if sem is None:
        yield
        return
    with sem:
        yield


# -- file backend ------------------------------------------------------------------------------


@dataclass
class FileBackend:
    """`lake lean FILE -- --json` inside `project` (or `lean --json FILE` without one)."""

    project: Path | None
    timeout_s: float
    memory_mb: int | None
    lean_command: str = "lean"
    lake_command: str = "lake"
    scratch_root: Path | None = None
    slots: threading.BoundedSemaphore | None = None
    name: str = "file"
    max_heartbeats: int | None = None

    def unavailable(self) -> str | None:
        exe = self.lake_command if self.project is not None else self.lean_command
        if which(exe) is None:
            return (
                f"`{exe}` is not on PATH (no Lean toolchain: install elan, or set the profile's "
                f"{'lake' if self.project is not None else 'lean'}_command)"
            )
        if self.project is not None and not self.project.is_dir():
            return f"the Lake project {self.project} does not exist"
        return None

    def argv(self, file: Path, extra_args: Sequence[str] = ()) -> list[str]:
        """`lake lean FILE -- --json` in a project: Lake builds the file's imports and passes the
        package's `leanOptions`/`moreLeanArgs` (Mathlib: `autoImplicit false`...), which
        `lake env lean` would skip."""
        extra = [f"-DmaxHeartbeats={self.max_heartbeats}"] if self.max_heartbeats else []
        extra += extra_args
        if self.project is not None:
            return [self.lake_command, "lean", str(file), "--", "--json", *extra]
        return [self.lean_command, "--json", *extra, str(file)]

    def check(self, source: str, *, rel_path: str, header_lines: int = 0) -> LeanRun:
        problem = relative_path_problem(rel_path)  # the row was checked; this writes a file
        if problem is not None:
            return LeanRun("failed", detail=f"refusing to write {rel_path!r} in a scratch copy: it {problem}")
        split = split_module(source) if is_module(source) else None
        scratch = Path(tempfile.mkdtemp(prefix="lsrb-lean-", dir=self.scratch_root))
        try:
            if split is not None:
                return self._check_module(scratch, split)
            file = inside(scratch, rel_path)
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(source, encoding="utf-8")
            with _slot(self.slots):
                result = run_bounded(
                    self.argv(file), cwd=self.project, timeout_s=self.timeout_s, memory_mb=self.memory_mb
                )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return self._run_of(result)

    def _check_module(self, scratch: Path, split: ModuleCheck) -> LeanRun:
        """A module file (lean/modules.py): compile it to an `.olean` under a scratch module
        name, then ask a non-module file that imports it; its messages go back on the probe line."""
        module_file = scratch / "src" / Path(*SCRATCH_MODULE.split(".")).with_suffix(".lean")
        olean = scratch / "build" / Path(*SCRATCH_MODULE.split(".")).with_suffix(".olean")
        asking = scratch / "LsrbAsk.lean"
        module_file.parent.mkdir(parents=True, exist_ok=True)
        olean.parent.mkdir(parents=True, exist_ok=True)
        module_file.write_text(split.module_text, encoding="utf-8")
        asking.write_text(split.probe_text, encoding="utf-8")
        argv = self.argv(module_file, ["-R", str(scratch / "src"), "-o", str(olean)])
        with _slot(self.slots):
            compiled = self._run_of(
                run_bounded(argv, cwd=self.project, timeout_s=self.timeout_s, memory_mb=self.memory_mb)
            )
        if compiled.status != "ok" or compiled.errors:
            return compiled  # the module's own errors decide; nothing to ask about
        # the scratch module is found on LEAN_PATH (Lake appends the caller's to its own)
        env = dict(os.environ)
        env["LEAN_PATH"] = os.pathsep.join(p for p in (str(scratch / "build"), env.get("LEAN_PATH")) if p)
        ask_argv = (
            [self.lake_command, "env", self.lean_command, "--json", str(asking)]
            if self.project is not None
            else [self.lean_command, "--json", str(asking)]
        )
        with _slot(self.slots):
            asked = self._run_of(
                run_bounded(
                    ask_argv, cwd=self.project, timeout_s=self.timeout_s, memory_mb=self.memory_mb, env=env
                )
            )
        if asked.status != "ok":
            return dataclasses.replace(asked, detail=f"asking for the module's axioms: {asked.detail}")
        placed = tuple(
            LeanMessage(
                m.severity,
                (split.probe_line, m.pos[1] if m.pos[0] == split.asked_at else 0),
                None,
                m.data,
            )
            for m in asked.messages
        )
        return dataclasses.replace(
            compiled, messages=compiled.messages + placed, elapsed_s=compiled.elapsed_s + asked.elapsed_s
        )

    def kernel_recheck(self, source: str, *, checker: str) -> tuple[bool | None, LeanRun]:
        """Compile `source` to an `.olean` under a scratch module name and replay it through the
        kernel with lean4checker (`lake env lean4checker <Module>`, its README's invocation).
        (True, run): the checker accepted every declaration; (False, run): it found a problem
        (run.detail holds its report); (None, run): the compile or the checker could not run."""
        split = split_module(source) if is_module(source) else None
        scratch = Path(tempfile.mkdtemp(prefix="lsrb-recheck-", dir=self.scratch_root))
        try:
            module_file = scratch / "src" / Path(*SCRATCH_MODULE.split(".")).with_suffix(".lean")
            olean = scratch / "build" / Path(*SCRATCH_MODULE.split(".")).with_suffix(".olean")
            module_file.parent.mkdir(parents=True, exist_ok=True)
            olean.parent.mkdir(parents=True, exist_ok=True)
            module_file.write_text(split.module_text if split is not None else source, encoding="utf-8")
            argv = self.argv(module_file, ["-R", str(scratch / "src"), "-o", str(olean)])
            with _slot(self.slots):
                compiled = self._run_of(
                    run_bounded(argv, cwd=self.project, timeout_s=self.timeout_s, memory_mb=self.memory_mb)
                )
            if compiled.status != "ok":
                return None, compiled
            if compiled.errors:
                detail = f"compiling the closed answer for the kernel re-check: {compiled.errors[0].data}"
                return None, LeanRun("failed", detail=detail, elapsed_s=compiled.elapsed_s)
            env = dict(os.environ)
            env["LEAN_PATH"] = os.pathsep.join(p for p in (str(scratch / "build"), env.get("LEAN_PATH")) if p)
            check_argv = (
                [self.lake_command, "env", checker, SCRATCH_MODULE]
                if self.project is not None
                else [checker, SCRATCH_MODULE]
            )
            with _slot(self.slots):
                checked = run_bounded(
                    check_argv, cwd=self.project, timeout_s=self.timeout_s, memory_mb=self.memory_mb, env=env
                )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        elapsed = compiled.elapsed_s + checked.elapsed_s
        if checked.status == "missing":
            return None, LeanRun("toolchain_missing", detail=checked.detail)
        if checked.status != "exited":
            return None, LeanRun(checked.status, detail=f"lean4checker: {checked.detail}", elapsed_s=elapsed)
        if checked.returncode == 0:
            return True, LeanRun("ok", elapsed_s=elapsed)
        report = "\n".join(
            line for line in (checked.stdout + "\n" + checked.stderr).split("\n") if line.strip()
        )
        # lean4checker's report on a kernel rejection (its tests' *.expected.out): "lean4checker
        # found a problem in <Module>" then "uncaught exception: (kernel) ...". Any other exit is
        # the checker's own trouble (a missing .olean, a usage error), not the answer's.
        if "(kernel)" in report or "found a problem" in report:
            kept = report[report.find("uncaught exception") :] if "uncaught exception" in report else report
            return False, LeanRun("ok", detail=kept.strip()[-2000:], elapsed_s=elapsed)
        detail = f"lean4checker exit code {checked.returncode}: {report[-1000:]}"
        return None, LeanRun("failed", detail=detail, elapsed_s=elapsed)

    def _run_of(self, result: ProcessResult) -> LeanRun:
        if result.status == "missing":
            return LeanRun("toolchain_missing", detail=result.detail)
        if result.status != "exited":
            return LeanRun(result.status, detail=result.detail, elapsed_s=result.elapsed_s)
        messages = tuple(parse_lean_output(result.stdout))
        if result.returncode != 0 and not any(m.is_error for m in messages):
            tail = (result.stderr or result.stdout).strip()[-1000:]
            return LeanRun(
                "failed",
                messages,
                detail=f"exit code {result.returncode}: {tail}",
                elapsed_s=result.elapsed_s,
            )
        return LeanRun("ok", messages, elapsed_s=result.elapsed_s)

    def close(self) -> None:
        return None


# -- REPL backends -----------------------------------------------------------------------------


class Transport(Protocol):
    def send(self, request: Mapping[str, Any], *, timeout_s: float) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LeanInteractTransport:
    """LeanInteract's `LeanServer` behind the same `send` as `ReplClient`.

    LeanInteract runs `lake env <REPL checkout>/.lake/build/bin/repl`. Given `repl_dir` (a built
    REPL checkout: from a profile's `repl_command`, see `local_repl_dir`) it uses that one and
    builds nothing (`local_repl_path`, `build_repl=False`), so an offline machine never reaches
    for GitHub; without it LeanInteract clones and builds its own REPL (network needed). What its
    REPL does wrong ends as ours would: a reply that is not JSON (`JSONDecodeError`) restarts it
    and is the harness's failure; a death under the memory cap (`memory_mb`, which LeanInteract
    applies as RLIMIT_AS) whose output says so is `memory_limit`; any other death a crash.
    """

    def __init__(
        self, project: Path | None, memory_mb: int | None, lake_command: str, repl_dir: Path | None = None
    ) -> None:
        self.project = project
        self.memory_mb = memory_mb
        self.lake_command = lake_command
        self.repl_dir = repl_dir
        self._server: Any = None

    def _start(self) -> Any:
        if self._server is None:
            try:
                from lean_interact import LeanREPLConfig, LeanServer, LocalProject
            except ImportError as exc:  # pragma: no cover - checked by the caller
                raise ReplMissing(f"LeanInteract is not importable ({exc})") from None
            local: dict[str, Any] = (
                {"local_repl_path": str(self.repl_dir), "build_repl": False}
                if self.repl_dir is not None
                else {}
            )
            try:
                project = (
                    LocalProject(directory=str(self.project), lake_path=self.lake_command, auto_build=False)
                    if self.project is not None
                    else None
                )
                config = LeanREPLConfig(
                    project=project, memory_hard_limit_mb=self.memory_mb, lake_path=self.lake_command, **local
                )
                self._server = LeanServer(config)
            except Exception as exc:  # LeanInteract raises many types while setting up
                raise ReplMissing(f"LeanInteract could not start a REPL: {str(exc)[:1000]}") from None
        return self._server

    def send(self, request: Mapping[str, Any], *, timeout_s: float) -> dict[str, Any]:
        server = self._start()
        try:
            reply = server.run_dict(dict(request), timeout=timeout_s)
        except TimeoutError as exc:
            self._server = None
            raise ReplTimeout(str(exc)) from None
        except json.JSONDecodeError as exc:  # its stream is out of step now: start afresh
            self.close()
            raise ReplProtocolError(
                f"the LeanInteract REPL answered with something not JSON: {str(exc)[:500]}"
            ) from None
        except (ConnectionAbortedError, ChildProcessError, BrokenPipeError, EOFError) as exc:
            self.close()
            said = str(exc)
            if hit_memory_cap(self.memory_mb, said):
                raise ReplMemoryLimit(
                    f"the LeanInteract REPL hit the memory cap of {self.memory_mb} MiB (profile memory_mb): "
                    f"{said[-1000:]}"
                ) from None
            raise ReplCrashed(f"the LeanInteract REPL died: {said[-1000:]}") from None
        if not isinstance(reply, dict):
            raise ReplProtocolError(f"LeanInteract answered {type(reply).__name__}")
        return reply

    def close(self) -> None:
        if self._server is not None:
            with contextlib.suppress(Exception):
                self._server.kill()
            self._server = None


REPL_BINARY: Final = (".lake", "build", "bin", "repl")


def local_repl_dir(repl_command: Sequence[str] | None) -> Path | None:
    """The REPL checkout a `repl_command` runs (`<dir>/.lake/build/bin/repl`), or None."""
    if not repl_command:
        return None
    exe = Path(repl_command[0]).expanduser()
    return exe.parents[3] if exe.parts[-4:] == REPL_BINARY else None


# The module header: `module`, `prelude`, and imports with the module system's modifiers
# (`public import`, `meta import`, `public meta import`, `import all`).
_HEADER_LINE: Final = re.compile(r"^(?:module|prelude)\s*$|^(?:public\s+)?(?:meta\s+)?import\s")


def split_imports(source: str) -> int:
    """How many leading lines are the header (`import`, `prelude`, comments, blank lines)."""
    count = 0
    in_comment = False
    header_end = 0
    for line in source.split("\n"):
        stripped = line.strip()
        count += 1
        if in_comment:
            in_comment = "-/" not in stripped
            continue
        if stripped.startswith("/-"):
            in_comment = "-/" not in stripped[2:]
            continue
        if not stripped or stripped.startswith("--"):
            continue
        if _HEADER_LINE.match(stripped):
            header_end = count
            continue
        break
    return header_end


@dataclass
class ReplBackend:
    """One REPL process; requests are serialised, the imports' environment is cached."""

    transport: Transport
    timeout_s: float
    name: str = "repl"
    missing_reason: str | None = None
    slots: threading.BoundedSemaphore | None = None
    generation: int = 0  # bumped on every restart: environments from earlier calls are gone
    max_heartbeats: int | None = None  # `set_option maxHeartbeats N` opens every command after the imports
    _envs: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def unavailable(self) -> str | None:
        return self.missing_reason

    def _send(self, request: Mapping[str, Any]) -> tuple[dict[str, Any] | None, LeanRun | None]:
        start = time.monotonic()
        try:
            with _slot(self.slots):
                return self.transport.send(request, timeout_s=self.timeout_s), None
        except ReplMissing as exc:
            return None, LeanRun("toolchain_missing", detail=str(exc))
        except ReplTimeout as exc:
            self._restarted()
            return None, LeanRun("timeout", detail=str(exc), elapsed_s=time.monotonic() - start)
        except ReplCrashed as exc:
            self._restarted()
            status: RunStatus = "memory_limit" if isinstance(exc, ReplMemoryLimit) else "oom_or_crash"
            return None, LeanRun(status, detail=str(exc), elapsed_s=time.monotonic() - start)
        except ReplError as exc:
            self._restarted()
            return None, LeanRun("failed", detail=str(exc), elapsed_s=time.monotonic() - start)

    def _restarted(self) -> None:
        self._envs.clear()
        self.generation += 1
        with contextlib.suppress(Exception):
            self.transport.close()

    def check(self, source: str, *, rel_path: str, header_lines: int = 0) -> LeanRun:
        header_lines = header_lines or split_imports(source)
        lines = source.split("\n")
        imports, body = "\n".join(lines[:header_lines]), "\n".join(lines[header_lines:])
        start = time.monotonic()
        with self._lock:
            env: int | None = None
            if imports.strip():
                env = self._envs.get(imports)
                if env is None:
                    reply, failed = self._send({"cmd": imports})
                    if failed is not None:
                        return failed
                    assert reply is not None
                    msgs = tuple(messages_from_reply(reply))
                    if "env" not in reply or any(m.is_error for m in msgs):
                        return LeanRun(
                            "ok",
                            msgs,
                            reply=reply,
                            detail=str(reply.get("message", "")),
                            elapsed_s=time.monotonic() - start,
                        )
                    env = self._envs[imports] = int(reply["env"])
            shift = header_lines
            if self.max_heartbeats:  # as `-DmaxHeartbeats=N` in file mode; one line above the body
                body = f"set_option maxHeartbeats {self.max_heartbeats}\n{body}"
                shift -= 1
            request: dict[str, Any] = {"cmd": body}
            if env is not None:
                request["env"] = env
            reply, failed = self._send(request)
        if failed is not None:
            return failed
        assert reply is not None
        if "env" not in reply and str(reply.get("message", "")).startswith(REPL_PROTOCOL_ERRORS):
            # the request was wrong (a lost environment...): the harness's fault, not the answer's
            return LeanRun("failed", reply=reply, detail=f"the REPL refused the request: {reply['message']}")
        messages = tuple(m.shifted(shift) for m in messages_from_reply(reply))
        sorries = tuple(
            SorryInfo(
                (s.pos[0] + shift, s.pos[1]) if s.pos else None,
                (s.end_pos[0] + shift, s.end_pos[1]) if s.end_pos else None,
                s.goal,
                s.proof_state,
            )
            for s in sorries_from_reply(reply)
        )
        return LeanRun("ok", messages, sorries, reply=reply, elapsed_s=time.monotonic() - start)

    def run_tactic(self, tactic: str, proof_state: int, *, generation: int) -> TacticStep | LeanRun:
        """Run `tactic` on `proof_state`, a state this process made in `generation` (lean/proofstate.py).
        A restarted process has other states under the same numbers: refused (`failed`), never sent."""
        with self._lock:
            if generation != self.generation:
                return LeanRun("failed", detail=f"proof state {proof_state} was lost when the REPL restarted")
            reply, failed = self._send(tactic_request(tactic, proof_state))
        if failed is not None:
            return failed
        assert reply is not None
        return step_from_reply(reply)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.transport.close()


def lean_interact_available() -> bool:
    try:
        import lean_interact  # noqa: F401
    except ImportError:
        return False
    return True


def make_repl_backend(
    *,
    project: Path | None,
    timeout_s: float,
    memory_mb: int | None,
    repl_command: Sequence[str] | None,
    lake_command: str,
    prefer: str = "auto",
    slots: threading.BoundedSemaphore | None = None,
    max_heartbeats: int | None = None,
) -> ReplBackend:
    """A REPL backend: LeanInteract (`prefer` auto/lean_interact, when importable) or our client."""
    use_li = prefer == "lean_interact" or (
        prefer == "auto" and not repl_command and lean_interact_available()
    )
    if use_li:
        missing = None if which(lake_command) else f"`{lake_command}` is not on PATH (no Lean toolchain)"
        if missing is None and not lean_interact_available():
            missing = "LeanInteract is not installed (pip install lean-interact)"
        repl_dir = local_repl_dir(repl_command)
        if missing is None and repl_command and repl_dir is None:
            missing = (
                "LeanInteract runs a REPL checkout's `.lake/build/bin/repl`; "
                f"repl_command {repl_command[0]!r} is not one (set it to that path, or "
                "repl_backend = 'repl' to run it directly)"
            )
        transport: Transport = LeanInteractTransport(project, memory_mb, lake_command, repl_dir)
        return ReplBackend(
            transport,
            timeout_s,
            name="lean_interact",
            missing_reason=missing,
            slots=slots,
            max_heartbeats=max_heartbeats,
        )
    argv = list(repl_command or [lake_command, "exe", "repl"])
    missing = None if which(argv[0]) else f"`{argv[0]}` is not on PATH (no Lean toolchain or REPL)"
    client = ReplClient(argv, cwd=project, memory_mb=memory_mb)
    return ReplBackend(
        client, timeout_s, name="repl", missing_reason=missing, slots=slots, max_heartbeats=max_heartbeats
    )
