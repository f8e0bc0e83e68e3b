"""llm_srbench: one test per selected problem × sample, each a whole discovery run.

The run happens in the `lsrb_attempt` fixture (an infrastructure failure errors the test), with
the model from the `lsrb_adapter` fixture and the checker from `lsrb_verifier` (override either in
a conftest.py); `check()` judges the equation (no usable equation, or one that misses Acc_0.1 on
the test data — or the symbolic match with --lsrb-sr-success=symbolic — fails the test, unless
--lsrb-outcome=record).
"""

from pytest_lsrb import Attempt


def test_llm_srbench(lsrb_attempt: Attempt) -> None:
    lsrb_attempt.check()
