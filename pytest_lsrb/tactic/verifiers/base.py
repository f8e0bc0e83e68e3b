"""What the two Lean verifiers share: profiles, guards, backends per profile, timing, results."""

from __future__ import annotations

import threading
import time
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from pytest_lsrb.core.credentials import checked_key
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.outcomes import SKIPPED_OUTCOME
from pytest_lsrb.engine.verifier import (
    SHARED_OUTCOMES,
    OutcomeTable,
    VerificationResult,
    Verifier,
    VerifierConfig,
)
from pytest_lsrb.tactic.guard import refuse
from pytest_lsrb.tactic.lean.backend import (
    FileBackend,
    LeanBackend,
    LeanRun,
    ReplBackend,
    lean_slots,
    make_repl_backend,
)
from pytest_lsrb.tactic.lean.kimina import KiminaBackend
from pytest_lsrb.tactic.lean.outcome import LEAN_OUTCOMES, Pos, Verdict, error_subkind
from pytest_lsrb.tactic.lean.process import which
from pytest_lsrb.tactic.lean.proofstate import ProofStart, screen_verdict, sorry_stands_alone
from pytest_lsrb.tactic.lean.tabs import TAB_MESSAGE, tab_in_code
from pytest_lsrb.tactic.options import LeanOptions
from pytest_lsrb.tactic.profiles import (
    BUILTIN_DEFAULT,
    ProfileSet,
    ReplayProfile,
    load_profiles,
    resolve_profiles_path,
)
from pytest_lsrb.tactic.prompts import SourceFile
from pytest_lsrb.tactic.rows import TacticRow

# Lean's verdict on the same text is the same (heartbeats are deterministic); a wall-clock
# timeout, a crash or the environment's failure may not be, so those are checked again.
REUSABLE_OUTCOMES: Final = frozenset({"closed", "progress", "lean_error"})


def result(
    outcome: str, *, subkind: str | None = None, detail: str | None = None, messages: tuple[str, ...] = ()
) -> VerificationResult:
    """An attempted verification with `outcome`; success only for `closed`."""
    return VerificationResult(
        attempted=True,
        success=outcome == "closed",
        outcome=outcome,
        subkind=subkind,
        detail=detail,
        messages=messages,
    )


def tabs_refused() -> VerificationResult:
    """An answer with a tab between its tokens: Lean's parse error, in Lean's words
    (tactic/lean/tabs.py), the model's as Lean would judge it."""
    return result(
        "lean_error",
        subkind=error_subkind(TAB_MESSAGE),
        detail=f"{TAB_MESSAGE} (a tab in the answer's code, as Lean's whitespace parser refuses it)",
        messages=(TAB_MESSAGE,),
    )


def from_verdict(verdict: Verdict) -> VerificationResult:
    return result(verdict.outcome, subkind=verdict.subkind, detail=verdict.detail, messages=verdict.messages)


def from_failed_run(run: LeanRun, *, stage: str) -> VerificationResult | None:
    """The result for a run that did not get to Lean's verdict, or None when it did.

    `stage` is `tactic` (a wall-clock hang is `timeout`, a crash or an exit without Lean's own
    messages `oom_or_crash`: both the environment's, tactic/lean/outcome.py, since the answer's own
    budget is maxHeartbeats, whose exhaustion Lean reports as an error) or the environment
    outcome to use when the harness's own check failed (`reconstruction_failed`,
    `baseline_failed`).
    """
    if run.status == "ok":
        return None
    if run.status in ("toolchain_missing", "memory_limit"):  # the environment's, at any stage
        return result(run.status, detail=run.detail)
    if stage == "tactic" and run.status in ("timeout", "oom_or_crash"):
        return result(run.status, detail=run.detail)
    if stage == "tactic":
        return result("oom_or_crash", subkind="process_failed", detail=run.detail)
    return result(stage, subkind=run.status, detail=run.detail)


def start_at(
    backend: LeanBackend, generation: int, unpatched: LeanRun, span: tuple[Pos, Pos]
) -> ProofStart | None:
    """The proof state of the sorry at `span` in a REPL's run of the unpatched file, or None."""
    if not isinstance(backend, ReplBackend):
        return None
    found = next((s for s in unpatched.sorries if s.pos == span[0] and s.proof_state is not None), None)
    if found is None or found.proof_state is None:
        return None
    return ProofStart(backend, generation, found.proof_state, found.goal)


def no_search(profile: ReplayProfile) -> VerificationResult:
    """A search that cannot start: no REPL proof state for the sorry (the environment's)."""
    return result(
        "toolchain_missing",
        subkind="no_proof_state",
        detail=f'profile {profile.id}: --lsrb-answer search needs replay_method = "repl" and a REPL '
        "reply naming the sorry's proof state",
    )


