"""xdist `load` scheduling kept deep: every worker holds enough tests for its prefetch.

Driven through xdist's own scheduler API with stand-in worker nodes (the edge: no processes).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pytest_lsrb.engine.schedule import queue_depth
from pytest_lsrb.session.seams.scheduling import deep_load_scheduler

pytest.importorskip("xdist")


class Node:
    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


class Config:
    def __init__(self, dist: str = "load", nodes: int = 2) -> None:
        self.dist = dist
        self.nodes = nodes

    def getvalue(self, name: str) -> Any:
        return {"dist": self.dist, "tx": [f"{self.nodes}*popen"]}.get(name)

    def getoption(self, name: str) -> Any:
        return {"maxschedchunk": None}.get(name)


log = None  # xdist makes its own Producer


def test_only_load_scheduling_is_replaced_and_only_when_prefetching() -> None:
    assert deep_load_scheduler(Config("worksteal"), log, 10) is None
    assert deep_load_scheduler(Config("each"), log, 10) is None
    assert deep_load_scheduler(Config("load"), log, 0) is None
    assert queue_depth(1) == 0 and queue_depth(8) == 18


@pytest.mark.parametrize(("tests", "nodes", "concurrency"), [(400, 2, 16), (40, 2, 4), (30, 4, 8), (7, 2, 4)])
def test_every_worker_holds_the_depth_until_the_tests_run_out(
    tests: int, nodes: int, concurrency: int
) -> None:
    depth = queue_depth(concurrency)
    sched = deep_load_scheduler(Config(nodes=nodes), log, depth)
    workers = [Node(f"gw{i}") for i in range(nodes)]
    collection = [f"test_x.py::test[{i}]" for i in range(tests)]
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, collection)
    sched.schedule()
    rng = random.Random(0)
    done: list[int] = []
    while sched.has_pending:
        busy = [w for w in workers if sched.node2pending[w]]
        for w in workers:  # the law: while tests remain unassigned, nobody runs short
            if sched.pending:
                assert len(sched.node2pending[w]) >= depth, (w.gateway.id, len(sched.node2pending[w]))
        w = rng.choice(busy)
        index = sched.node2pending[w][0]
        sched.mark_test_complete(w, index, duration=0.5)  # slow tests must not make it hold back
        done.append(index)
    assert sorted(done) == list(range(tests))  # every test ran exactly once
    assert all(w.shutting_down for w in workers)
    assert sorted(i for w in workers for i in w.sent) == list(range(tests))
