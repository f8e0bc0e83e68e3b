"""Selection: which rows a run evaluates, as pure functions of the rows and the options.

    rows --split_policy--> --goal_slice--> --seed/max_items--> selected (sorted by item_id)
         --shard--> this shard's rows --expand(samples)--> cases

`selected_rows_hash` pins the selected set: it depends on the ids and contents of the selected
rows, not on the order they came in.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.seeds import attempt_seed, shard_of, stable_hash

DEV_FRACTION_PERCENT = 20  # `split_policy=dev` is a stable 20% of items, `test` the other 80%


class SelectableRow(Protocol):
    """What the spine needs of a row (a family's row model: `TacticRow`, `Problem`)."""

    @property
    def item_id(self) -> str: ...

    def content_hash(self) -> str: ...


R = TypeVar("R", bound=SelectableRow)


def split_predicate(policy: str) -> Callable[[SelectableRow], bool]:
    """`all`, or the hash-stable `dev` (20%) / `test` (80%) halves of an index."""
    if policy == "all":
        return lambda row: True
    if policy in ("dev", "test"):
        want_dev = policy == "dev"
        return lambda row: (stable_hash("split", row.item_id) % 100 < DEV_FRACTION_PERCENT) == want_dev
    raise LsrbUsageError(
        f"--lsrb-split-policy: unknown policy '{policy}' (expected all, dev, test or manifest:PATH#SPLIT)."
    )


def select(
    rows: Iterable[R],
    *,
    keep: Callable[[R], bool],
    seed: int,
    max_items: int | None,
) -> list[R]:
    """The selected rows, sorted by item_id.

    With `max_items`, a seeded subset: rows are ranked by a hash of (seed, item_id) and the first
    `max_items` kept, so the subset does not depend on file order and grows monotonically with
    `max_items`.
    """
    kept_rows = (row for row in rows if keep(row))
    if max_items is not None:
        # Streams: only the best `max_items` rows are ever held, whatever the index size.
        kept = heapq.nsmallest(
            max_items, kept_rows, key=lambda row: (stable_hash("select", seed, row.item_id), row.item_id)
        )
    else:
        kept = list(kept_rows)
    kept.sort(key=lambda row: row.item_id)
    return kept


def selected_rows_hash(rows: Iterable[SelectableRow]) -> str:
    """SHA-256 over the sorted (item_id, content hash) pairs of the selected rows."""
    digest = hashlib.sha256()
    for item_id, chash in sorted((row.item_id, row.content_hash()) for row in rows):
        digest.update(f"{item_id}\x1f{chash}\n".encode())
    return digest.hexdigest()


def shard(rows: Sequence[R], shard_count: int, shard_index: int) -> list[R]:
    """This shard's rows: an exact partition of `rows` by a stable hash of item_id."""
    if shard_count < 1:
        raise LsrbUsageError(f"--lsrb-shard-count must be at least 1 (got {shard_count}).")
    if not 0 <= shard_index < shard_count:
        raise LsrbUsageError(f"--lsrb-shard-index must be in 0..{shard_count - 1} (got {shard_index}).")
    if shard_count == 1:
        return list(rows)  # one shard holds every row: no hash to take
    return [row for row in rows if shard_of(row.item_id, shard_count) == shard_index]


@dataclass(frozen=True)
class Case(Generic[R]):
    """One pytest test: an item and a sample index, with its own seed. `row` is the family's own
    row model (`Case[TacticRow]`, `Case[Problem]`); the spine reads only its `SelectableRow` part."""

    row: R
    sample_index: int
    attempt_seed: int

    @property
    def item_id(self) -> str:
        return self.row.item_id

    @property
    def key(self) -> tuple[str, int]:
        return (self.item_id, self.sample_index)

    @property
    def test_id(self) -> str:
        return f"{self.item_id}#s{self.sample_index}"


# One pytest test per case, all created before the first runs: past this, collection alone
# would take hours and gigabytes.
MAX_CASES = 10_000_000


def expand(rows: Iterable[R], samples_per_item: int, seed: int) -> list[Case[R]]:
    """Each row times each sample, with its deterministic per-attempt seed."""
    if samples_per_item < 1:
        raise LsrbUsageError(f"--lsrb-samples must be at least 1 (got {samples_per_item}).")
    rows = list(rows)
    if len(rows) * samples_per_item > MAX_CASES:
        raise LsrbUsageError(
            f"this run would be {len(rows)} items x {samples_per_item} samples = "
            f"{len(rows) * samples_per_item} tests, more than the {MAX_CASES} one pytest session can "
            "hold; select fewer with --lsrb-max-items or split the run with --lsrb-shard-count."
        )
    return [
        Case(row=row, sample_index=k, attempt_seed=attempt_seed(seed, row.item_id, k))
        for row in rows
        for k in range(samples_per_item)
    ]
