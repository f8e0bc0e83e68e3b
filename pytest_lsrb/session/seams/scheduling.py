"""xdist's `load` scheduling, kept deep enough for the runner's prefetch.

Subclasses xdist's `LoadScheduling` and calls its `_send_tests` and `node2pending`, none of which
xdist promises: used only with `--lsrb-fastpath on` (`session.seams`).
"""

from __future__ import annotations

from typing import Any

import pytest


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

    class DeepLoadScheduling(LoadScheduling):  # type: ignore[misc]  # (xdist ships no types)
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
