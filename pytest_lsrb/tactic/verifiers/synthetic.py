"""Verification mode `synthetic`: restate the goal as a standalone script and check the tactic.

1. Restate `goal_text` as `example` (lean/goal.py); goals that cannot be restated faithfully
   are `skipped_unrestatable`, with the reason.
2. Compile the control script (`... := by sorry`) once per goal; an error there is the
   harness's fault: `reconstruction_failed`.
3. Check the tactic: an error is `lean_error` (with a subkind), goals left are `progress`,
   none left is `closed`. A hang is `timeout`, a killed process `oom_or_crash`.

With `replay_method = "repl"` the control runs as a REPL command and the tactic as a proof step
on the control's sorry, so a goal's k samples share one elaboration of the statement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lsrb.engine.verifier import VerificationResult, VerifierConfig
from pytest_lsrb.tactic.lean.backend import LeanRun, ProofStateBackend
from pytest_lsrb.tactic.lean.goal import Restatement, Unrestatable, restate
from pytest_lsrb.tactic.lean.outcome import first_error, judge_messages, judge_tactic_reply
from pytest_lsrb.tactic.lean.script import Header, Script, choose_header, control_script, tactic_script
from pytest_lsrb.tactic.profiles import ReplayProfile
from pytest_lsrb.tactic.verifiers.base import LeanVerifierBase, from_failed_run, from_verdict, result

SCRIPT_NAME = "LsrbSynthetic.lean"


class SyntheticVerifier(LeanVerifierBase):
    mode = "synthetic"

    def __init__(self, config: VerifierConfig) -> None:
        super().__init__(config)
        # control verdicts per (backend, generation, script text): None = compiled fine
        self._controls: dict[tuple[Any, ...], tuple[VerificationResult | None, int | None]] = {}

    def project_for(self, profile: ReplayProfile) -> Path | None:
        return Path(profile.lean_project).expanduser() if profile.lean_project else None

    def check(self, row: Any, tactic: str, profile: ReplayProfile) -> VerificationResult:
        restated = restate(str(row.goal_text))
        if isinstance(restated, Unrestatable):
            return result("skipped_unrestatable", detail=restated.reason)
        header = choose_header(profile.synthetic_header, row.goal_text, str(getattr(row, "repo_remote", "")))
        project = self.project_for(profile)
        backend = self.backend(profile, project)
        missing = backend.unavailable()
        if missing is not None:
            return result("toolchain_missing", detail=missing)
        if header == "mathlib" and project is None:
            return result(
                "toolchain_missing",
                subkind="no_mathlib_project",
                detail="the goal needs `import Mathlib`: set the profile's lean_project to a "
                "Lake project with Mathlib built",
            )
        if isinstance(backend, ProofStateBackend):
            return self._check_repl(backend, restated, header, tactic)
        return self._check_file(backend, restated, header, tactic)

    # -- control -------------------------------------------------------------------------------

    def _control(self, backend: Any, control: Script) -> tuple[VerificationResult | None, int | None]:
        """(reconstruction failure or None, proof state of the control's sorry for REPLs)."""
        key = (id(backend), getattr(backend, "generation", 0), control.text)
        cached = self._controls.get(key)
        if cached is not None:
            return cached
        run: LeanRun = backend.check(control.text, rel_path=SCRIPT_NAME, header_lines=control.header_lines)
        failed = from_failed_run(run, stage="reconstruction_failed")
        proof_state: int | None = None
        if failed is None:
            err = first_error(run.messages)
            if err is not None:
                failed = result(
                    "reconstruction_failed",
                    subkind="control_error",
                    detail=f"the restated goal does not compile: {err.brief()}",
                )
            elif run.reply is not None:
                proof_state = next((s.proof_state for s in run.sorries if s.proof_state is not None), None)
                if proof_state is None:
                    failed = result(
                        "reconstruction_failed",
                        subkind="no_proof_state",
                        detail="the REPL reported no sorry for the control script",
                    )
        entry = (failed, proof_state)
        if failed is None or failed.outcome == "reconstruction_failed":
            self._controls[key] = entry
        return entry

    # -- tactic --------------------------------------------------------------------------------

    def _check_file(
        self, backend: Any, restated: Restatement, header: Header, tactic: str
    ) -> VerificationResult:
        failed, _ = self._control(backend, control_script(restated, header))
        if failed is not None:
            return failed
        script = tactic_script(restated, header, tactic)
        run = backend.check(script.text, rel_path=SCRIPT_NAME, header_lines=script.header_lines)
        failed = from_failed_run(run, stage="tactic")
        if failed is not None:
            return failed
        return from_verdict(judge_messages(run.messages, script.proof_span))

    def _check_repl(
        self, backend: ProofStateBackend, restated: Restatement, header: Header, tactic: str
    ) -> VerificationResult:
        failed, proof_state = self._control(backend, control_script(restated, header))
        if failed is not None:
            return failed
        assert proof_state is not None
        run = backend.tactic(proof_state, tactic)
        failed = from_failed_run(run, stage="tactic")
        if failed is not None:
            return failed
        assert run.reply is not None
        return from_verdict(judge_tactic_reply(run.reply))
