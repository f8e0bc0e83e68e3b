"""Verification mode `synthetic`: restate the goal as a standalone script and check the tactic.

1. Restate `goal_text` as a named goal (lean/goal.py, lean/script.py); goals that cannot be
   restated faithfully are `skipped_unrestatable`, with the reason.
2. Compile the control script (`... := by sorry`) once per goal; an error there is the
   harness's fault: `reconstruction_failed`.
3. Check the tactic by the acceptance rule (lean/acceptance.py): an error is `lean_error` (with a
   subkind), goals left are `progress`, a sorry or a forbidden axiom in what remains is
   `lean_error` too; only a clean proof is `closed`. Running out of maxHeartbeats is Lean's
   error (`lean_error`/`heartbeats`, the answer's); a wall-clock hang is `timeout` and a crash
   `oom_or_crash`, both the environment's (never counted against the model).

With `replay_method = "repl"` the script's imports run once as a REPL command and every script
runs in that environment: a goal's k samples share one elaboration of `import Mathlib`. With
`replay_method = "kimina"` the server's own Lean project provides Mathlib: no `lean_project`.
Over a REPL with --lsrb-screen (the default) each tactic first runs on the control's proof state
(verifiers/base.py `screen`); only tactics that close there compile their script.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pytest_lsrb.engine.verifier import VerificationResult, VerifierConfig
from pytest_lsrb.tactic.lean.acceptance import accept, no_sorry_left
from pytest_lsrb.tactic.lean.backend import LeanBackend, LeanRun
from pytest_lsrb.tactic.lean.goal import Unrestatable, restate
from pytest_lsrb.tactic.lean.outcome import first_error
from pytest_lsrb.tactic.lean.proofstate import ProofStart
from pytest_lsrb.tactic.lean.script import Script, choose_header, control_script, tactic_script
from pytest_lsrb.tactic.lean.splice import code_span
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

SCRIPT_NAME = "LsrbSynthetic.lean"


class SyntheticVerifier(LeanVerifierBase):
    mode = "synthetic"

    def __init__(self, config: VerifierConfig) -> None:
        super().__init__(config)
        # control verdicts per (backend, generation, script text): (failure, None) or (None, its run)
        self._controls: dict[tuple[Any, ...], tuple[VerificationResult | None, LeanRun | None]] = {}

    def project_for(self, profile: ReplayProfile) -> Path | None:
        return Path(profile.lean_project).expanduser() if profile.lean_project else None

    def uses_project(self, profile: ReplayProfile) -> bool:
        return profile.lean_project is not None

    def check(self, row: TacticRow, tactic: str, profile: ReplayProfile) -> VerificationResult:
        restated = restate(str(row.goal_text))
        if isinstance(restated, Unrestatable):
            return result("skipped_unrestatable", detail=restated.reason)
        header = choose_header(profile.synthetic_header, row.goal_text, row.repo_remote)
        project = self.project_for(profile)
        backend = self.backend(profile, project)
        missing = backend.unavailable()
        if missing is not None:
            return result("toolchain_missing", detail=missing)
        if header == "mathlib" and project is None and profile.replay_method != "kimina":
            return result(
                "toolchain_missing",
                subkind="no_mathlib_project",
                detail="the goal needs `import Mathlib`: set the profile's lean_project to a "
                "Lake project with Mathlib built",
            )
        heartbeats = self.max_heartbeats(profile)
        control = control_script(restated, header, heartbeats)
        generation = getattr(backend, "generation", 0)  # the control's proof state is this process's
        failed, control_run = self._control(backend, control)
        if failed is not None:
            return failed
        assert control_run is not None
        screened = self.screen(backend, generation, control_run, control.text, control.proof_span, tactic)
        if screened is not None:
            return dataclasses.replace(screened, toolchain=describe_toolchain(project, profile.lean_command))
        script = tactic_script(restated, header, tactic, heartbeats)
        run = backend.check(script.text, rel_path=SCRIPT_NAME, header_lines=script.header_lines)
        failed = from_failed_run(run, stage="tactic")
        if failed is not None:
            return failed
        verdict = accept(
            run.messages,
            code_span(script.text, script.proof_span),
            probe=script.probe,
            allow_native=self.allow_native(profile),
            sorry_check=lambda: no_sorry_left(run.messages, run.sorries),
            text=script.text,
        )
        return dataclasses.replace(
            from_verdict(verdict), toolchain=describe_toolchain(project, profile.lean_command)
        )

    def source_file(self, row: TacticRow) -> SourceFile | None:
        """The control script (the restated goal proved by `sorry`): the file an answer is checked
        in, standing for the repository's file; None when the goal cannot be restated."""
        profile = self.profile_for(row)
        restated = restate(str(row.goal_text))
        if isinstance(restated, Unrestatable):
            return None
        header = choose_header(profile.synthetic_header, row.goal_text, row.repo_remote)
        script = control_script(restated, header, self.max_heartbeats(profile))
        (first, column), (last, _) = script.proof_span
        return SourceFile(script.text, first, column, last)

    def proof_start(self, row: TacticRow) -> ProofStart | VerificationResult:
        """The proof state of the control script's sorry (compiled once per goal), for a search."""
        profile = self.profile_for(row)
        skipped = self.skipped(profile)
        if skipped is not None:
            return skipped
        restated = restate(str(row.goal_text))
        if isinstance(restated, Unrestatable):
            return result("skipped_unrestatable", detail=restated.reason)
        header = choose_header(profile.synthetic_header, row.goal_text, row.repo_remote)
        backend = self.backend(profile, self.project_for(profile))
        missing = backend.unavailable()
        if missing is not None:
            return result("toolchain_missing", detail=missing)
        control = control_script(restated, header, self.max_heartbeats(profile))
        generation = getattr(backend, "generation", 0)
        failed, control_run = self._control(backend, control)
        if failed is not None:
            return failed
        assert control_run is not None
        return start_at(backend, generation, control_run, control.proof_span) or no_search(profile)

    # -- control -------------------------------------------------------------------------------

    def _control(
        self, backend: LeanBackend, control: Script
    ) -> tuple[VerificationResult | None, LeanRun | None]:
        """(the reconstruction failure, None) of the control script, or (None, its run) when it
        compiles (the run holds the sorry's proof state, with a REPL)."""
        key = (id(backend), getattr(backend, "generation", 0), control.text)
        if key in self._controls:
            return self._controls[key]
        run: LeanRun = backend.check(control.text, rel_path=SCRIPT_NAME, header_lines=control.header_lines)
        failed = from_failed_run(run, stage="reconstruction_failed")
        if failed is None:
            err = first_error(run.messages)
            if err is not None:
                failed = result(
                    "reconstruction_failed",
                    subkind="control_error",
                    detail=f"the restated goal does not compile: {err.brief()}",
                )
        if failed is None or failed.outcome == "reconstruction_failed":
            self._controls[key] = (failed, None if failed else run)
        return failed, None if failed else run
