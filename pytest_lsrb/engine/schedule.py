"""Which tests this process will run next, so their attempts can start early.

Without xdist that is simply the items after the current one. Under xdist a worker runs what the
controller sends it; the tests already sent but not yet run sit in the worker's queue, which is
read here (under its lock) without changing it.
"""

from __future__ import annotations

from typing import Any

import pytest


class Schedule:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.items: list[pytest.Item] = []
        self.position: dict[str, int] = {}
        self._interactor: Any = None
        self._looked_for_interactor = False

    def set_items(self, items: list[pytest.Item]) -> None:
        self.items = items
        self.position = {item.nodeid: i for i, item in enumerate(items)}

    def _worker_interactor(self) -> Any:
        if not self._looked_for_interactor:
            self._looked_for_interactor = True
            for plugin in self.config.pluginmanager.get_plugins():
                if type(plugin).__name__ == "WorkerInteractor" and hasattr(plugin, "torun"):
                    self._interactor = plugin
        return self._interactor

    def upcoming(self, item: pytest.Item, n: int) -> list[pytest.Item]:
        """Up to `n` items this process will run after `item`, in order."""
        if n <= 0 or not self.items:
            return []
        interactor = self._worker_interactor() if hasattr(self.config, "workerinput") else None
        if interactor is not None:
            pending: list[int] = []
            nxt = getattr(interactor, "nextitem_index", None)
            if isinstance(nxt, int):
                pending.append(nxt)
            try:
                with interactor.torun.lock() as queue:
                    pending.extend(i for i in list(queue)[: n + 1] if isinstance(i, int))
            except Exception:  # a future xdist may change its queue; prefetch is an optimisation
                pending = pending[:1]
            return [self.items[i] for i in pending[:n] if 0 <= i < len(self.items)]
        start = self.position.get(item.nodeid)
        if start is None:
            return []
        return self.items[start + 1 : start + 1 + n]


def queue_depth(concurrency: int) -> int:
    """Tests a worker should hold: the runner's lookahead plus the test running and the next one."""
    return 2 * concurrency + 2 if concurrency > 1 else 0


def deep_load_scheduler(config: pytest.Config, log: Any, depth: int) -> Any:
    """xdist's `load` scheduling with every worker's queue kept `depth` deep (None: xdist decides).

    Upstream `load` lets a worker's queue shrink to two tests near the end of a run (and holds
    back while tests take over 0.1 s), which would starve the prefetch. Tests are never taken
    back from a queue under `load`, so a deeper queue costs no duplicated model calls (unlike
    `worksteal`, which we leave alone).
    """
    if depth <= 0 or config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScheduling

    class DeepLoadScheduling(LoadScheduling):
        def check_schedule(self, node: Any, duration: float = 0) -> None:
            if node.shutting_down:
                return
            if not self.pending:
                node.shutdown()
                return
            per_node = len(self.pending) // len(self.node2pending)
            low = max(depth, per_node // 4)
            high = max(depth, per_node // 2)
            held = len(self.node2pending[node])
            if held < low:
                chunk = self.maxschedchunk or high
                self._send_tests(node, min(high - held, max(chunk, depth - held)))

        def schedule(self) -> None:
            first = self.collection is None
            super().schedule()
            if first and self.collection:
                for node in self.nodes:  # top the initial chunks up to the depth
                    self.check_schedule(node)

    return DeepLoadScheduling(config, log)
