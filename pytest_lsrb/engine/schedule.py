"""Which tests this process will run next, so their attempts can start early.

Without xdist that is simply the items after the current one. Under xdist a worker runs what the
controller sends it; the tests already sent but not yet run sit in the worker's queue, which only
`session.seams` reads (xdist does not promise it).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest


class Schedule:
    def __init__(
        self, config: pytest.Config, queued: Callable[[int], list[int] | None] | None = None
    ) -> None:
        self.config = config
        self.items: list[pytest.Item] = []
        self.position: dict[str, int] = {}
        # under xdist: the indexes of the next tests in this worker's queue (`session.seams`),
        # None when it cannot be read; without it a worker starts no attempt ahead
        self.queued = queued

    def set_items(self, items: list[pytest.Item]) -> None:
        self.items = items
        self.position = {item.nodeid: i for i, item in enumerate(items)}

    def upcoming(self, item: pytest.Item, n: int) -> list[pytest.Item]:
        """Up to `n` items this process will run after `item`, in order."""
        if n <= 0 or not self.items:
            return []
        if hasattr(self.config, "workerinput"):
            pending = self.queued(n) if self.queued is not None else None
            if pending is None:
                return []
            return [self.items[i] for i in pending[:n] if 0 <= i < len(self.items)]
        start = self.position.get(item.nodeid)
        if start is None:
            return []
        return self.items[start + 1 : start + 1 + n]


def queue_depth(concurrency: int) -> int:
    """Tests a worker should hold: the runner's lookahead plus the test running and the next one."""
    return 2 * concurrency + 2 if concurrency > 1 else 0