class LeanVerifierBase(Verifier[TacticRow]):
    """Loads profiles at construction (an invalid file stops the run there) and caches backends.

    Subclasses (synthetic, repo_replay) supply `check`: how one tactic is put before Lean.
    """

    mode = "lean"
    outcomes: ClassVar[OutcomeTable] = {**SHARED_OUTCOMES, **LEAN_OUTCOMES}
    _lean: tuple[VerifierConfig, LeanOptions] | None = None

    @property
    def lean(self) -> LeanOptions:
        """The run's Lean options as this verifier reads them (read again if `config` changes)."""
        read = self._lean
        if read is None or read[0] is not self.config:
            read = self._lean = (self.config, LeanOptions.read(self.config.options))
        return read[1]

    def __init__(self, config: VerifierConfig) -> None:
        self.config = config
        path = resolve_profiles_path(self.lean.profiles, config.suite_root)
        self.profiles: ProfileSet = load_profiles(path)
        self.refuse_profiles()
        self._backends: dict[tuple[Any, ...], LeanBackend] = {}
        self._lock = threading.Lock()
        # Lean's verdicts by (goal row, profile, answer): k identical samples cost one check.
        self._verdicts: dict[tuple[Any, ...], VerificationResult] = {}
        self._verdict_locks: dict[tuple[Any, ...], threading.Lock] = {}

    # -- policy --------------------------------------------------------------------------------

    def profile_for(self, row: TacticRow) -> ReplayProfile:
        return self.profiles.match(row.repo_remote, row.repo_lean_version)

    # -- preflight -----------------------------------------------------------------------------

    def executables(self, profile: ReplayProfile) -> list[str]:
        """What checking a row under `profile` runs (a REPL command, else lake or lean; nothing
        for a Kimina server, which runs Lean elsewhere)."""
        if profile.replay_method == "kimina":
            return []
        if profile.replay_method == "repl":
            return [profile.repl_command[0]] if profile.repl_command else [profile.lake_command]
        return [profile.lake_command if self.uses_project(profile) else profile.lean_command]

    def uses_project(self, profile: ReplayProfile) -> bool:
        return True

    # A Kimina server checks a source in its own Lean project: fine for a restated goal, not
    # for a row's repository, which only a checkout of that repository can build.
    kimina_allowed = True

    def refuse_profiles(self) -> None:
        """Profiles this mode cannot honour, refused in one sentence at construction."""
        for profile, file in self.profiles.profiles:
            if profile.kernel_recheck != "off" and not profile.skip and self.mode != "repo_replay":
                raise LsrbUsageError(
                    f"{file}: field 'kernel_recheck': the kernel re-check runs in --lsrb-verification="
                    f"repo_replay only (it replays the repository's compiled module), not {self.mode}; "
                    "remove the key from this profile or verify with repo_replay."
                )
        if self.kimina_allowed:
            return
        for profile, file in self.profiles.profiles:
            if profile.replay_method == "kimina" and not profile.skip:
                raise LsrbUsageError(
                    f"{file}: field 'replay_method': 'kimina' cannot check --lsrb-verification={self.mode} "
                    "(the server has one Lean project of its own, not the row's repository); use 'file' "
                    "or 'repl', or --lsrb-verification=synthetic."
                )

    def preflight(self) -> None:
        """Refuse the run, before any model call, when a profile rows may use needs a Lean
        executable this machine lacks (every answer would end `toolchain_missing`, paid for), or
        a Kimina server that cannot serve it (unreachable, its key unset, unsendable or refused)."""
        candidates = [p for p, _ in self.profiles.profiles if not p.skip]
        if not any(p.specificity == 0 for p in candidates):
            candidates.append(BUILTIN_DEFAULT)
        files = {p.id: f for p, f in self.profiles.profiles}
        for profile in candidates:
            if self.lean.answer == "search" and profile.replay_method != "repl":
                raise LsrbUsageError(
                    f"{files.get(profile.id, 'the built-in default profile')}: field 'replay_method': "
                    f"--lsrb-answer search runs tactics on the Lean REPL's proof states, which "
                    f"'{profile.replay_method}' has none of; set replay_method = \"repl\" (profile "
                    f"{profile.id}); nothing was sent to the model."
                )
            if profile.replay_method == "kimina":
                where = f"{files.get(profile.id, profile.id)}: field 'kimina_api_key_env'"
                checked_key(profile.kimina_api_key_env, where)
                kimina = self.backend(profile, None)
                assert isinstance(kimina, KiminaBackend)
                problem = kimina.preflight()
                if problem is not None:
                    raise LsrbUsageError(
                        f"{files.get(profile.id, profile.id)}: field 'kimina_url': {problem}; nothing was "
                        "sent to the model."
                    )
            for exe in self.executables(profile):
                if (
                    which(exe) is None
                    and exe == profile.lean4checker_command
                    and profile.kernel_recheck != "off"
                ):
                    raise LsrbUsageError(
                        f"{files.get(profile.id, profile.id)}: field 'kernel_recheck': "
                        f"'{profile.kernel_recheck}' needs `{exe}`, which is not on PATH: build lean4checker "
                        "for the repositories' Lean version and set lean4checker_command, or set "
                        'kernel_recheck = "off"; nothing was sent to the model.'
                    )
                if which(exe) is None:
                    raise LsrbUsageError(
                        f"--lsrb-verification={self.mode} needs `{exe}` (profile {profile.id}), which is "
                        "not on PATH: install the Lean toolchain (elan), set the profile's command, or "
                        "run with --lsrb-verification=none to record tactics without checking them."
                    )

    def source_file(self, row: TacticRow) -> SourceFile | None:
        """The file the row's sorry is in, as a prompt shows it (`--lsrb-context file`, SorryDB's
        prompts, the search's file context; tactic/prompts.py cuts it), or None when this mode has
        none to read."""
        return None

    def allow_native(self, profile: ReplayProfile) -> bool:
        """Whether a proof may trust the compiler (`native_decide`): the profile or the run says so."""
        return profile.allow_native_decide or self.lean.allow_native_decide

    def reject_inherited(self, profile: ReplayProfile) -> bool:
        """Whether sorryAx owed to a lemma proved by sorry fails the answer: the profile's
        `reject_inherited_sorry` or --lsrb-strict-inherited-sorry says so."""
        return profile.reject_inherited_sorry or self.lean.strict_inherited_sorry

    def max_heartbeats(self, profile: ReplayProfile) -> int | None:
        """--lsrb-max-heartbeats, else the profile's `max_heartbeats` (None: Lean's default)."""
        return self.lean.max_heartbeats if self.lean.max_heartbeats is not None else profile.max_heartbeats

    def check_timeout(self, profile: ReplayProfile) -> float:
        return float(self.config.timeout_s or profile.check_timeout_s)

    def skipped(self, profile: ReplayProfile) -> VerificationResult | None:
        """The result of a row its profile skips, else None."""
        if not profile.skip:
            return None
        why = profile.skip_reason or "the profile says skip"
        return VerificationResult(
            attempted=False, success=None, outcome=SKIPPED_OUTCOME, detail=f"profile {profile.id}: {why}"
        )

    def guard(self, proposal: str, profile: ReplayProfile) -> VerificationResult | None:
        """Results decided before Lean runs: skipped rows and forbidden proposals."""
        skipped = self.skipped(profile)
        if skipped is not None:
            return skipped
        refusal = refuse(
            proposal,
            forbid_search=self.lean.forbid_search_tactics,
            # a search's found proof is a block of tactics, as a whole proof is
            proof=self.lean.answer in ("proof", "search"),
        )
        if refusal is not None:
            return result("forbidden_token", subkind=refusal.subkind, detail=refusal.detail)
        if tab_in_code(proposal):
            return tabs_refused()
        return None

    def verify(self, row: TacticRow, proposal: str, *, attempt_seed: int) -> VerificationResult:
        start = time.monotonic()
        profile = self.profile_for(row)
        verdict = self.guard(proposal, profile) or self._checked_once(row, proposal.strip(), profile)
        elapsed = (time.monotonic() - start) * 1000.0
        return VerificationResult(
            attempted=verdict.attempted,
            success=verdict.success,
            outcome=verdict.outcome,
            latency_ms=elapsed,
            subkind=verdict.subkind,
            detail=verdict.detail,
            profile_id=profile.id,
            toolchain=verdict.toolchain,
            messages=verdict.messages,
        )

    def _checked_once(self, row: TacticRow, tactic: str, profile: ReplayProfile) -> VerificationResult:
        """`check`, or the verdict an earlier sample with the same answer to the same goal got
        (samples at temperature 0 repeat: each repeat would elaborate the file again)."""
        key = (row.content_hash(), profile.id, tactic)
        with self._lock:
            lock = self._verdict_locks.setdefault(key, threading.Lock())
        with lock:  # a concurrent identical sample waits for the first one's verdict
            known = self._verdicts.get(key)
            if known is not None:
                return known
            verdict = self.check(row, tactic, profile)
            if verdict.outcome in REUSABLE_OUTCOMES:
                self._verdicts[key] = verdict
            return verdict

    def screen(
        self,
        backend: LeanBackend,
        generation: int,
        unpatched: LeanRun,
        text: str,
        span: tuple[Pos, Pos],
        tactic: str,
    ) -> VerificationResult | None:
        """The verdict the sorry's own proof state gives `tactic`, or None when the patched file
        must be compiled (--lsrb-screen; lean/proofstate.py says what a step decides).

        `unpatched` is the REPL's run of `text`, the file with the sorry at `span`, made in the
        backend's `generation`. Only a sorry that is its block's only tactic is screened; a step
        the REPL could not run (a hang, a crash, a lost state) leaves the decision to the file's
        check, as without screening: the screen never decides what the file would not."""
        if not self.lean.screen:
            return None
        start = start_at(backend, generation, unpatched, span)
        if start is None or not sorry_stands_alone(text, *span):
            return None
        step = start.step(tactic, start.proof_state)
        if isinstance(step, LeanRun):
            return None
        verdict = screen_verdict(step)
        return from_verdict(verdict) if verdict is not None else None

    def proof_start(self, row: TacticRow) -> ProofStart | VerificationResult:
        """Where a tactic-by-tactic search of `row` starts (`tactic/search.py`), or the result that
        ends the attempt before it (a skipped row, the environment's failure)."""
        return no_search(self.profile_for(row))

    @abstractmethod
    def check(self, row: TacticRow, tactic: str, profile: ReplayProfile) -> VerificationResult:
        """Lean's verdict on `tactic` for `row`'s goal (guards already passed)."""

    # -- backends ------------------------------------------------------------------------------

    def backend(self, profile: ReplayProfile, project: Path | None) -> LeanBackend:
        key = (profile.id, str(project), profile.replay_method)
        with self._lock:
            backend = self._backends.get(key)
            if backend is None:
                slots = lean_slots(profile.id, profile.max_parallel)
                if profile.replay_method == "kimina":
                    assert profile.kimina_url is not None  # the profile's validation says so
                    backend = KiminaBackend(
                        profile.kimina_url, self.check_timeout(profile), profile.kimina_api_key_env
                    )
                elif profile.replay_method == "repl":
                    backend = make_repl_backend(
                        project=project,
                        timeout_s=self.check_timeout(profile),
                        memory_mb=profile.memory_mb,
                        repl_command=profile.repl_command,
                        lake_command=profile.lake_command,
                        prefer=profile.repl_backend,
                        slots=slots,
                        max_heartbeats=self.max_heartbeats(profile),
                    )
                else:
                    backend = self.file_backend(project, profile, slots)
                self._backends[key] = backend
            return backend

    def file_backend(
        self,
        project: Path | None,
        profile: ReplayProfile,
        slots: threading.BoundedSemaphore | None = None,
    ) -> FileBackend:
        """A `lake env lean` file checker for `project` under `profile`'s limits and commands."""
        return FileBackend(
            project=project,
            timeout_s=self.check_timeout(profile),
            memory_mb=profile.memory_mb,
            lean_command=profile.lean_command,
            lake_command=profile.lake_command,
            slots=slots,
            max_heartbeats=self.max_heartbeats(profile),
        )

    def close(self) -> None:
        with self._lock:
            for backend in self._backends.values():
                backend.close()
            self._backends.clear()


