"""The verification outcomes of an equation and whose each is: one table, read by the `equation`
verifier (`scoring.verifier`) and by the discovery run's scoring (`scoring.evaluation`)."""

from __future__ import annotations

from typing import Final

from pytest_lsrb.engine.verifier import Domain, declare_outcomes

# Verification outcomes of an equation (Acc_0.1 on the test data, or a symbolic match) and whose
# each is: a miss is the model's; `not_applicable` is no verdict (symbolic success asked, but the
# problem has no ground truth), counted and never judged (`engine.outcomes`).
EQUATION_OUTCOMES: Final[dict[str, Domain | None]] = {
    "accurate": None,
    "symbolic_match": None,
    "inaccurate": "model",
    "symbolic_mismatch": "model",
    "not_finite": "model",  # the equation is not finite on every test point
    "no_equation": "model",  # no usable equation came out of the discovery run
    # its only equation is a form the equation language does not express, which the reference
    # would have run (`equations.UNSUPPORTED_KINDS`): our limit, not the model's miss
    "unsupported_equation": "harness",
    "not_applicable": None,
}
declare_outcomes(__name__, EQUATION_OUTCOMES)
