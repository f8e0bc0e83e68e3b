"""The verifier plug point: checks one extracted answer and classifies the outcome.

Every outcome a verifier can return declares whose it is where it is defined: the verifier
class's `outcomes` table maps each name to `model` (the answer's fault: judged, counted against
the model), `environment` or `harness` (nobody judged the model), or None (no failure: a success,
or no verdict to give). `create_verifier` refuses a class without a valid table before any model
call, and an outcome no table declares stops the run at its first use; a name is never guessed.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, Literal, TypeVar, get_args

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import VERIFIERS_GROUP, Registry, refuse_unfit
from pytest_lsrb.core.selection import SelectableRow

RowT_contra = TypeVar("RowT_contra", bound=SelectableRow, contravariant=True)

# Whose a failed verification is (DESIGN.md, "Taxonomies"); None in a table: not a failure.
Domain = Literal["model", "environment", "harness"]
DOMAINS: Final[tuple[str, ...]] = get_args(Domain)
OutcomeTable = Mapping[str, "Domain | None"]

# The outcomes of every verifier: none was tried, or a profile says the row is not verified.
SHARED_OUTCOMES: Final[dict[str, Domain | None]] = {"not_attempted": None, "skipped": None}

_DECLARED: dict[str, tuple[Domain | None, str]] = {}  # outcome -> (domain, who declared it)
_DECLARED_LOCK = threading.Lock()


class UndeclaredOutcome(LsrbUsageError):
    """A verifier returned an outcome that no `outcomes` table declares."""

    def __init__(self, outcome: str) -> None:
        super().__init__(
            f"verification outcome '{outcome}' declares no domain: add it to its verifier's "
            f"`outcomes` table as {', '.join(DOMAINS)} or None (no failure)."
        )


def declare_outcomes(owner: str, table: object) -> None:
    """Record `owner`'s outcome table (a verifier class, or the module defining its outcomes);
    refuse in one sentence a table that is no mapping, a domain not in `DOMAINS`, or a name another
    table declared with another domain (the records would mean two things by one word)."""
    if not isinstance(table, Mapping) or not table:
        raise LsrbUsageError(
            f"{owner}: declares no `outcomes` table (outcome name -> {', '.join(DOMAINS)} or None)."
        )
    with _DECLARED_LOCK:
        for name, domain in table.items():
            if not isinstance(name, str) or not (domain is None or domain in DOMAINS):
                raise LsrbUsageError(
                    f"{owner}: outcome {name!r} has domain {domain!r}, "
                    f"not one of {', '.join(DOMAINS)} or None."
                )
            before = _DECLARED.get(name)
            if before is not None and before[0] != domain:
                raise LsrbUsageError(
                    f"{owner}: outcome '{name}' is declared {domain!r} here but {before[0]!r} by {before[1]}."
                )
        # (only once the whole table is valid: a refused table declares none of its names)
        for name, domain in table.items():
            _DECLARED.setdefault(name, (domain, owner))


def outcome_domain(outcome: str) -> Domain | None:
    """The declared domain of `outcome`; `UndeclaredOutcome` for a name no table declares."""
    try:
        return _DECLARED[outcome][0]
    except KeyError:
        raise UndeclaredOutcome(outcome) from None


declare_outcomes(__name__, SHARED_OUTCOMES)


@dataclass(frozen=True)
class VerificationResult:
    """The verdict on one proposal.

    `outcome` is one its verifier's `outcomes` table declares; `success` is None when verification
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
        """The outcome, when it is a failure (its table declares a domain for it); None for a
        success, no attempt, or an outcome that is no failure (a Lean tactic that made progress)."""
        if not self.attempted or self.success:
            return None
        return self.outcome if outcome_domain(self.outcome) is not None else None

    @property
    def error_domain(self) -> str | None:
        kind = self.error_kind
        return None if kind is None else outcome_domain(kind)

    @classmethod
    def not_attempted(cls) -> VerificationResult:
        return cls(attempted=False, success=None, outcome="not_attempted")


