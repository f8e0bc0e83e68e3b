"""Verification mode `none`: proposals are recorded, never checked."""

from __future__ import annotations

from pytest_lsrb.engine.verifier import SHARED_OUTCOMES, VerificationResult, VerifierConfig

# Frozen: every attempt can share the one result.
_NOT_ATTEMPTED = VerificationResult.not_attempted()


class NoVerifier:
    mode = "none"
    outcomes = SHARED_OUTCOMES

    def __init__(self, config: VerifierConfig | None = None) -> None:
        self.config = config

    def verify(self, row: object, proposal: str, *, attempt_seed: int) -> VerificationResult:
        return _NOT_ATTEMPTED

    def preflight(self) -> None:
        return None  # nothing to check with

    def close(self) -> None:
        return None
