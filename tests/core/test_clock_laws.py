"""The records' `finished_at` is spelled per attempt without a datetime object: the same text
`datetime.now(timezone.utc).isoformat(timespec="milliseconds")` gives for that instant."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.core.clock import utc_millis, utc_now_millis

# 1970 to 9999: the years `datetime` spells with four digits
_NS = st.integers(min_value=0, max_value=253402300799_999_999_999)


def spelled_by_datetime(ns: int) -> str:
    """What datetime.now spells: the clock truncated to microseconds, isoformat to milliseconds."""
    second, rest = divmod(ns, 1_000_000_000)
    instant = datetime.fromtimestamp(second, timezone.utc).replace(microsecond=rest // 1000)
    return instant.isoformat(timespec="milliseconds")


@given(_NS)
@example(0)
@example(1_795_464_041_999_999_999)  # the last nanosecond of a second: .999, not the next second
@example(1_795_464_041_000_999_999)  # just under a millisecond: .000
@example(253402300799_999_999_999)  # 9999-12-31T23:59:59.999
def test_utc_millis_is_what_datetime_spells(ns: int) -> None:
    assert utc_millis(ns) == spelled_by_datetime(ns)


@given(st.lists(_NS, min_size=2, max_size=6))
def test_the_cached_second_never_leaks_into_another(instants: list[int]) -> None:
    # (one second's text is kept for the next call: any order of instants must still be right)
    for ns in instants:
        assert utc_millis(ns) == spelled_by_datetime(ns)


def test_now_reads_the_wall_clock() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    now = datetime.fromisoformat(utc_now_millis())
    assert before <= now <= datetime.now(timezone.utc)
