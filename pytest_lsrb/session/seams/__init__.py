"""Our seams around xdist and pytest: the one switch for everything that leans on their private names.

The fast paths use names neither project promises, and every use of one is in this package:
xdist's `WorkerController.process_from_remote` and `WorkerInteractor.sendevent` (batched
messages, `transport`), a `LoadScheduling` subclass calling `_send_tests` (`scheduling`), the
scheduler's `node2pending` (blaming the test a crashed worker ran, `transport.blame_running`), the
worker's `torun` queue and `nextitem_index` (`worker_queue`: which tests to prefetch for), pytest's
`terminal._tw` (`terminal_writer`: progress lines) and `_pytest.config.console_main` /
`_console_main` (`run_from_command_line`: heap freezing), and pytest's report keeping
(`reports`: `_progress_nodeids_reported`, the subtests plugin's key, an item's `stash._storage`,
which only save memory). `--lsrb-fastpath off` turns every one of them off: the run then uses
public hooks only, with the same records, only slower and with more memory (an xdist worker then
starts no attempt ahead of its running test). None patches `os` or another module of Python's
own. Three uses have no public way and are made either way:
`_pytest.python._ascii_escaped_by_config` (`id_escaper`: which test a crashed worker ran),
`_pytestfixturefunction` (`is_fixture`, pytest < 8.4 only: whose `lsrb_adapter` a test gets) and
`_pytest.junitxml.xml_key` (`junit_xml`: where the gate's JUnit case goes, left out where pytest
lacks it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

FASTPATH_OPTION = "lsrb_fastpath"


def fastpath(config: Any) -> bool:
    """True unless the run asked for public hooks only (`--lsrb-fastpath off`)."""
    getoption = getattr(config, "getoption", None)
    if not callable(getoption):
        return True
    return bool(getoption(FASTPATH_OPTION, "on") != "off")


def terminal_writer(terminal: Any) -> Any:
    """pytest's terminal writer (`terminal._tw`), so a line goes between the dots without pytest
    printing the test file's path again; None with `--lsrb-fastpath off` or where it has none."""
    if terminal is None or not fastpath(getattr(terminal, "config", None)):
        return None
    writer = getattr(terminal, "_tw", None)
    return writer if hasattr(writer, "width_of_current_line") else None


def run_from_command_line() -> bool:
    """True inside pytest's command-line entry point (what `pytest` and `python -m pytest` run,
    and exit with: `console_main`, in pytest 9.1 `_console_main`; "not meant for programmable
    use", says pytest), False under `pytest.main`. An entry point of another name is not found:
    the caller takes the slower, always-safe way."""
    from _pytest import config

    entries = {getattr(config, name, None) for name in ("console_main", "_console_main")}
    codes = {entry.__code__ for entry in entries if callable(entry) and hasattr(entry, "__code__")}
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


def worker_queue(config: Any) -> Callable[[int], list[int] | None] | None:
    """Under xdist, with the fast paths on: a function giving the indexes of up to `n + 1` tests
    this worker runs next (the one xdist holds as next, then its `torun` queue, read under its
    lock without changing it), or None where this xdist's worker is shaped otherwise. None with
    `--lsrb-fastpath off`."""
    if not fastpath(config):
        return None
    found: list[Any] = []

    def interactor() -> Any:
        if not found:
            plugins = config.pluginmanager.get_plugins()
            found.append(
                next(
                    (p for p in plugins if type(p).__name__ == "WorkerInteractor" and hasattr(p, "torun")),
                    None,
                )
            )
        return found[0]

    def queued(n: int) -> list[int] | None:
        plugin = interactor()
        if plugin is None:
            return None
        pending: list[int] = []
        nxt = getattr(plugin, "nextitem_index", None)
        if isinstance(nxt, int):
            pending.append(nxt)
        try:
            with plugin.torun.lock() as queue:
                pending.extend(i for i in list(queue)[: n + 1] if isinstance(i, int))
        except Exception:  # a future xdist may change its queue; prefetch is an optimisation
            pending = pending[:1]
        return pending

    return queued


def id_escaper(config: Any) -> Callable[[str], str]:
    """How pytest escapes a parameter id in a test's node id (`_ascii_escaped_by_config`), to find
    which test a crashed worker ran; with a pytest without it, the id as it is (an id with
    non-ASCII text is then not found, and xdist's own crash report stands)."""
    try:
        from _pytest.python import _ascii_escaped_by_config
    except ImportError:
        return lambda text: text
    return lambda text: _ascii_escaped_by_config(text, config)


def junit_xml(config: Any) -> Any:
    """pytest's junitxml plugin object of this session (under `_pytest.junitxml.xml_key`), where
    `tools.junit` adds the gate's case; None when no XML is written or pytest lacks the key."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return None
    return config.stash.get(xml_key, None)


def fixture_function(obj: Any) -> Callable[..., Any]:
    """The function a fixture definition was made from: pytest >= 8.4's FixtureFunctionDefinition
    and older pytest's wrapper both keep it as `__wrapped__` (`functools.update_wrapper`)."""
    function: Callable[..., Any] = getattr(obj, "__wrapped__", obj)
    return function


def is_fixture(obj: Any) -> bool:
    """A pytest fixture definition: pytest >= 8.4 wraps the function in a
    FixtureFunctionDefinition; older ones mark it with the private `_pytestfixturefunction`."""
    return type(obj).__name__ == "FixtureFunctionDefinition" or hasattr(obj, "_pytestfixturefunction")
