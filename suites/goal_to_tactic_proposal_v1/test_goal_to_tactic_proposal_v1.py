"""goal_to_tactic_proposal_v1: one test per selected item × sample.

The attempt runs in the `lsrb_attempt` fixture (an infrastructure failure errors the test), with
the model from the `lsrb_adapter` fixture and the checker from `lsrb_verifier` (override either in
a conftest.py); `check()` judges the answer (a wrong or invalid tactic fails the test, unless
--lsrb-outcome=record).
"""

from pytest_lsrb import Attempt


def test_goal_to_tactic(lsrb_attempt: Attempt) -> None:
    lsrb_attempt.check()
