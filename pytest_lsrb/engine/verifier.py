"""The verifier plug point: checks one extracted answer and classifies the outcome."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from pytest_lsrb.core.errors import VERIFICATION_OUTCOME_DOMAINS
from pytest_lsrb.core.registry import load_class
from pytest_lsrb.core.selection import SelectableRow

RowT_contra = TypeVar("RowT_contra", bound=SelectableRow, contravariant=True)


@dataclass(frozen=True)
class VerificationResult:
    """The verdict on one proposal.

    `outcome` is one of `errors.VERIFICATION_OUTCOME_DOMAINS`; `success` is None when verification
    was not attempted. `subkind` refines `lean_error` (parse, unknown_identifier, ...).
    """

    attempted: bool
    success: bool | None
    outcome: str
    latency_ms: float = 0.0
    subkind: str | None = None
    detail: str | None = None
    profile_id: str | None = None
    toolchain: str | None = None  # which Lean/Lake/Mathlib the check ran with, when it ran
    # What the checker said, in full and bounded (Lean's errors with positions and the goals
    # left): shown to the model in a feedback round (`--lsrb-feedback-rounds`), not recorded whole.
    messages: tuple[str, ...] = ()

    @property
    def error_kind(self) -> str | None:
        if not self.attempted or self.success:
            return None
        return self.outcome if self.outcome not in ("closed", "progress") else None

    @property
    def error_domain(self) -> str | None:
        kind = self.error_kind
        return None if kind is None else VERIFICATION_OUTCOME_DOMAINS.get(kind, "harness")

    @classmethod
    def not_attempted(cls) -> VerificationResult:
        return cls(attempted=False, success=None, outcome="not_attempted")


@dataclass(frozen=True)
class VerifierConfig:
    """What a verifier may need from the run; each verifier reads the fields it uses."""

    mode: str = "none"
    profiles_path: str | None = None  # replay profiles file or folder (repo_replay, synthetic)
    cache_dir: str | None = None  # where checkouts and builds are kept between runs
    timeout_s: float | None = None  # per-check timeout override
    suite_root: str | None = None  # the suite folder (for suite-relative resources)
    options: Mapping[str, Any] = field(default_factory=dict)  # suite.toml [verifier] table
    allow_local_remotes: bool = False  # repo_replay may clone a repository named by a local path
    allow_native_decide: bool = False  # Lean: a proof may depend on Lean.ofReduceBool
    max_heartbeats: int | None = None  # Lean: maxHeartbeats override (None: the profile's)
    answer_mode: str = "tactic"  # Lean: `tactic` (one tactic) or `proof` (a whole proof body)
    forbid_search_tactics: bool = False  # Lean: exact?/apply?/... are forbidden_token
    strict_inherited_sorry: bool = False  # Lean: sorryAx owed to a sorried lemma fails the answer


@runtime_checkable
class Verifier(Protocol[RowT_contra]):
    """Checks answers for rows of one family (`Verifier[TacticRow]`), or of any (`none`)."""

    mode: str

    def verify(self, row: RowT_contra, proposal: str, *, attempt_seed: int) -> VerificationResult:
        """Check `proposal` for `row`. Never raises for a wrong answer or a broken toolchain."""
        ...

    def preflight(self) -> None:
        """Refuse (`LsrbUsageError`), before any model call, a setup that could check nothing
        (e.g. no Lean on PATH); return None when checking can go ahead."""
        ...

    def close(self) -> None: ...


VERIFIERS: dict[str, str] = {
    "none": "pytest_lsrb.engine.no_verifier:NoVerifier",
    "synthetic": "pytest_lsrb.tactic.verifiers.synthetic:SyntheticVerifier",
    "repo_replay": "pytest_lsrb.tactic.verifiers.repo_replay:RepoReplayVerifier",
    "equation": "pytest_lsrb.srbench.scoring.verifier:EquationVerifier",
}


def create_verifier(config: VerifierConfig) -> Verifier[SelectableRow]:
    """The verifier `--lsrb-verification` names (for the rows of the task that declares the mode)."""
    cls = load_class(VERIFIERS, config.mode, what="mode", where="--lsrb-verification")
    verifier: Verifier[SelectableRow] = cls(config)
    return verifier
