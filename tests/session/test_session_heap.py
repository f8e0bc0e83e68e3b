"""session.heap: a run's long-lived objects leave the cyclic collector's sight, garbage does not;
everything is given back when the session ends, unless the process ends with it. Sessions that
run no suite are untouched."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

from lsrb_testing import TACTIC_SUITE, RunSuite

from pytest_lsrb.session.heap import CHECKPOINT_EVERY, YOUNG_THRESHOLD, Heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> Node:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a


def test_a_checkpoint_collects_garbage_and_freezes_what_lives() -> None:
    heap = Heap()
    try:
        heap.freeze()
        kept = cycle()
        dropped = weakref.ref(cycle())  # unreachable at once: only the collector frees a cycle
        frozen_before = gc.get_freeze_count()
        for _ in range(CHECKPOINT_EVERY - 1):
            heap.test_finished()
        # no checkpoint yet: nothing new frozen (a frozen object another thread lets go of, as
        # execnet's do under -n, leaves the permanent generation, so the count may only shrink)
        assert gc.get_freeze_count() <= frozen_before
        heap.test_finished()
        assert dropped() is None
        assert gc.get_freeze_count() > frozen_before
        assert kept.other is not None and kept.other.other is kept
    finally:
        gc.unfreeze()  # (this test runs under pytest's command line, where `thaw` leaves it)


def test_a_heap_never_frozen_never_checkpoints() -> None:
    heap = Heap()
    for _ in range(CHECKPOINT_EVERY):
        heap.test_finished()
    assert gc.get_freeze_count() == 0
    heap.thaw()
    assert gc.get_freeze_count() == 0


def test_a_pause_stops_the_collector_for_its_block_only() -> None:
    heap = Heap()
    assert gc.isenabled()
    with heap.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    try:
        with heap.paused():
            raise KeyError("setup failed")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()  # someone else turned it off: a pause does not turn it back on
    try:
        with heap.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_young_collections_are_rarer_while_frozen_and_as_before_after() -> None:
    before = gc.get_threshold()
    heap = Heap()
    try:
        heap.freeze()
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
        heap.freeze()  # (after collection: the first freeze's thresholds are the ones kept)
        heap.thaw()
        assert gc.get_threshold() == before
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_a_collector_turned_off_stays_off() -> None:
    before = gc.get_threshold()
    gc.set_threshold(0)  # threshold 0: no automatic collection at all
    heap = Heap()
    try:
        heap.freeze()
        assert gc.get_threshold()[0] == 0
        heap.thaw()
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_a_worker_heap_stays_frozen_when_its_session_ends() -> None:
    heap = Heap(ends_process=True)
    try:
        heap.freeze()
        heap.thaw()
        assert not heap.frozen
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


# A plugin that notes the freeze count while tests run (the least seen) and when the process ends.
PROBE = """
import atexit, gc, os

seen = []
collecting = []

def pytest_runtest_logfinish():
    seen.append(gc.get_freeze_count())
    collecting.append(gc.isenabled())

@atexit.register
def report():
    if seen:  # (the controller's and each worker's: the first to end writes, the others append)
        with open(os.environ["PROBE_OUT"], "a") as fh:
            fh.write(f"{min(seen)} {gc.get_freeze_count()} {int(all(collecting))}\\n")
"""


def probe_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "heap_probe.py").write_text(PROBE, encoding="utf-8")
    return {"PYTHONPATH": str(tmp_path / "probe"), "PROBE_OUT": str(tmp_path / "probe.txt")}


def probed(tmp_path: Path) -> list[tuple[int, int]]:
    """(least freeze count seen while tests ran, freeze count at exit) per process; each process
    also noted whether the collector was on after every test, which must be so."""
    path = tmp_path / "probe.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    rows = [line.split() for line in lines]
    assert all(on == "1" for _, _, on in rows), lines  # paused only while setting up (heap.paused)
    return [(int(a), int(b)) for a, b, _ in rows]


def run_python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **probe_env(tmp_path)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )


def test_a_command_line_run_freezes_while_tests_run_and_ends_frozen(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    result = run_suite("-n", "2", "-p", "heap_probe", env=probe_env(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    seen = probed(tmp_path)
    assert len(seen) == 3  # the controller and two workers
    for during, at_exit in seen:
        assert during > 0
        assert at_exit > 0, seen  # nothing left for the interpreter's last collections to walk


def test_a_run_inside_a_program_gives_everything_back(tmp_path: Path) -> None:
    args = [str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider", "-p", "heap_probe"]
    args.append(f"--lsrb-output-dir={tmp_path / 'out'}")
    code = (
        f"import gc, pytest\nbefore = gc.get_threshold()\ncode = pytest.main({args!r})\n"
        "print('frozen', gc.get_freeze_count(), 'thresholds back', gc.get_threshold() == before)\n"
    )
    proc = run_python(code + "raise SystemExit(int(code))\n", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "frozen 0 thresholds back True" in proc.stdout
    [(during, _)] = probed(tmp_path)
    assert during > 0


def test_a_session_without_a_suite_freezes_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "heap_probe", "test_plain.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in {**os.environ, **probe_env(tmp_path)}.items() if k != "PYTEST_ADDOPTS"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert probed(tmp_path) == [(0, 0)]
