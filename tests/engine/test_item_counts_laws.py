"""The summary's per-item counts (`count_item`: judged samples and successes packed in one int per
item) give what `outcomes.per_item_counts` gives from the same records: pass@k's input."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.engine.outcomes import per_item_counts
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.summary import count_item, judged_items

# (item, judged, won): won only counts when judged, as `outcomes.verdict` gives it
_ATTEMPTS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "é", ""]), st.booleans(), st.booleans()).map(
        lambda t: (t[0], t[1], t[1] and t[2])
    ),
    max_size=60,
)


def as_record(item: str, judged: bool, won: bool) -> AttemptRecord:
    """A tactic record (verification none: success is validity) with that verdict."""
    if not judged:
        return {"item_id": item, "generation_error_kind": "timeout", "generation_error_domain": "transport"}
    return {"item_id": item, "verification_mode": "none", "valid": won}


@given(_ATTEMPTS)
@example([("a", True, True)] * 70_000)  # more samples than 16 bits: the halves never run into each other
@example([("a", False, False), ("a", True, False)])
def test_packed_counts_are_the_per_item_counts(attempts: list[tuple[str, bool, bool]]) -> None:
    per_item: dict[str, int] = {}
    for item, judged, won in attempts:
        count_item(per_item, item, judged, won)
    assert judged_items(per_item) == per_item_counts(as_record(*a) for a in attempts)
    assert set(per_item) == {item for item, _, _ in attempts}  # every item seen counts among the items
