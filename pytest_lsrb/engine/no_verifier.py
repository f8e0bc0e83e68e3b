"""Verification mode `none`: proposals are recorded, never checked."""

from __future__ import annotations

from typing import ClassVar

from pytest_lsrb.core.selection import SelectableRow
from pytest_lsrb.engine.verifier import SHARED_OUTCOMES, OutcomeTable, VerificationResult, Verifier

# Frozen: every attempt can share the one result.
_NOT_ATTEMPTED = VerificationResult.not_attempted()


class NoVerifier(Verifier[SelectableRow]):
    mode = "none"
    outcomes: ClassVar[OutcomeTable] = SHARED_OUTCOMES

    def verify(self, row: SelectableRow, proposal: str, *, attempt_seed: int) -> VerificationResult:
        return _NOT_ATTEMPTED
