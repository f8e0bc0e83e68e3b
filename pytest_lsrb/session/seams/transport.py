"""Batched worker -> controller messages under xdist.

xdist sends six messages per test from a worker to its controller (logstart, three test reports,
logfinish, runtest_protocol_complete), each through execnet's pure-Python serializer, a pipe
write and read, and a hand-off between the controller's receiver thread and its main loop. For
tests as cheap as a mock attempt that costs more than the test itself, and `-n 2` is slower than
serial. Here a worker buffers those per-test events and sends them as one message, and the
controller unpacks the message into the very calls xdist would have made one by one, in order.

The batch is a pickle of the list of `(name, kwargs)` events: pickle is C-fast and keeps tuples
and bytes as they are. Both ends are processes of one run on one machine (the controller started
the worker, and the bytes travel over the pipe between them), and a batch holds only plain data,
as execnet's own messages do: the worker pickles nothing else (events holding anything else, such
as a user property of another type, go through xdist one by one, as without batching), and the
controller unpickles with `find_class` refused.

A worker flushes its buffer:
- before any other event (workerready, collection, workerfinished, unscheduled, errors), so the
  order the controller sees is the order the worker sent;
- when it holds `MAX_TESTS` tests;
- when its oldest event is `MAX_AGE_S` old (a thread looks every `MAX_AGE_S / 2`), so a slow test's
  result still shows while the next one runs;
- when the worker's queue of scheduled tests is (nearly) empty: xdist only sends more tests when it
  hears that earlier ones completed, so a worker waiting with unsent completions would wait forever;
  and when it holds fewer than the runner's prefetch wants (`engine.schedule.queue_depth`: with
  attempts kept in flight, so the controller tops the queue up before the prefetch runs dry).

A crashed worker loses its unsent batch, never a finished attempt: its records are on disk before
the test's report is even made (`session.base`), and the controller learns them from the file.

This uses three things xdist does not promise: the worker's `WorkerInteractor.sendevent` and its
`torun` queue, and the controller's `WorkerController.process_from_remote`. Each is checked before
use; with an xdist where any is missing or different, nothing is batched and xdist sends per event
as usual.
"""

from __future__ import annotations

import io
import os
import pickle
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.nofollow import open_nofollow

BATCH_EVENT: Final = "lsrb_batch"  # the one message a batch travels as: (BATCH_EVENT, {"events": blob})
BATCH_KEY: Final = "lsrb_batched"  # workerinput: the controller unpacks batches (it wrapped the node)
BATCHED: Final = frozenset(
    {"logstart", "logfinish", "testreport", "runtest_protocol_complete", "warning_recorded"}
)
MAX_TESTS: Final = 64
MAX_AGE_S: Final = 0.2
LOW_QUEUE: Final = 2  # flush when the worker holds this many scheduled tests or fewer (at least)
LOW_KEY: Final = "lsrb_low_queue"  # workerinput: ...or fewer than the tests its prefetch wants

Event = tuple[str, dict[str, Any]]


# -- controller --------------------------------------------------------------------------------


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a batch holds only plain data, not {module}.{name}")


class _PlainPickler(pickle.Pickler):
    # pickle calls this for everything but None, bools and exact ints, floats, bytes, str, dicts,
    # sets, lists and tuples (which it writes itself): everything the controller would refuse.
    def reducer_override(self, obj: Any) -> Any:
        raise pickle.PicklingError(f"a batch holds only plain data, not {type(obj).__qualname__}")


def pack(events: list[Event]) -> bytes:
    """The events as one batch, or PicklingError when one holds anything but plain data."""
    out = io.BytesIO()
    _PlainPickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(events)
    return out.getvalue()


def unpack(blob: bytes) -> list[Event]:
    events = _PlainUnpickler(io.BytesIO(blob)).load()
    if not isinstance(events, list):
        raise pickle.UnpicklingError("a batch is a list of events")
    return events


def unpack_on(node: Any, low_queue: int = LOW_QUEUE) -> bool:
    """Controller, before `node.setup()`: unpack each batch the node's worker sends into the
    events xdist would have received one by one, and tell the worker it may batch. False
    (nothing changed) when this xdist's WorkerController is not the one this was written against.

    The events of a test go straight to the controller's event queue as xdist's
    `process_from_remote` would put them there (`notify_inproc` less its debug line, which
    formats every report's repr whether or not anyone reads it); others go through xdist's own.
    A batch that cannot be read goes to xdist as it came: an unknown event, so xdist takes that
    worker down with the error, as for any message it cannot handle."""
    process = getattr(node, "process_from_remote", None)
    workerinput = getattr(node, "workerinput", None)
    if not callable(process) or not isinstance(workerinput, dict) or "process_from_remote" in vars(node):
        return False
    putevent: Any = getattr(node, "putevent", None)
    from_serializable = node.config.hook.pytest_report_from_serializable
    config = node.config
    direct = PASSED_ON if callable(putevent) else frozenset()

    def process_from_remote(eventcall: Any) -> None:
        if type(eventcall) is not tuple or len(eventcall) != 2 or eventcall[0] != BATCH_EVENT:
            process(eventcall)
            return
        try:
            events = unpack(eventcall[1]["events"])
        except Exception:
            process(eventcall)
            return
        for event in events:
            name, kwargs = event
            if name not in direct or "item_index" in kwargs:
                process(event)
            elif name == "testreport":
                putevent((name, {"node": node, "rep": from_serializable(config=config, data=kwargs["data"])}))
            else:
                putevent((name, {"node": node, **kwargs}))

    node.process_from_remote = process_from_remote  # bound by node.setup() as the channel callback
    workerinput[BATCH_KEY] = True
    workerinput[LOW_KEY] = max(LOW_QUEUE, low_queue)
    return True


