"""Under `-n N --dist worksteal`, the long tests start first, spread evenly over the workers.

Why: CI runs every test with `-n <cores + 1> --dist worksteal` (.ci/run). Worksteal hands each
worker one contiguous slice of the collected order and lets an idle worker take tests from the
*end* of a busy worker's queue. The long end-to-end tests (llama.cpp runs, LaSR/SGA searches, the budget
runs in a row: 20-90 s each) sit together near the end of the order (tests/integration/), so
they ended up queued on one worker and ran there one after another while the other worker,
its short tests done, had nothing left to take: the last ~2 % of the tests took ~2.5 minutes.

What: in each xdist worker (every worker collects, and all must produce the same order), the
tests measured long (`long_tests.txt`: seconds and node id) are dealt to N bins, longest first,
each to the bin with the least time so far; bin k's tests open the k-th slice worksteal will
hand out, and the other tests keep their order in the rest of the slices. Each worker then
starts with its share of the long tests, and stealing (from the queues' ends) moves only short
tests. Only the order changes: no test is added, dropped or deselected, and a stale list only
makes the order less good. The tests of a module that share a module- or class-scoped fixture
move together, so the fixture is still set up once per worker.

`long_tests.txt` is measured, not kept by hand: regenerate it from a full run with

    LSRB_RUN_SLOW=1 python -m pytest -q -n 2 --dist worksteal --durations=0 --durations-min=5 \
        | python tests/long_first.py > tests/long_tests.txt
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

LIST = Path(__file__).resolve().parent / "long_tests.txt"
# A test the list does not know that needs the real llama.cpp server: such tests take 10-30 s.
LLAMA_GUESS = 15.0
# Fixture scopes whose setup a split module would pay again in the same worker. The tests'
# autouse `keys_stay_in_their_module` (every module has it) only saves and restores a dict.
SHARED_SCOPES = frozenset({"module", "class", "package"})
CHEAP_SHARED = frozenset({"keys_stay_in_their_module"})


def known_seconds(path: Path = LIST) -> dict[str, float]:
    """`seconds node-id` per line (`#` comments allowed)."""
    seconds: dict[str, float] = {}
    if not path.is_file():
        return seconds
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            value, _, node_id = line.partition(" ")
            seconds[node_id.strip()] = float(value)
    return seconds


def slice_sizes(total: int, workers: int) -> list[int]:
    """The sizes of the first slices worksteal hands out (xdist's `check_schedule`: each idle
    node gets `len(pending) // nodes_remaining` of what is left, in order)."""
    sizes, left = [], total
    for remaining in range(workers, 0, -1):
        size = left // remaining
        sizes.append(size)
        left -= size
    return sizes


def deal(weights: Sequence[float], workers: int) -> list[list[int]]:
    """Indices of `weights` (> 0) dealt longest first, each to the bin with the least total so
    far (ties: the lowest bin), in the order they were dealt."""
    bins: list[list[int]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for i in sorted((i for i, w in enumerate(weights) if w > 0), key=lambda i: (-weights[i], i)):
        k = min(range(workers), key=lambda b: (loads[b], b))
        bins[k].append(i)
        loads[k] += weights[i]
    return bins


def layout(units: Sequence[Sequence[str]], weights: Sequence[float], workers: int) -> list[str]:
    """The collected order for `workers` worksteal workers: unit `i` (tests that move together)
    weighs `weights[i]` seconds (0: not known long, keeps its place among the short ones)."""
    bins = deal(weights, workers)
    dealt = {i for b in bins for i in b}
    rest = [unit for i, unit in enumerate(units) if i not in dealt]
    order: list[str] = []
    end = 0  # where the slice being filled ends (a unit is never split: it may run over)
    for size, chosen in zip(slice_sizes(sum(len(u) for u in units), workers), bins, strict=True):
        end += size
        order += [node for i in chosen for node in units[i]]
        while rest and len(order) < end:
            order += rest.pop(0)
    return order + [node for unit in rest for node in unit]


def units_of(items: Sequence[pytest.Item]) -> list[list[pytest.Item]]:
    """The tests in collected order, grouped where they must move together: the tests of one
    module that use a module-, class- or package-scoped fixture (other than the cheap autouse
    one) are one unit, kept in their order, so the fixture is set up once; every other test is a
    unit of its own."""
    units: list[list[pytest.Item]] = []
    where: dict[str, int] = {}
    for item in items:
        if not shares_a_fixture(item):
            units.append([item])
            continue
        module = module_of(item)
        if module in where:
            units[where[module]].append(item)
        else:
            where[module] = len(units)
            units.append([item])
    return units


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def shares_a_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    for name, defs in getattr(info, "name2fixturedefs", {}).items():
        if name not in CHEAP_SHARED and any(d.scope in SHARED_SCOPES for d in defs):
            return True
    return False


def weight(unit: Iterable[pytest.Item], seconds: dict[str, float]) -> float:
    total = 0.0
    for item in unit:
        known = seconds.get(item.nodeid)
        if known is None and item.get_closest_marker("llama") is not None:
            known = LLAMA_GUESS
        total += known or 0.0
    return total


# A worker's own `dist` option reads "no" (xdist resets it there): the controller passes it on.
DIST_KEY = "lsrb_tests_dist"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist's controller, for each worker: tell it how the run hands out tests."""
    node.workerinput[DIST_KEY] = node.config.getvalue("dist")


def worksteal_workers(config: pytest.Config) -> int:
    """N when this process is a worker of an `-n N --dist worksteal` run, else 0."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or workerinput.get(DIST_KEY) != "worksteal":
        return 0
    return int(workerinput.get("workercount", 0))


@pytest.hookimpl(trylast=True)  # after the default run's deselection (opt_in.py): order what runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workers = worksteal_workers(config)
    if workers < 2 or not items:
        return
    units = units_of(items)
    seconds = known_seconds()
    by_id = {item.nodeid: item for item in items}
    order = layout([[i.nodeid for i in u] for u in units], [weight(u, seconds) for u in units], workers)
    items[:] = [by_id[node_id] for node_id in order]


# `--durations` output -> long_tests.txt (see the module's docstring).
_DURATION = re.compile(r"^\s*([\d.]+)s\s+(setup|call|teardown)\s+(\S.*?)\s*$")


def from_durations(lines: Iterable[str]) -> dict[str, float]:
    """Seconds per node id (setup + call + teardown) from pytest's `--durations` lines."""
    seconds: dict[str, float] = {}
    for line in lines:
        match = _DURATION.match(line)
        if match:
            seconds[match[3]] = seconds.get(match[3], 0.0) + float(match[1])
    return seconds


def main() -> None:
    seconds = from_durations(sys.stdin)
    print("# seconds node-id: tests measured long (tests/long_first.py says how to regenerate this)")
    for node_id, value in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{value:.1f} {node_id}")


if __name__ == "__main__":
    main()
