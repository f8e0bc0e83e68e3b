"""The batched worker -> controller messages under xdist (`session.seams.transport`), one side at a time:
a worker's Batcher against a controller's unpacking, with the pipe between them a list."""

from __future__ import annotations

import pickle
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_lsrb.session.seams import transport
from pytest_lsrb.session.seams.transport import BATCH_KEY, Batcher, blame_running, unpack_on


class Controller:
    """A WorkerController as far as `unpack_on` sees it: xdist's per-event callback, and the
    controller's event queue (`putevent`) where xdist's callback puts what it decoded."""

    def __init__(self) -> None:
        self.workerinput: dict[str, Any] = {}
        self.received: list[Any] = []  # what the controller's main loop gets, in order
        decode = SimpleNamespace(pytest_report_from_serializable=lambda config, data: ("report", data))
        self.config = SimpleNamespace(hook=decode)

    def process_from_remote(self, eventcall: Any) -> None:
        self.received.append(eventcall)

    def putevent(self, event: tuple[str, dict[str, Any]]) -> None:
        name, kwargs = event
        assert kwargs.pop("node") is self
        if name == "testreport":
            kind, data = kwargs.pop("rep")
            assert kind == "report"
            kwargs["data"] = data
        self.received.append((name, kwargs))


def events_of_test(i: int) -> list[tuple[str, dict[str, Any]]]:
    """The events xdist sends for one test, in its order."""
    nodeid = f"suite/test_x.py::test[{i}]"
    events: list[tuple[str, dict[str, Any]]] = [("logstart", {"nodeid": nodeid, "location": ("f", 1, "t")})]
    for when in ("setup", "call", "teardown"):
        data = {"nodeid": nodeid, "when": when, "outcome": "passed", "longrepr": None, "raw": b"\xff"}
        events.append(("testreport", {"data": data}))
    events.append(("logfinish", {"nodeid": nodeid, "location": ("f", 1, "t")}))
    events.append(("runtest_protocol_complete", {"item_index": i, "duration": 0.001}))
    return events


def wire(queued: int = 100, **kwargs: Any) -> tuple[Batcher, Controller, list[Any]]:
    """A worker's Batcher whose messages reach a controller wrapped by `unpack_on`."""
    controller = Controller()
    assert unpack_on(controller)
    assert controller.workerinput[BATCH_KEY] is True
    messages: list[Any] = []

    def send_message(message: Any) -> None:
        messages.append(message)
        controller.process_from_remote(message)

    def send_event(name: str, **kw: Any) -> None:  # xdist's own sendevent: one message per event
        send_message((name, kw))

    return Batcher(send_event, send_message, lambda: queued, **kwargs), controller, messages


def test_every_event_arrives_once_in_the_order_sent() -> None:
    batcher, controller, messages = wire()
    sent: list[tuple[str, dict[str, Any]]] = [("workerready", {"workerinfo": {}})]
    for i in range(3):
        sent += events_of_test(i)
    sent.append(("collectreport", {"data": {"x": 1}}))  # not batched: flushes what is buffered first
    for i in range(3, 140):
        sent += events_of_test(i)
    sent.append(("workerfinished", {"workeroutput": {}}))
    for name, kwargs in sent:
        batcher.sendevent(name, **kwargs)
    batcher.close()
    assert controller.received == sent
    # 140 tests: one message per 64 tests (plus the flush before collectreport), not six per test
    assert len(messages) <= 8


def test_a_worker_low_on_scheduled_tests_sends_at_once() -> None:
    # xdist sends more tests only when it hears earlier ones completed: waiting on a full buffer
    # with an empty queue would wait forever
    batcher, controller, _ = wire(queued=0)
    for name, kwargs in events_of_test(0):
        batcher.sendevent(name, **kwargs)
    assert controller.received == events_of_test(0)
    batcher.close()


def test_a_worker_below_its_prefetch_depth_sends_at_once() -> None:
    # with attempts kept in flight the controller must top the queue up before the prefetch
    # runs dry: below that depth each completion goes out
    batcher, controller, _ = wire(queued=5, low_queue=10)
    for name, kwargs in events_of_test(0):
        batcher.sendevent(name, **kwargs)
    assert controller.received == events_of_test(0)
    node = Controller()
    unpack_on(node, 10)
    assert node.workerinput[transport.LOW_KEY] == 10
    batcher.close()


def test_an_old_buffer_is_sent_without_more_events() -> None:
    # a slow test's result shows while the next test runs
    batcher, controller, _ = wire(max_age_s=0.05)
    for name, kwargs in events_of_test(0)[:-1]:
        batcher.sendevent(name, **kwargs)
    deadline = time.monotonic() + 30
    while len(controller.received) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert controller.received == events_of_test(0)[:-1]
    batcher.close()