_ENVIRONMENT_HINTS = {
    "toolchain_missing": "no Lean toolchain (lean/lake not on PATH)",
    "checkout_failed": "a repository could not be cloned",
    "build_failed": "a repository did not build",
    "baseline_failed": "an unpatched file did not compile",
    "reconstruction_failed": "a restated goal did not compile",
    "skipped_unrestatable": "a goal could not be restated faithfully",
    "skipped_unspliceable": "no tactic can stand where the sorry is (e.g. inside conv)",
    "memory_limit": "a Lean process hit the profile's memory cap (memory_mb)",
    "timeout": "a Lean process ran past the profile's check_timeout_s (wall clock)",
    "oom_or_crash": "a Lean process crashed (signal, segfault, exit without Lean's messages)",
}


def unjudged_note(summary: Mapping[str, Any]) -> str | None:
    """One line for the terminal when verification could not judge some attempts, else None."""
    count = int(summary.get("verification_unjudged") or 0)
    if not count:
        return None
    kinds = summary.get("verification_error_kinds") or {}
    causes = [f"{k}={v} ({_ENVIRONMENT_HINTS[k]})" for k, v in kinds.items() if k in _ENVIRONMENT_HINTS]
    return (
        f"{count} of {summary.get('attempts')} attempts: "
        + "; ".join(causes)
        + " - those tests errored and do not count against the model"
    )
