"""The long tests start first on every worksteal worker (tests/long_first.py): checked against
xdist's own `WorkStealingScheduling`, driven by a small simulation of its workers (each runs
its queue in order, holds its next test, and gives back on a steal only tests still queued)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import long_first
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdist.scheduler import WorkStealingScheduling


class Config:
    def __init__(self, workers: int) -> None:
        self.workers = workers

    def getvalue(self, name: str) -> Any:
        assert name == "tx"
        return [f"{self.workers}*popen"]


class Node:
    """A worker as the scheduler sees it: what it was sent, what it holds."""

    shutting_down = False

    def __init__(self) -> None:
        self.gateway = type("Gateway", (), {"id": "gw"})()
        self.queue: list[int] = []
        self.received: list[int] = []
        self.steal: list[int] | None = None

    def send_runtest_some(self, indices: Sequence[int]) -> None:
        self.queue += indices
        self.received += indices

    def send_steal(self, indices: Sequence[int]) -> None:
        self.steal = list(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def simulate(order: Sequence[str], seconds: dict[str, float], workers: int) -> tuple[float, list[Node]]:
    """The run's wall time under xdist's worksteal scheduler, tests taking `seconds` (1 s unless
    listed), and the nodes (with what each received first)."""
    sched = WorkStealingScheduling(Config(workers))
    nodes = [Node() for _ in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, list(order))
    sched.schedule()
    clock = 0.0
    running: dict[int, tuple[float, int]] = {}  # node -> (ends at, test index)
    while True:
        for k, node in enumerate(nodes):
            if node.steal is not None:  # the worker answers a steal: all still queued, or none
                asked, node.steal = node.steal, None
                held = node.queue[1:]  # its next test is already taken out of its queue
                given_back = asked if set(asked) <= set(held) else []
                node.queue = [i for i in node.queue if i not in given_back]
                sched.remove_pending_tests_from_node(node, given_back)
            if k not in running and node.queue:
                index = node.queue.pop(0)
                running[k] = (clock + seconds.get(order[index], 1.0), index)
        if not running:
            return clock, nodes
        k = min(running, key=lambda n: running[n])
        clock, index = running.pop(k)
        sched.mark_test_complete(nodes[k], index)


LONG = {"tests/integration/test_z.py::long_a": 90.0, "tests/integration/test_z.py::long_b": 85.0}
LONG |= {f"tests/integration/test_z.py::long_{i}": 30.0 - i for i in range(6)}


def collected(shorts: int = 300) -> list[str]:
    """The project's shape: many short tests first, the long end-to-end ones at the end."""
    return [f"tests/core/test_a.py::short_{i}" for i in range(shorts)] + list(LONG)


def test_each_worker_starts_with_its_share_of_the_long_tests_and_the_run_ends_sooner() -> None:
    order = collected()
    plain, _ = simulate(order, LONG, 2)
    laid = long_first.layout([[n] for n in order], [LONG.get(n, 0.0) for n in order], 2)
    assert sorted(laid) == sorted(order)
    ordered, nodes = simulate(laid, LONG, 2)
    for node in nodes:  # every worker's first tests are long ones
        assert laid[node.received[0]] in LONG and laid[node.received[1]] in LONG
    ideal = (sum(LONG.values()) + 300) / 2
    assert ordered <= ideal + 2, ordered  # balanced to within a short test or two
    # as it was: the long tests queued together on one worker, some left to run one after another
    assert plain >= ordered + 25, plain


def test_three_workers_get_three_slices_that_each_open_with_long_tests() -> None:
    order = collected()
    laid = long_first.layout([[n] for n in order], [LONG.get(n, 0.0) for n in order], 3)
    _, nodes = simulate(laid, LONG, 3)
    assert all(laid[node.received[0]] in LONG for node in nodes)