def test_events_pickle_cannot_carry_go_one_by_one() -> None:
    batcher, controller, messages = wire(queued=0)
    odd = [("logstart", {"nodeid": "t", "location": lambda: None}), *events_of_test(1)[1:]]
    for name, kwargs in odd:
        batcher.sendevent(name, **kwargs)
    assert controller.received == odd
    assert len(messages) == len(odd)  # sent as xdist would, none lost
    batcher.close()


class NotPlain:
    pass


def test_events_holding_more_than_plain_data_go_one_by_one() -> None:
    """A user property of another type (a Path, a datetime, an object): the controller would
    refuse it in a batch, so the worker hands those events to xdist, which sends them as it
    would without batching (and fails where it fails); the other tests' events still batch."""
    from datetime import datetime

    batcher, controller, messages = wire(queued=0)
    sent = events_of_test(0)
    sent[2][1]["data"]["user_properties"] = [("when", datetime(2026, 1, 1)), ("obj", NotPlain())]
    sent += events_of_test(1)
    for name, kwargs in sent:
        batcher.sendevent(name, **kwargs)
    assert controller.received == sent
    assert len(messages) == len(events_of_test(0)) + 1  # the plain test's events: one batch
    with pytest.raises(pickle.PicklingError, match="plain data, not datetime"):
        transport.pack(sent[:3])
    assert transport.unpack(transport.pack(events_of_test(2))) == events_of_test(2)
    batcher.close()


def test_the_controller_unpickles_plain_data_only() -> None:
    blob = pickle.dumps([("logstart", {"nodeid": NotPlain()})])
    with pytest.raises(pickle.UnpicklingError, match="plain data"):
        transport.unpack(blob)
    controller = Controller()
    unpack_on(controller)
    batch = (transport.BATCH_EVENT, {"events": blob})
    controller.process_from_remote(batch)
    # handed to xdist as it came: an event it does not know, which takes that worker down
    assert controller.received == [batch]


def test_an_unknown_controller_shape_batches_nothing() -> None:
    node = SimpleNamespace(workerinput={}, config=None)  # no process_from_remote to wrap
    assert not unpack_on(node)
    assert node.workerinput == {}
    bound = Controller()
    bound.process_from_remote = bound.process_from_remote  # type: ignore[method-assign]
    assert not unpack_on(bound)  # already bound on the instance: not the xdist this knows
    assert BATCH_KEY not in bound.workerinput


class Interactor:
    """Stands for an xdist WorkerInteractor (found by class name, as the code looks for it)."""

    def __init__(self, torun: Any) -> None:
        self.channel = SimpleNamespace(send=lambda message: None)
        self.torun = torun

    def sendevent(self, name: str, **kwargs: Any) -> None:
        pass


Interactor.__name__ = "WorkerInteractor"


def config_with(plugin: Any, batch: bool = True) -> Any:
    manager = SimpleNamespace(get_plugins=lambda: [plugin])
    return SimpleNamespace(workerinput={BATCH_KEY: True} if batch else {}, pluginmanager=manager)


def test_an_unknown_worker_shape_keeps_xdists_sends() -> None:
    no_queue = Interactor(torun=None)  # a future xdist without the `torun` queue
    assert transport.batch_sends(config_with(no_queue)) is None
    assert "sendevent" not in vars(no_queue)
    # a controller that did not wrap its node (an unknown xdist there) gets per-event sends
    assert transport.batch_sends(config_with(Interactor(torun=None), batch=False)) is None


def blame_config(pending: list[int], collection: list[str]) -> tuple[Any, Any]:
    node = object()
    sched = SimpleNamespace(node2pending={node: pending}, collection=collection)
    manager = SimpleNamespace(
        get_plugin=lambda name: SimpleNamespace(sched=sched) if name == "dsession" else None
    )
    return SimpleNamespace(pluginmanager=manager), node


def test_the_test_a_crashed_worker_was_running_is_the_one_blamed(tmp_path: Path) -> None:
    collection = [f"t[{i}]" for i in range(6)]
    pending = [1, 2, 3, 4]  # 1 and 2 finished, their reports went down with the worker
    config, node = blame_config(pending, collection)
    marker = tmp_path / "running"
    marker.write_bytes(b"t[3]\nt[4]-stale-tail")
    blame_running(config, node, marker)
    assert pending == [3, 1, 2, 4]
    assert not marker.exists()
    # no marker (the worker never started a test): xdist's own choice stands
    blame_running(config, node, marker)
    assert pending == [3, 1, 2, 4]
