from pytest_lsrb import Attempt


def test_mcmath(lsrb_attempt: Attempt) -> None:
    lsrb_attempt.check()