@dataclass(frozen=True)
class VerifierConfig:
    """What a verifier is handed from the run. Its own settings are run options it declares
    (an `OptionSet` of kind `verifier`, or its task's) and reads from `options`, by their
    run-config keys (`options.get("max_heartbeats")`): declared, they are checked, recorded and
    part of the run's config hash like any option."""

    mode: str = "none"
    cache_dir: str | None = None  # --lsrb-cache-dir: where a verifier may keep work between runs
    timeout_s: float | None = None  # per-check timeout override
    suite_root: str | None = None  # the suite folder (for suite-relative resources)
    # The run's option values (the every-suite options and those of its task, verifier and
    # parts); empty for a verifier made outside a run, which then reads its options' defaults.
    options: Mapping[str, Any] = field(default_factory=dict)
    # suite.toml's [verifier] table, as the suite wrote it (recorded in run.json's config as
    # `verifier_settings` when present, so it is part of the config hash).
    settings: Mapping[str, Any] = field(default_factory=dict)


class Verifier(ABC, Generic[RowT_contra]):
    """Checks answers for rows of one family (`Verifier[TacticRow]`), or of any (`none`): subclass
    it, set `mode` and `outcomes` and write `verify`; `preflight`, `close` and the constructor
    have defaults here, so an editor lists them all. The engine calls members, never probes.

    `outcomes`: every outcome `verify` can return, with whose it is (the module docstring); a
    verifier that declares none is refused before any model call."""

    mode: str
    outcomes: ClassVar[OutcomeTable] = {}

    def __init__(self, config: VerifierConfig | None = None) -> None:
        """`config`: what the run hands it (its options by key: `config.options`)."""
        self.config = config if config is not None else VerifierConfig(mode=self.mode)

    @abstractmethod
    def verify(self, row: RowT_contra, proposal: str, *, attempt_seed: int) -> VerificationResult:
        """Check `proposal` for `row`. Never raises for a wrong answer or a broken toolchain."""

    def preflight(self) -> None:
        """Refuse (`LsrbUsageError`), before any model call, a setup that could check nothing
        (e.g. no Lean on PATH); return None when checking can go ahead (the default)."""
        return None

    def close(self) -> None:
        """Release what it holds (processes, checkouts); called once, when the run ends."""
        return None


# `--lsrb-verification NAME`: an entry point of `pytest_lsrb.verifiers` (the built-in modes are
# pytest-lsrb's own, in pyproject.toml: `none` and each family's), or a "pkg.mod:Class" spec.
VERIFIERS: Final = Registry(
    {},
    group=VERIFIERS_GROUP,
    what="mode",
    where="--lsrb-verification",
    own_entry_points=True,
)


def create_verifier(config: VerifierConfig) -> Verifier[SelectableRow]:
    """The verifier `--lsrb-verification` names (for the rows of the task that declares the mode),
    its outcome table declared first: a verifier without one is refused before any model call."""
    cls = VERIFIERS.load(config.mode)
    refuse_unfit(cls, Verifier, where=VERIFIERS.where, name=config.mode)
    declare_outcomes(f"{VERIFIERS.where} {config.mode}: {cls.__qualname__}", cls.outcomes)
    verifier: Verifier[SelectableRow] = cls(config)
    return verifier


def verification_fields(verdict: VerificationResult) -> dict[str, Any]:
    """The attempt record's `verification_*` fields for `verdict` (its domain from the tables)."""
    return {
        "verification_attempted": verdict.attempted,
        "verification_success": verdict.success,
        "verification_outcome": verdict.outcome,
        "verification_error_kind": verdict.error_kind,
        "verification_error_domain": verdict.error_domain,
        "verification_error_subkind": verdict.subkind,
        "verification_detail": verdict.detail,
        "verification_latency_ms": round(verdict.latency_ms, 3),
    }
