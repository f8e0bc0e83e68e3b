"""Verification mode `equation` (llm_srbench): an equation is checked on the problem's test data.

The llm_srbench task scores its discovery results itself (all metrics, symbolic accuracy); this
verifier is the same check for a single equation text, e.g. one written by hand: parse it safely,
fit any free constants on the training data, and succeed on Acc_0.1 of the in-domain test data.
"""

from __future__ import annotations

import time
from typing import ClassVar

from pytest_lsrb.engine.verifier import SHARED_OUTCOMES, OutcomeTable, VerificationResult, Verifier
from pytest_lsrb.equations import UNSUPPORTED_KINDS, EquationError, parse_equation
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.scoring.outcomes import EQUATION_OUTCOMES


class EquationVerifier(Verifier[Problem]):
    mode = "equation"
    outcomes: ClassVar[OutcomeTable] = {**SHARED_OUTCOMES, **EQUATION_OUTCOMES}

    def verify(self, row: Problem, proposal: str, *, attempt_seed: int) -> VerificationResult:
        from pytest_lsrb.srbench.fitting.fit import fit_program
        from pytest_lsrb.srbench.methods.base import DiscoveryResult
        from pytest_lsrb.srbench.scoring.evaluation import score

        start = time.perf_counter()
        try:
            program = parse_equation(proposal, row.inputs, free_params=True)
        except EquationError as exc:
            return VerificationResult(
                attempted=True,
                success=False,
                outcome="unsupported_equation" if exc.kind in UNSUPPORTED_KINDS else "no_equation",
                latency_ms=_ms(start),
                subkind=exc.kind,
                detail=exc.detail,
            )
        X, y = row.columns("train")
        fit = fit_program(program, X, y, seed=attempt_seed)
        result = DiscoveryResult(
            program=program, params=fit.params, proposal=proposal, train_mse=fit.mse, train_nmse=fit.nmse
        )
        fields = score(row, result, judge="none")
        return VerificationResult(
            attempted=bool(fields["verification_attempted"]),
            success=fields["verification_success"],
            outcome=str(fields["verification_outcome"]),
            latency_ms=_ms(start),
            detail=f"nmse_id={fields['nmse_id']}, frac_within_tau_id={fields['frac_within_tau_id']}",
        )


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
