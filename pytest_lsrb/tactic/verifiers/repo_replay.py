"""Verification mode `repo_replay`: check the tactic at the sorry, inside the repo at its commit.

1. Clone/fetch `repo_remote@repo_commit` into the cache once, build it once (`lake build`,
   after `lake exe cache get` when the profile says so and the repo uses Mathlib).
2. Find the declaration holding the sorry, name it if it has none, and put
   `#print axioms <it>` after it (lean/patch.py). Check this unpatched copy: it must compile
   with only its sorries (`baseline_failed` otherwise). Done once per file and declaration.
3. Splice the tactic over the sorry's span (lean/splice.py: tactic or term position from the
   syntax around it; a position no tactic can take is `skipped_unspliceable` with the reason)
   in a scratch copy, never in the cached checkout, and run Lean on it from the checkout.
4. Judge by the acceptance rule (lean/acceptance.py): no error, the other sorries exactly as
   before, and the target's axioms clean. `unsolved goals` for the block holding the tactic
   alone is `progress`. The target's other sorries stand in as an axiom in both copies, so a
   sorry the answer brings is seen in the target's axioms (lean/patch.py); where that does not
   compile, the baseline is checked again without them.

A file with a `module` header is checked in two runs wherever it is, since Lean refuses
`#print axioms` in a module: the checked copy is compiled under a scratch module name and a
non-module file that imports it asks for the axioms (lean/modules.py); the REPL cannot import a
copy it did not compile, so such files take the file route whatever `replay_method` says.

With `replay_method = "repl"` the lines before the target declaration (imports, module header
and all) run once as the REPL's first command; the baseline and every sample run from the
target declaration on in that environment, and the REPL's `sorries` lists are diffed by
position as SorryDB does. k samples of an item cost one elaboration of the file's prefix. With
--lsrb-screen (the default) each answer first runs on the baseline's proof state of the sorry
(verifiers/base.py `screen`): only answers that close there compile the patched file.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from pytest_lsrb.core.paths import OutsideError, inside
from pytest_lsrb.engine.verifier import VerificationResult, VerifierConfig
from pytest_lsrb.tactic.lean.acceptance import (
    accept,
    owed_sorry,
    parse_axiom_report,
    sorry_diff,
    warning_diff,
)
from pytest_lsrb.tactic.lean.backend import LeanBackend, LeanRun, lean_interact_available
from pytest_lsrb.tactic.lean.checkout import CheckoutCache, CheckoutFailure
from pytest_lsrb.tactic.lean.declaration import TARGET_NAME, referenced_names
from pytest_lsrb.tactic.lean.modules import is_module
from pytest_lsrb.tactic.lean.outcome import Verdict, first_error
from pytest_lsrb.tactic.lean.patch import (
    STAND_IN,
    Baseline,
    Patched,
    make_baseline,
    make_patched,
    owed_probe,
)
from pytest_lsrb.tactic.lean.process import which
from pytest_lsrb.tactic.lean.proofstate import ProofStart
from pytest_lsrb.tactic.lean.replbuild import repl_command
from pytest_lsrb.tactic.lean.splice import SpliceError, code_span
from pytest_lsrb.tactic.lean.toolchain import describe_toolchain
from pytest_lsrb.tactic.profiles import ReplayProfile
from pytest_lsrb.tactic.prompts import SourceFile
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.verifiers.base import (
    LeanVerifierBase,
    from_failed_run,
    from_verdict,
    no_search,
    result,
    start_at,
)


def default_cache_root(config: VerifierConfig) -> Path:
    """`<--lsrb-cache-dir>/lean-checkouts`, else `$XDG_CACHE_HOME/pytest-lsrb/lean-checkouts`."""
    if config.cache_dir:
        return Path(config.cache_dir).expanduser().resolve() / "lean-checkouts"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-lsrb" / "lean-checkouts"


class RepoReplayVerifier(LeanVerifierBase):
    mode = "repo_replay"
    kimina_allowed = False  # the server cannot build the row's repository

    def __init__(self, config: VerifierConfig) -> None:
        super().__init__(config)
        self.cache_root = default_cache_root(config)
        self._checkouts: dict[tuple[str, str, str], CheckoutCache] = {}
        self._baselines: dict[tuple[Any, ...], tuple[VerificationResult | None, LeanRun | None]] = {}
        self._owed: dict[tuple[Any, ...], tuple[str, ...]] = {}

    def checkout_cache(self, profile: ReplayProfile) -> CheckoutCache:
        key = (str(self.cache_root), profile.git_command, profile.lake_command)
        with self._lock:
            cache = self._checkouts.get(key)
            if cache is None:
                cache = self._checkouts[key] = CheckoutCache(
                    self.cache_root,
                    profile.git_command,
                    profile.lake_command,
                    allow_local_remotes=self.lean.allow_local_remotes,
                )
            return cache

    def source_file(self, row: TacticRow) -> SourceFile | None:
        """The row's file at its commit, from the checkout (cloned and built here if this is the
        first use); None when it cannot be read."""
        profile = self.profile_for(row)
        if profile.skip or any(which(exe) is None for exe in (profile.git_command, profile.lake_command)):
            return None
        try:
            root = self.checkout_cache(profile).ensure(
                row.repo_remote,
                row.repo_commit,
                build_timeout_s=profile.build_timeout_s,
                memory_mb=profile.build_memory_mb,
                mathlib_cache=profile.mathlib_cache,
            )
            source = inside(root, row.path).read_text(encoding="utf-8")
        except (CheckoutFailure, OutsideError, OSError, UnicodeDecodeError):
            return None
        return SourceFile(source, row.start_line, row.start_column, row.end_line)

    def executables(self, profile: ReplayProfile) -> list[str]:
        recheck = [profile.lean4checker_command] if profile.kernel_recheck == "lean4checker" else []
        return [profile.git_command, profile.lake_command, *super().executables(profile), *recheck]

    def check(self, row: TacticRow, tactic: str, profile: ReplayProfile) -> VerificationResult:
        ready = self._ready(row, profile)
        if isinstance(ready, VerificationResult):
            return ready
        root, profile = ready
        checked = self._check_in(root, row, tactic, profile)
        if checked.outcome in ("toolchain_missing", "checkout_failed"):
            return checked
        return dataclasses.replace(checked, toolchain=describe_toolchain(root))

    def _ready(
        self, row: TacticRow, profile: ReplayProfile
    ) -> tuple[Path, ReplayProfile] | VerificationResult:
        """The checkout built at the row's commit and the profile to check it with, or why not."""
        # Without a toolchain nothing below can run: say so before cloning anything.
        for exe in (profile.git_command, profile.lake_command):
            if which(exe) is None:
                return result("toolchain_missing", detail=f"`{exe}` is not on PATH (no Lean toolchain)")
        try:
            root = self.checkout_cache(profile).ensure(
                row.repo_remote,
                row.repo_commit,
                build_timeout_s=profile.build_timeout_s,
                memory_mb=profile.build_memory_mb,
                mathlib_cache=profile.mathlib_cache,
            )
        except CheckoutFailure as failure:
            return result(failure.kind, detail=failure.detail)
        if profile.replay_method != "file" and _is_module_file(root, row.path):
            # `#print axioms` is refused in a module: only the file route can ask from a
            # non-module file that imports the checked copy (lean/modules.py)
            profile = profile.model_copy(update={"replay_method": "file"})
        if (
            profile.replay_method == "repl"
            and not profile.repl_command
            and (profile.repl_backend == "repl" or not lean_interact_available())
        ):  # no `repl` dependency in the repo: the REPL built for its Lean version
            try:
                argv = repl_command(
                    self.checkout_cache(profile),
                    root,
                    timeout_s=profile.build_timeout_s,
                    memory_mb=profile.build_memory_mb,
                )
            except CheckoutFailure as failure:
                return result(failure.kind, detail=failure.detail)
            profile = profile.model_copy(update={"repl_command": argv})
        return root, profile

    def proof_start(self, row: TacticRow) -> ProofStart | VerificationResult:
        """The sorry's proof state in the unpatched file (its baseline, checked once), for a search."""
        profile = self.profile_for(row)
        skipped = self.skipped(profile)
        if skipped is not None:
            return skipped
        ready = self._ready(row, profile)
        if isinstance(ready, VerificationResult):
            return ready
        root, profile = ready
        source = self._source(root, row)
        if isinstance(source, VerificationResult):
            return source
        prepared = make_baseline(source, (row.start_line, row.start_column), (row.end_line, row.end_column))
        if prepared is None:
            return result(
                "skipped_unspliceable", subkind="no_declaration", detail=f"no declaration in {row.path}"
            )
        backend = self.backend(profile, root)
        generation = getattr(backend, "generation", 0)
        failed, baseline = self._baseline(backend, row, prepared)
        if failed is not None and failed.outcome == "baseline_failed" and prepared.stand_ins:
            plain = make_baseline(source, prepared.span[0], (row.end_line, row.end_column), stand_ins=False)
            assert plain is not None  # the same declaration was found above
            prepared = plain
            failed, baseline = self._baseline(backend, row, prepared)
        if failed is not None:
            return failed
        assert baseline is not None
        return start_at(backend, generation, baseline, prepared.span) or no_search(profile)

    def _source(self, root: Path, row: TacticRow) -> str | VerificationResult:
        try:  # checked when the row was read; again here, where a symlink could lead out
            file = inside(root, row.path)
        except OutsideError as exc:
            return result("checkout_failed", subkind="path_outside", detail=f"path {exc}")
        try:
            return file.read_text(encoding="utf-8")
        except OSError as exc:
            return result("checkout_failed", subkind="no_file", detail=f"{row.path}: {exc.strerror or exc}")

    def _check_in(
        self, root: Path, row: TacticRow, tactic: str, profile: ReplayProfile
    ) -> VerificationResult:
        source = self._source(root, row)
        if isinstance(source, VerificationResult):
            return source
        start = (row.start_line, row.start_column)
        end = (row.end_line, row.end_column)
        # An answer naming the stand-in axiom would borrow it: such an answer is checked without.
        prepared = make_baseline(source, start, end, stand_ins=STAND_IN not in tactic)
        if prepared is None:
            return result(
                "skipped_unspliceable",
                subkind="no_declaration",
                detail=f"no declaration keyword precedes {row.path}:{start[0]}",
            )
        try:
            patched = make_patched(prepared, tactic, row.sorry_kind)
        except SpliceError as exc:
            if "not sorry" in str(exc) or "outside" in str(exc) or "past the end" in str(exc):
                return result("baseline_failed", subkind="no_sorry_at_span", detail=str(exc))
            return result("skipped_unspliceable", subkind="position", detail=str(exc))
        backend = self.backend(profile, root)
        missing = backend.unavailable()
        if missing is not None:
            return result("toolchain_missing", detail=missing)
        generation = getattr(backend, "generation", 0)  # the baseline's proof states are this process's
        failed, baseline = self._baseline(backend, row, prepared)
        if failed is not None and failed.outcome == "baseline_failed" and prepared.stand_ins:
            # The stand-ins did not compile here (a computable def, a guessed position): judge
            # with the target's own sorries, as far as they allow (lean/patch.py).
            plain = make_baseline(source, start, end, stand_ins=False)
            assert plain is not None  # the same declaration was found above
            prepared, patched = plain, make_patched(plain, tactic, row.sorry_kind)
            failed, baseline = self._baseline(backend, row, prepared)
        if failed is not None:
            return failed
        assert baseline is not None
        screened = self.screen(backend, generation, baseline, prepared.text, prepared.span, tactic)
        if screened is not None:
            return screened
        run = backend.check(patched.text, rel_path=row.path, header_lines=prepared.prefix_lines)
        failed = from_failed_run(run, stage="tactic")
        if failed is not None:
            return failed
        verdict = self._judge(profile, prepared, patched, baseline, run)
        if verdict.subkind == "sorry_axiom" and prepared.probe is not None:
            # Is the sorryAx the answer's, or owed to a lemma proved by sorry that the target
            # names? Decided on the unpatched file, which the answer cannot change.
            exclude = frozenset({prepared.probe.target, TARGET_NAME, STAND_IN})
            names = referenced_names(tactic, patched.target_text, exclude=exclude)
            owed = self._owed_sorry(backend, row, prepared, names)
            if owed:
                verdict = self._judge(profile, prepared, patched, baseline, run, inherited=owed)
        if verdict.outcome == "closed" and profile.kernel_recheck == "lean4checker":
            return self._kernel_recheck(root, profile, patched.text, verdict)
        return from_verdict(verdict)

    def _kernel_recheck(
        self, root: Path, profile: ReplayProfile, text: str, verdict: Verdict
    ) -> VerificationResult:
        """The closed answer's file compiled and replayed through the kernel by lean4checker:
        what the elaborator let into the environment (an option that skipped the kernel, an
        `addDecl` by metaprogramming) must pass the kernel too."""
        checker = self.file_backend(root, profile)
        passed, run = checker.kernel_recheck(text, checker=profile.lean4checker_command)
        if passed is None:
            failed = from_failed_run(run, stage="tactic")
            return failed if failed is not None else result("oom_or_crash", subkind="process_failed")
        if not passed:
            return result("lean_error", subkind="kernel_recheck", detail=run.detail)
        return from_verdict(verdict)

    def _owed_sorry(
        self, backend: LeanBackend, row: TacticRow, prepared: Baseline, names: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The declarations among `names` that the unpatched file says depend on sorryAx (their
        full names as Lean prints them); names that are no declaration are Lean's errors, ignored.
        Asked once per file, declaration and name."""
        base: tuple[Any, ...] = (
            id(backend),
            getattr(backend, "generation", 0),
            row.repo_remote,
            row.repo_commit,
            row.path,
            prepared.declaration.first_line,
            prepared.stand_ins,
        )
        todo = tuple(n for n in names if (*base, n) not in self._owed)
        text = owed_probe(prepared, todo)
        if text is not None and prepared.probe is not None:
            run = backend.check(text, rel_path=row.path, header_lines=prepared.prefix_lines)
            if run.status != "ok":  # the environment's trouble: nothing learnt, nothing kept
                return ()
            line = [m for m in run.messages if m.pos[0] == prepared.probe.line and not m.is_error]
            reports = {m.pos[1]: parse_axiom_report(m.data) for m in line}
            columns = _probe_columns(todo)
            for name, column in zip(todo, columns, strict=True):
                report = reports.get(column)
                key = (*base, name)
                self._owed[key] = owed_sorry([report]) if report is not None else ()
        found = (self._owed.get((*base, n), ()) for n in names)
        return tuple(dict.fromkeys(o for owed in found for o in owed))

    def _judge(
        self,
        profile: ReplayProfile,
        prepared: Baseline,
        patched: Patched,
        baseline: LeanRun,
        run: LeanRun,
        inherited: tuple[str, ...] = (),
    ) -> Verdict:
        """The acceptance rule (lean/acceptance.py) on the patched run against the baseline's."""
        first, last = patched.target_lines
        keeps_sorry = prepared.target_keeps_sorry
        if baseline.reply is not None:  # a REPL: SorryDB's diff of the `sorries` lists
            span_start = prepared.span[0]
            keeps_sorry = any(
                s.pos is not None
                and s.pos != span_start
                and first <= s.pos[0] <= prepared.declaration.last_line
                for s in baseline.sorries
            )

            def sorry_check() -> Verdict | None:
                return sorry_diff(baseline.sorries, run.sorries, replaced=prepared.span, moved=patched.moved)

        else:

            def sorry_check() -> Verdict | None:
                return warning_diff(
                    baseline.messages,
                    run.messages,
                    moved=patched.moved,
                    target_lines=(first, last),
                    target_keeps_sorry=keeps_sorry,
                )

        expected: tuple[str, ...] = ()
        if prepared.probe is not None:
            reports = [
                parse_axiom_report(m.data) for m in baseline.messages if m.pos[0] == prepared.probe.line
            ]
            expected = next((r[1] for r in reports if r is not None), ())
        return accept(
            run.messages,
            code_span(patched.text, patched.spliced.span),
            probe=patched.probe,
            allow_native=self.allow_native(profile),
            sorry_check=sorry_check,
            expected_axioms=tuple(a for a in expected if a != "sorryAx"),
            sorry_expected=keeps_sorry,
            progress_span=patched.spliced.block,
            inherited=inherited,
            reject_inherited=self.reject_inherited(profile),
            text=patched.text,
        )

    def _baseline(
        self, backend: LeanBackend, row: TacticRow, prepared: Baseline
    ) -> tuple[VerificationResult | None, LeanRun | None]:
        """The unpatched file (target named and probed), checked once per file and declaration;
        with a REPL, the lines before the target run once and later runs reuse that environment."""
        key = (
            id(backend),
            getattr(backend, "generation", 0),
            row.repo_remote,
            row.repo_commit,
            row.path,
            prepared.declaration.first_line,
            prepared.stand_ins,
        )
        cached = self._baselines.get(key)
        if cached is not None:
            return cached
        run = backend.check(prepared.text, rel_path=row.path, header_lines=prepared.prefix_lines)
        failed = from_failed_run(run, stage="baseline_failed")
        if failed is None:
            err = first_error(run.messages)
            if err is not None:
                failed = result(
                    "baseline_failed",
                    subkind="original_error",
                    detail=f"{row.path} does not compile unpatched: {err.brief()}",
                )
        if (
            failed is None
            and run.reply is not None
            and not any(s.pos == prepared.span[0] for s in run.sorries)
        ):
            where = ", ".join(f"{s.pos[0]}:{s.pos[1]}" for s in run.sorries if s.pos) or "none"
            failed = result(
                "baseline_failed",
                subkind="no_sorry_at_span",
                detail=f"the REPL reports no sorry at {prepared.span[0][0]}:{prepared.span[0][1]} "
                f"(sorries at: {where})",
            )
        entry = (failed, None if failed else run)
        self._baselines[key] = entry
        return entry


def _is_module_file(root: Path, rel_path: str) -> bool:
    """Whether the row's file starts with `module` (unreadable: no; the check says why later)."""
    try:
        return is_module(inside(root, rel_path).read_text(encoding="utf-8"))
    except (OutsideError, OSError, UnicodeDecodeError):
        return False


def _probe_columns(names: tuple[str, ...]) -> list[int]:
    """Where each `#print axioms NAME` command starts on the line `owed_probe` writes (Lean
    places each report at its command's `#print` token)."""
    columns, at = [], 0
    for name in names:
        columns.append(at)
        at += len(f"#print axioms {name}") + 1
    return columns
