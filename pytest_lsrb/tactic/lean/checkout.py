"""Repository checkouts for repo_replay: cloned once per repo@commit, built once, never patched.

Layout under the cache root:

    <root>/<host>__<owner>__<name>/<commit>/        the checkout (read only for the verifier)
    <root>/<host>__<owner>__<name>/<commit>.ready   written after a successful build
    <root>/<host>__<owner>__<name>/<commit>.lock    serialises clone/build across processes

    <root>/<host>__<owner>__<name>/lake-packages/<key>/   the `lake` dependencies, shared

Checkouts of one repository at different commits share their `.lake/packages` (Mathlib and its
dependencies, with their builds: the bulk of the disk) when their `lake-manifest.json` package
list and `lean-toolchain` are the same: `key` hashes both, and each checkout's `.lake/packages` is
a link to that folder. Builds into one shared folder are serialised by a lock beside it.

A failed clone or build is remembered for the rest of the process, so one broken repo costs one
attempt at it, not one per sample. Patched files never go into the checkout: the verifier writes
them to scratch directories and runs `lake lean FILE` on them from here (so the lakefile's
`leanOptions` apply).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pytest_lsrb.tactic.lean.gitrefs import commit_problem, git_environment, remote_problem
from pytest_lsrb.tactic.lean.locks import file_lock
from pytest_lsrb.tactic.lean.process import ProcessResult, run_before, which

FailureKind = Literal["toolchain_missing", "checkout_failed", "build_failed"]


class CheckoutFailure(Exception):
    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


_SLUG_MAX = 100


def repo_slug(remote: str) -> str:
    """A folder name for a remote: `https://github.com/o/n(.git)` -> `github.com__o__n`.

    Never `.`, `..` or a hidden name, and at most 100 characters (a hash keeps long ones apart)."""
    text = re.sub(r"^[a-z+]+://", "", remote.strip()).removesuffix("/").removesuffix(".git")
    text = text.replace("git@", "").replace(":", "/")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "__", text.replace("/", "__")).strip("_").lstrip(".") or "repo"
    if len(slug) > _SLUG_MAX:
        digest = hashlib.sha256(remote.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        slug = f"{slug[: _SLUG_MAX - 18]}__{digest}"
    return slug


def _tail(result: ProcessResult, limit: int = 800) -> str:
    text = (result.stderr.strip() or result.stdout.strip())[-limit:]
    return f"{result.detail} {text}".strip()


@dataclass
class CheckoutCache:
    root: Path
    git_command: str = "git"
    lake_command: str = "lake"
    allow_local_remotes: bool = False  # --lsrb-allow-local-remotes
    _failures: dict[str, CheckoutFailure] = field(default_factory=dict)
    _locks: dict[str, threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def path(self, remote: str, commit: str) -> Path:
        return self.root / repo_slug(remote) / commit

    def _lock_for(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def ensure(
        self,
        remote: str,
        commit: str,
        *,
        build_timeout_s: float,
        memory_mb: int | None,
        mathlib_cache: bool,
    ) -> Path:
        """The built checkout of `remote@commit`, cloning and building it the first time.

        The values are checked again here, right before git sees them (rows were checked when
        read, but a caller may build one by hand): a refused value is `checkout_failed`."""
        checks = (
            ("repo_commit", commit, commit_problem(commit)),
            ("repo_remote", remote, remote_problem(remote, allow_local=self.allow_local_remotes)),
        )
        for name, value, problem in checks:
            if problem is not None:
                raise CheckoutFailure("checkout_failed", f"{name} {value!r} refused: it {problem}")
        target = self.path(remote, commit)
        key = str(target)
        with self._lock_for(key):
            if key in self._failures:
                raise self._failures[key]
            ready = target.with_name(commit + ".ready")
            if ready.exists() and target.is_dir():
                return target
            try:
                with file_lock(target.with_name(commit + ".lock")):
                    if ready.exists() and target.is_dir():  # another process finished it
                        return target
                    deadline = time.monotonic() + build_timeout_s
                    self._clone(remote, commit, target, deadline, memory_mb)
                    self._build(target, deadline, memory_mb, mathlib_cache)
                    ready.write_text(
                        json.dumps({"remote": remote, "commit": commit, "built_at": time.time()}),
                        encoding="utf-8",
                    )
            except CheckoutFailure as failure:
                if failure.kind != "toolchain_missing":
                    self._failures[key] = failure
                raise
            return target

    def _run(self, argv: list[str], cwd: Path, deadline: float, memory_mb: int | None) -> ProcessResult:
        # git (and lake, which runs git for dependencies) may use only the transports a remote
        # may name (never ext:: or fd::).
        return run_before(
            argv,
            deadline=deadline,
            cwd=cwd,
            memory_mb=memory_mb,
            env=git_environment(self.allow_local_remotes),
        )

    def _clone(self, remote: str, commit: str, target: Path, deadline: float, memory_mb: int | None) -> None:
        if target.is_dir() and (target / ".git").exists():
            return
        git = self.git_command
        if which(git) is None:
            raise CheckoutFailure("toolchain_missing", f"`{git}` is not on PATH")
        partial = target.with_name(f"{commit}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        # `--` ends the options of every command that takes a value from a row, so no value can
        # be read as an option (`--upload-pack=<command>`), whatever slipped past validation.
        steps = [
            [git, "init", "-q"],
            [git, "remote", "add", "--", "origin", remote],
            [git, "fetch", "-q", "--depth", "1", "--", "origin", commit],
            [git, "-c", "advice.detachedHead=false", "checkout", "-q", "FETCH_HEAD", "--"],
        ]
        for argv in steps:
            result = self._run(argv, partial, deadline, memory_mb)
            if result.status == "exited" and result.returncode == 0:
                continue
            if argv[1] == "fetch":  # servers that refuse fetching a bare commit: fetch everything
                result = self._run([git, "fetch", "-q", "--", "origin"], partial, deadline, memory_mb)
                if result.status == "exited" and result.returncode == 0:
                    steps[-1][-2] = commit
                    continue
            shutil.rmtree(partial, ignore_errors=True)
            raise CheckoutFailure("checkout_failed", f"{' '.join(argv[:3])} failed: {_tail(result)}")
        head = self._run([git, "rev-parse", "HEAD"], partial, deadline, memory_mb)
        if head.stdout.strip() and not head.stdout.strip().lower().startswith(commit[:7].lower()):
            shutil.rmtree(partial, ignore_errors=True)
            raise CheckoutFailure("checkout_failed", f"HEAD is {head.stdout.strip()}, not {commit}")
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)

    def _build(self, target: Path, deadline: float, memory_mb: int | None, mathlib_cache: bool) -> None:
        lake = self.lake_command
        if which(lake) is None:
            raise CheckoutFailure("toolchain_missing", f"`{lake}` is not on PATH (no Lean toolchain)")
        shared = shared_packages(target)
        with file_lock(shared.with_name(shared.name + ".lock")) if shared else contextlib.nullcontext():
            self._build_in(target, deadline, memory_mb, mathlib_cache)

    def _build_in(self, target: Path, deadline: float, memory_mb: int | None, mathlib_cache: bool) -> None:
        lake = self.lake_command
        manifest = target / "lake-manifest.json"
        uses_mathlib = manifest.exists() and "mathlib" in manifest.read_text(encoding="utf-8").lower()
        if mathlib_cache and (uses_mathlib or (target / "Mathlib.lean").exists()):
            # A failed cache fetch only makes the build slower; the build decides.
            self._run([lake, "exe", "cache", "get"], target, deadline, memory_mb)
        result = self._run([lake, "build"], target, deadline, memory_mb)
        if result.status == "missing":
            raise CheckoutFailure("toolchain_missing", result.detail)
        if result.status != "exited" or result.returncode != 0:
            raise CheckoutFailure("build_failed", f"lake build failed: {_tail(result)}")


def packages_key(checkout: Path) -> str | None:
    """What decides the content of `.lake/packages`: the manifest's package list (names, urls,
    revisions) and the toolchain they are built with. None without a readable package list."""
    try:
        manifest = json.loads((checkout / "lake-manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    packages = manifest.get("packages") if isinstance(manifest, dict) else None
    if not isinstance(packages, list) or not packages:
        return None
    try:
        toolchain = (checkout / "lean-toolchain").read_text(encoding="utf-8").strip()
    except OSError:
        toolchain = ""
    text = json.dumps({"packages": packages, "toolchain": toolchain}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def shared_packages(checkout: Path) -> Path | None:
    """Link `checkout/.lake/packages` to the repository's shared folder for its manifest and
    toolchain (made when missing), and return that folder; None when the checkout keeps its own
    (no manifest, or a `.lake/packages` of its own already there)."""
    key = packages_key(checkout)
    if key is None:
        return None
    shared = checkout.parent / "lake-packages" / key
    link = checkout / ".lake" / "packages"
    if (checkout / ".lake").is_symlink():  # a committed link could lead anywhere: not followed
        return None
    if link.is_symlink():
        return shared if link.resolve() == shared.resolve() else None
    if link.exists():
        return None
    shared.mkdir(parents=True, exist_ok=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(shared, target_is_directory=True)
    return shared
