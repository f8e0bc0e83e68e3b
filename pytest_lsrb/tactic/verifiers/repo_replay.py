"""Verification mode `repo_replay`: check the tactic at the sorry, inside the repo at its commit.

1. Clone/fetch `repo_remote@repo_commit` into the cache once, build it once (`lake build`,
   after `lake exe cache get` when the profile says so and the repo uses Mathlib).
2. Check the unpatched file: it must compile with only its sorries (`baseline_failed`
   otherwise). Done once per repo@commit:path.
3. Splice the tactic over the sorry's span (term position: `(by tactic)`) in a scratch copy,
   never in the cached checkout, and run `lake env lean` on it from the checkout.
4. Accept (`closed`) only when the targeted sorry is gone, no error arises and no new sorry
   appears. `unsolved goals` reported for the block that holds the tactic alone is `progress`;
   any other error is `lean_error` with a subkind.

With `replay_method = "repl"` the unpatched file runs once as a REPL command and the tactic runs
as a proof step on the targeted sorry's proof state.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pytest_lsrb.core.paths import OutsideError, inside
from pytest_lsrb.engine.verifier import VerificationResult, VerifierConfig
from pytest_lsrb.tactic.lean.backend import LeanBackend, LeanRun, ProofStateBackend
from pytest_lsrb.tactic.lean.checkout import CheckoutCache, CheckoutFailure
from pytest_lsrb.tactic.lean.outcome import Verdict, first_error, judge_messages, judge_tactic_reply
from pytest_lsrb.tactic.lean.process import which
from pytest_lsrb.tactic.lean.splice import SpliceError, splice
from pytest_lsrb.tactic.profiles import ReplayProfile
from pytest_lsrb.tactic.verifiers.base import LeanVerifierBase, from_failed_run, from_verdict, result

_SORRY_TOKEN = re.compile(r"(?<![\w.'])sorry(?![\w'])")


def default_cache_root(config: VerifierConfig) -> Path:
    """`<--lsrb-cache-dir>/lean-checkouts`, else `$XDG_CACHE_HOME/pytest-lsrb/lean-checkouts`."""
    if config.cache_dir:
        return Path(config.cache_dir).expanduser().resolve() / "lean-checkouts"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-lsrb" / "lean-checkouts"


class RepoReplayVerifier(LeanVerifierBase):
    mode = "repo_replay"

    def __init__(self, config: VerifierConfig) -> None:
        super().__init__(config)
        self.cache_root = default_cache_root(config)
        self._checkouts: dict[tuple[str, str, str], CheckoutCache] = {}
        self._baselines: dict[tuple[Any, ...], tuple[VerificationResult | None, LeanRun | None]] = {}

    def checkout_cache(self, profile: ReplayProfile) -> CheckoutCache:
        key = (str(self.cache_root), profile.git_command, profile.lake_command)
        with self._lock:
            cache = self._checkouts.get(key)
            if cache is None:
                cache = self._checkouts[key] = CheckoutCache(
                    self.cache_root,
                    profile.git_command,
                    profile.lake_command,
                    allow_local_remotes=self.config.allow_local_remotes,
                )
            return cache

    def check(self, row: Any, tactic: str, profile: ReplayProfile) -> VerificationResult:
        # Without a toolchain nothing below can run: say so before cloning anything.
        for exe in (profile.git_command, profile.lake_command):
            if which(exe) is None:
                return result("toolchain_missing", detail=f"`{exe}` is not on PATH (no Lean toolchain)")
        try:
            root = self.checkout_cache(profile).ensure(
                row.repo_remote,
                row.repo_commit,
                build_timeout_s=profile.build_timeout_s,
                memory_mb=profile.memory_mb,
                mathlib_cache=profile.mathlib_cache,
            )
        except CheckoutFailure as failure:
            return result(failure.kind, detail=failure.detail)
        try:  # checked when the row was read; again here, where a symlink could lead out
            file = inside(root, row.path)
        except OutsideError as exc:
            return result("checkout_failed", subkind="path_outside", detail=f"path {exc}")
        try:
            source = file.read_text(encoding="utf-8")
        except OSError as exc:
            return result("checkout_failed", subkind="no_file", detail=f"{row.path}: {exc.strerror or exc}")
        start = (row.start_line, row.start_column)
        end = (row.end_line, row.end_column)
        try:
            spliced = splice(source, start, end, tactic, row.sorry_kind)
        except SpliceError as exc:
            return result("baseline_failed", subkind="no_sorry_at_span", detail=str(exc))
        backend = self.backend(profile, root)
        missing = backend.unavailable()
        if missing is not None:
            return result("toolchain_missing", detail=missing)
        failed, baseline = self._baseline(backend, row, source)
        if failed is not None:
            return failed
        assert baseline is not None
        if isinstance(backend, ProofStateBackend):
            return self._check_repl(backend, baseline, start, tactic)
        run = backend.check(spliced.text, rel_path=row.path)
        failed = from_failed_run(run, stage="tactic")
        if failed is not None:
            return failed
        verdict = judge_messages(run.messages, spliced.span)
        if verdict.outcome == "closed":
            verdict = self._no_new_sorry(baseline, run, source, spliced.text) or verdict
        return from_verdict(verdict)

    def _baseline(
        self, backend: LeanBackend, row: Any, source: str
    ) -> tuple[VerificationResult | None, LeanRun | None]:
        key = (id(backend), getattr(backend, "generation", 0), row.repo_remote, row.repo_commit, row.path)
        cached = self._baselines.get(key)
        if cached is not None:
            return cached
        run = backend.check(source, rel_path=row.path)
        failed = from_failed_run(run, stage="baseline_failed")
        if failed is None:
            err = first_error(run.messages)
            if err is not None:
                failed = result(
                    "baseline_failed",
                    subkind="original_error",
                    detail=f"{row.path} does not compile unpatched: {err.brief()}",
                )
        entry = (failed, None if failed else run)
        self._baselines[key] = entry
        return entry

    @staticmethod
    def _no_new_sorry(baseline: LeanRun, run: LeanRun, before: str, after: str) -> Verdict | None:
        """A `lean_error/new_sorry` verdict when the patch left more sorries than it removed."""
        warned_before = sum(m.is_sorry_warning for m in baseline.messages)
        warned_after = sum(m.is_sorry_warning for m in run.messages)
        tokens_before = len(_SORRY_TOKEN.findall(before))
        tokens_after = len(_SORRY_TOKEN.findall(after))
        if tokens_after != tokens_before - 1 or warned_after > warned_before:
            return Verdict(
                "lean_error",
                "new_sorry",
                f"sorry tokens {tokens_before}->{tokens_after}, "
                f"sorry warnings {warned_before}->{warned_after}",
            )
        return None

    def _check_repl(
        self, backend: ProofStateBackend, baseline: LeanRun, start: tuple[int, int], tactic: str
    ) -> VerificationResult:
        target = next((s for s in baseline.sorries if s.pos == start), None)
        if target is None or target.proof_state is None:
            where = ", ".join(f"{s.pos[0]}:{s.pos[1]}" for s in baseline.sorries if s.pos) or "none"
            return result(
                "baseline_failed",
                subkind="no_sorry_at_span",
                detail=f"the REPL reports no sorry at {start[0]}:{start[1]} (sorries at: {where})",
            )
        run = backend.tactic(target.proof_state, tactic)
        failed = from_failed_run(run, stage="tactic")
        if failed is not None:
            return failed
        assert run.reply is not None
        return from_verdict(judge_tactic_reply(run.reply))