@given(st.integers(0, 500), st.integers(1, 8))
def test_the_slices_are_worksteals_first_hand_out(total: int, workers: int) -> None:
    order = [f"t{i}" for i in range(total)]
    _, nodes = simulate(order, {}, workers)
    first = [len(node.received) for node in nodes]
    sizes = long_first.slice_sizes(total, workers)
    assert sum(sizes) == total
    # what each node got in the first hand-out (a node may later steal more)
    starts = [node.received[0] if node.received else None for node in nodes]
    expected_starts = [sum(sizes[:k]) if sizes[k] else None for k in range(workers)]
    assert starts == expected_starts, (first, sizes)


@given(
    st.lists(st.lists(st.just(0), min_size=1, max_size=3), max_size=40),
    st.lists(st.sampled_from([0.0, 0.0, 1.5, 7.0, 40.0]), min_size=40, max_size=40),
    st.integers(1, 5),
)
def test_the_layout_moves_whole_units_and_drops_nothing(
    shapes: list[list[int]], weights: list[float], workers: int
) -> None:
    units = [[f"u{u}.{i}" for i in range(len(shape))] for u, shape in enumerate(shapes)]
    laid = long_first.layout(units, weights[: len(units)], workers)
    assert sorted(laid) == sorted(n for unit in units for n in unit)
    for unit in units:  # a unit's tests stay together and in their order
        start = laid.index(unit[0])
        assert laid[start : start + len(unit)] == unit
    # the tests of no weight keep their collected order
    light = [n for unit, w in zip(units, weights, strict=False) if w == 0 for n in unit]
    assert [n for n in laid if n in set(light)] == light


@given(st.lists(st.floats(0.1, 100), max_size=30), st.integers(1, 6))
def test_dealing_longest_first_keeps_the_bins_within_one_test_of_each_other(
    weights: list[float], workers: int
) -> None:
    bins = long_first.deal(weights, workers)
    assert sorted(i for b in bins for i in b) == list(range(len(weights)))
    loads = [sum(weights[i] for i in b) for b in bins]
    assert max(loads) - min(loads) <= max(weights, default=0) + 1e-9


def test_the_list_reads_seconds_and_node_ids_and_comes_from_durations_lines(tmp_path: Any) -> None:
    lines = [
        "============================ slowest durations =============================",
        "12.50s call     tests/a.py::test_x[p-1]",
        "1.00s setup    tests/a.py::test_x[p-1]",
        "6.00s call     tests/b.py::T::test_y",
        "(40 durations < 5s hidden.  Use -vv to show these durations.)",
    ]
    seconds = long_first.from_durations(lines)
    assert seconds == {"tests/a.py::test_x[p-1]": 13.5, "tests/b.py::T::test_y": 6.0}
    listed = tmp_path / "long.txt"
    listed.write_text("# comment\n13.5 tests/a.py::test_x[p-1]\n\n6.0 tests/b.py::T::test_y\n")
    assert long_first.known_seconds(listed) == seconds
    assert long_first.known_seconds(tmp_path / "absent.txt") == {}


def test_the_committed_list_names_tests_that_exist(request: pytest.FixtureRequest) -> None:
    """A stale entry only costs order, but a list of names that no longer exist is a list that
    no longer orders anything: most of it must still name collected tests' files."""
    known = long_first.known_seconds()
    assert len(known) >= 20
    root = request.config.rootpath
    files = {node_id.split("::")[0] for node_id in known}
    assert sum((root / f).is_file() for f in files) >= 0.8 * len(files)


def test_only_a_worker_of_a_worksteal_run_reorders() -> None:
    """xdist resets a worker's own `dist` option to "no": the controller's value comes in the
    worker's input (`pytest_configure_node`), and only `worksteal` gets this layout."""

    class Controller:
        def getvalue(self, name: str) -> Any:
            return {"dist": "worksteal"}[name]

    node = type("Node", (), {"config": Controller(), "workerinput": {"workercount": 2}})()
    long_first.pytest_configure_node(node)
    worker = type("Worker", (), {"workerinput": node.workerinput})()
    assert long_first.worksteal_workers(worker) == 2
    for dist in ("load", "loadscope", "no"):
        assert (
            long_first.worksteal_workers(
                type("W", (), {"workerinput": {"workercount": 2, long_first.DIST_KEY: dist}})()
            )
            == 0
        )
    assert long_first.worksteal_workers(type("Serial", (), {})()) == 0