# what xdist's process_from_remote passes on as (name, {"node": node, **kwargs}), a report decoded
PASSED_ON: Final = frozenset({"logstart", "logfinish", "testreport", "runtest_protocol_complete"})


# -- worker ------------------------------------------------------------------------------------


def running_marker(run_dir: Path, worker_id: str) -> Path:
    """The file where worker `worker_id` notes the test it is running (see `blame_running`)."""
    return run_dir / f".lsrb-running-{worker_id}"


def blame_running(config: Any, node: Any, marker: Path) -> None:
    """Controller, when a worker crashed (before xdist takes its tests back): make the test it
    was running the one xdist reports as crashed.

    xdist blames the first test it has not heard completed; with batching, tests that finished
    but whose reports went down with the worker come before it. They go back to the queue
    instead, and the replacement worker takes their attempts from attempts.jsonl. Without the
    marker, or with a scheduler shaped otherwise, xdist's own choice stands."""
    try:
        nodeid = marker.read_bytes().split(b"\n", 1)[0].decode("utf-8")
        marker.unlink()
    except (OSError, UnicodeDecodeError):
        return
    sched = getattr(config.pluginmanager.get_plugin("dsession"), "sched", None)
    pending = getattr(sched, "node2pending", {}).get(node)
    collection = getattr(sched, "collection", None)
    if not isinstance(pending, list) or not isinstance(collection, list):
        return
    for position, index in enumerate(pending):
        if isinstance(index, int) and 0 <= index < len(collection) and collection[index] == nodeid:
            pending.insert(0, pending.pop(position))
            return


def batch_sends(config: Any, marker: Path | None = None) -> Batcher | None:
    """Worker: batch this worker's per-test events if its controller unpacks them and this xdist's
    worker looks as expected; None (xdist's per-event sends stay) otherwise. With `marker`, the
    worker notes there the test it starts (one pwrite per test) for `blame_running`."""
    if not getattr(config, "workerinput", {}).get(BATCH_KEY):
        return None
    for plugin in config.pluginmanager.get_plugins():
        if type(plugin).__name__ != "WorkerInteractor":
            continue
        send = getattr(plugin, "sendevent", None)
        channel: Any = getattr(plugin, "channel", None)
        queue = getattr(plugin, "torun", None)
        if not (callable(send) and callable(getattr(channel, "send", None))):
            return None
        if not callable(getattr(queue, "lock", None)):
            return None
        low = config.workerinput.get(LOW_KEY)
        batcher = Batcher(
            send,
            channel.send,
            _queue_length(queue),
            low_queue=low if isinstance(low, int) else LOW_QUEUE,
            note_running=_noter(marker),
        )
        plugin.sendevent = batcher.sendevent
        return batcher
    return None


def _noter(marker: Path | None) -> Callable[[str], None] | None:
    if marker is None:
        return None
    try:
        fd = open_nofollow(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError:
        return None

    def note(nodeid: str) -> None:
        try:  # noqa: SIM105 (once per test: cheaper than contextlib.suppress)
            os.pwrite(fd, nodeid.encode("utf-8", "backslashreplace") + b"\n", 0)
        except OSError:
            pass

    return note


def _queue_length(queue: Any) -> Callable[[], int]:
    def length() -> int:
        with queue.lock() as items:
            return len(items)

    return length


class Batcher:
    """A worker's buffer of per-test events (see the module docstring for when it is sent)."""

    def __init__(
        self,
        send_event: Callable[..., None],
        send_message: Callable[[Any], None],
        queue_length: Callable[[], int],
        *,
        max_tests: int = MAX_TESTS,
        max_age_s: float = MAX_AGE_S,
        low_queue: int = LOW_QUEUE,
        note_running: Callable[[str], None] | None = None,
    ) -> None:
        self.send_event = send_event  # xdist's own sendevent
        self.send_message = send_message
        self.queue_length = queue_length
        self.max_tests = max_tests
        self.max_age_s = max_age_s
        self.note_running = note_running
        self.low_queue = low_queue
        self.events: list[Event] = []
        self.tests = 0
        self.oldest = 0.0
        self.lock = threading.Lock()  # xdist sends `unscheduled` from its receiver thread
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._flush_old, name="lsrb-batch-flush", daemon=True)
        self.thread.start()

    def sendevent(self, name: str, **kwargs: Any) -> None:
        with self.lock:
            if name not in BATCHED:
                self._flush()
                self.send_event(name, **kwargs)
                return
            if name == "logstart" and self.note_running is not None:
                self.note_running(str(kwargs.get("nodeid")))
            if not self.events:
                self.oldest = time.monotonic()
            self.events.append((name, kwargs))
            if name == "runtest_protocol_complete":
                self.tests += 1
                if self.tests >= self.max_tests or self.queue_length() <= self.low_queue:
                    self._flush()

    def flush(self) -> None:
        with self.lock:
            self._flush()

    def close(self) -> None:
        self.closed.set()
        self.flush()

    def _flush(self) -> None:
        events = self.events
        if not events:
            return
        self.events = []
        self.tests = 0
        try:
            blob = pack(events)
        except Exception:  # not plain data: send as xdist would (and fail where it fails)
            for name, kwargs in events:
                self.send_event(name, **kwargs)
            return
        self.send_message((BATCH_EVENT, {"events": blob}))

    def _flush_old(self) -> None:
        while not self.closed.wait(self.max_age_s / 2):
            if self.events and time.monotonic() - self.oldest >= self.max_age_s:
                self.flush()
