"""Under `-n N` the workers share the server's slots (issue #32): the whole run keeps about
`slots` requests in flight, not `slots` per worker."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.adapters.concurrency import slot_share, xdist_place


@given(slots=st.integers(1, 300), workers=st.integers(1, 64))
@example(slots=4, workers=2)
@example(slots=1, workers=3)
@example(slots=5, workers=3)
def test_the_workers_shares_add_up_to_the_slots_and_each_has_one(slots: int, workers: int) -> None:
    shares = [slot_share(slots, workers, index) for index in range(workers)]
    assert sum(shares) == max(slots, workers)
    assert min(shares) >= 1
    assert max(shares) - min(shares) <= 1
    assert shares == sorted(shares, reverse=True)  # the extra slots go to the first workers


def test_a_serial_run_keeps_all_the_slots() -> None:
    assert slot_share(4, *xdist_place({})) == 4
    assert [slot_share(5, 3, i) for i in range(3)] == [2, 2, 1]


def test_the_workers_place_comes_from_xdists_variables() -> None:
    assert xdist_place({"PYTEST_XDIST_WORKER": "gw1", "PYTEST_XDIST_WORKER_COUNT": "3"}) == (3, 1)
    assert xdist_place({}) == (1, 0)
    assert xdist_place({"PYTEST_XDIST_WORKER": "master", "PYTEST_XDIST_WORKER_COUNT": "2"}) == (1, 0)
    assert xdist_place({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "0"}) == (1, 0)
