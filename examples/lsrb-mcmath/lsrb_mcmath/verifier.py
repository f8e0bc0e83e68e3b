"""`--lsrb-verification mcmath_exact`: the answer is right when its letter is the row's.

`outcomes` declares whose each outcome is: a wrong letter, or none at all, is the model's, so it
counts against the model in every rate; pytest-lsrb refuses a verifier without this table.
"""

from __future__ import annotations

from typing import ClassVar

from lsrb_mcmath.rows import McRow
from pytest_lsrb import Domain, VerificationResult, Verifier


class ExactMatchVerifier(Verifier[McRow]):
    mode = "mcmath_exact"
    # outcome -> whose it is: model, environment or harness (None: not a failure)
    outcomes: ClassVar[dict[str, Domain | None]] = {
        "correct": None,
        "wrong_answer": "model",
        "no_letter": "model",
    }

    def verify(self, row: McRow, proposal: str, *, attempt_seed: int) -> VerificationResult:
        if proposal == row.answer:
            return VerificationResult(attempted=True, success=True, outcome="correct")
        outcome = "wrong_answer" if proposal else "no_letter"
        return VerificationResult(
            attempted=True, success=False, outcome=outcome, detail=f"expected {row.answer}"
        )
