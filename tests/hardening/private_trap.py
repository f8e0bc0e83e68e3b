"""A pytest plugin (`-p private_trap`) that notes every time pytest_lsrb's own code reads or sets
one of the private xdist/pytest names `session.seams` lists, in the file `$LSRB_PRIVATE_TRAP`.

Loaded into a suite run (and, as `-p` travels, into its xdist workers) by
tests/hardening/test_xdist_batching.py, which checks that `--lsrb-fastpath off` leaves the file
empty. Only accesses whose calling frame is a `pytest_lsrb` module count: xdist and pytest use
their own names freely. A note is written (not only raised) so an access inside a broad
`except` still shows.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import pytest

PRIVATE = {
    "WorkerController": {"process_from_remote"},
    "WorkerInteractor": {"sendevent", "torun", "nextitem_index"},
    "LoadScheduling": {"node2pending", "_send_tests"},
    "DSession": {"sched"},
    "TerminalReporter": {"_tw", "_progress_nodeids_reported"},
    "Stash": {"_storage"},
}
ENTRY_POINTS = {"console_main", "_console_main"}


def _from_ours(depth: int = 2) -> bool:
    return str(sys._getframe(depth).f_globals.get("__name__", "")).startswith("pytest_lsrb")


def _note(what: str) -> None:
    with open(os.environ["LSRB_PRIVATE_TRAP"], "a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()} {what}\n")


def _trap(cls: type, names: set[str]) -> None:
    if getattr(cls, "_lsrb_trapped", False):
        return
    get, put = cls.__getattribute__, cls.__setattr__

    def __getattribute__(self: Any, name: str) -> Any:
        if name in names and _from_ours():
            _note(f"read {cls.__name__}.{name}")
            if os.environ.get("LSRB_PRIVATE_TRAP_NOTE_ONLY"):  # the canary run: note, go on
                return get(self, name)
            raise AssertionError(f"pytest_lsrb read {cls.__name__}.{name} with --lsrb-fastpath off")
        return get(self, name)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if name in names and _from_ours():
            _note(f"set {cls.__name__}.{name}")
        put(self, name, value)

    cls.__getattribute__ = __getattribute__  # type: ignore[method-assign]
    cls.__setattr__ = __setattr__  # type: ignore[method-assign]
    cls._lsrb_trapped = True  # type: ignore[attr-defined]


class _TrappedModule(types.ModuleType):
    def __getattribute__(self, name: str) -> Any:
        if name in ENTRY_POINTS and _from_ours():
            _note(f"read _pytest.config.{name}")
        return super().__getattribute__(name)


def _trap_classes(objects: list[Any]) -> None:
    for obj in objects:
        for cls in type(obj).__mro__:
            if cls.__name__ in PRIVATE:
                _trap(cls, PRIVATE[cls.__name__])


def _trap_imported() -> None:
    import _pytest.config
    from _pytest.stash import Stash
    from _pytest.terminal import TerminalReporter

    _pytest.config.__class__ = _TrappedModule
    _trap(TerminalReporter, PRIVATE["TerminalReporter"])
    _trap(Stash, PRIVATE["Stash"])
    try:
        from xdist.dsession import DSession
        from xdist.scheduler import LoadScheduling
        from xdist.workermanage import WorkerController
    except ImportError:
        return
    for cls in (DSession, LoadScheduling, WorkerController):
        _trap(cls, PRIVATE[cls.__name__])


_trap_imported()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # a worker's WorkerInteractor comes from the source execnet ran, not from `xdist.remote`
    _trap_classes(config.pluginmanager.get_plugins())
