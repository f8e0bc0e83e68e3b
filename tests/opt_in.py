"""Which of the project's tests are opt-in: the end-to-end ones, found by what they do.

A test is end-to-end when it, or a fixture it uses, starts a process: its code, or code it calls
that lives in tests/ (helpers, fakes, launchers, fixtures), calls `subprocess`, `multiprocessing`,
`asyncio`'s subprocesses, `os.system` / `os.spawn*` / `os.fork`, or pytester's ways of running
pytest in a child (`runpytest_subprocess`, `spawn_pytest`, `run`, `popen`). A test marked `slow`
or `llama` by hand is opt-in too. These are ~11 % of the tests and ~80 % of their CPU time (each
child process pays Python's start-up and the plugins' imports); the default run leaves them out
and CI runs them (`--run-slow` or `LSRB_RUN_SLOW=1`). A test marked `smoke` stays in the default
run whatever it does: one end-to-end test per feature, so the default run still starts each
feature's process once.

Found from the code, not from a list kept by hand: a new test that starts a process is opt-in
without anyone remembering to mark it. The walk reads code objects (names each function uses),
so it follows calls through names only: a process started by the package's own code (not the
test's) is not seen, and such a test stays in the default run unless it is marked.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
ENV = "LSRB_RUN_SLOW"
OPTION = "--run-slow"
OPT_IN_MARKERS = ("slow", "llama")
KEEP_MARKER = "smoke"

# Modules whose every use starts a process (a name imported from them: `from subprocess import run`).
PROCESS_MODULES = ("subprocess", "multiprocessing", "pty")
# Attribute names that start a process wherever they appear.
PROCESS_CALLS = frozenset(
    {"runpytest_subprocess", "spawn_pytest", "create_subprocess_exec", "create_subprocess_shell"}
)
# ...and ones that do only on `os` (`os.system`) or on pytester (`pytester.run`, `.popen`).
OS_CALLS = frozenset({"system", "popen", "fork", "forkpty", "spawnv", "spawnve", "spawnl", "execv", "execve"})
PYTESTER_CALLS = frozenset({"run", "popen", "spawn"})
PYTESTER_NAMES = frozenset({"pytester", "testdir"})


def run_slow(config: pytest.Config) -> bool:
    return bool(config.getoption("run_slow", False)) or os.environ.get(ENV, "") not in ("", "0")


def opt_in(item: pytest.Item) -> bool:
    """The test is left out of the default run (see the module's docstring)."""
    if item.get_closest_marker(KEEP_MARKER) is not None:
        return False
    if any(item.get_closest_marker(name) is not None for name in OPT_IN_MARKERS):
        return True
    return any(starts_process(f) for f in functions_of(item))


def named_on_command_line(item: pytest.Item, config: pytest.Config) -> bool:
    """The test was asked for by its node id (`path::test`): a user who names it wants it run."""
    return any("::" in arg and item.nodeid.startswith(node_id(arg, config)) for arg in config.args)


def node_id(arg: str, config: pytest.Config) -> str:
    path, _, rest = arg.partition("::")
    try:
        rel = Path(path).resolve().relative_to(config.rootpath)
    except ValueError:
        return arg
    return f"{rel.as_posix()}::{rest}"


def functions_of(item: pytest.Item) -> Iterable[Any]:
    """The test's own function and the functions of every fixture it uses."""
    function = getattr(item, "function", None)
    if function is not None:
        yield function
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        for fixturedef in defs:
            yield fixturedef.func


_seen: dict[types.CodeType, bool] = {}


def starts_process(obj: Any) -> bool:
    """`obj` (a function or class of the tests' own code) starts a process, directly or through
    a function or class of the tests' own code it names."""
    return any(code_starts_process(code, globals_) for code, globals_ in codes_of(obj))


def codes_of(obj: Any) -> Iterable[tuple[types.CodeType, dict[str, Any]]]:
    obj = inner_test(obj)
    if isinstance(obj, type):
        if ours(obj):
            for member in vars(obj).values():
                yield from codes_of(getattr(member, "__func__", member))
        return
    code = getattr(obj, "__code__", None)
    if isinstance(code, types.CodeType) and ours(obj):
        yield code, getattr(obj, "__globals__", {})


def inner_test(obj: Any) -> Any:
    """The function under hypothesis' `@given` and other wrappers."""
    hypothesis = getattr(obj, "hypothesis", None)
    obj = getattr(hypothesis, "inner_test", obj)
    while hasattr(obj, "__wrapped__"):
        obj = obj.__wrapped__
    return obj


def ours(obj: Any) -> bool:
    """Defined in a file under tests/ (the package's and libraries' code is not followed)."""
    code = getattr(obj, "__code__", None)
    if isinstance(code, types.CodeType):
        filename = code.co_filename
    else:
        module = sys.modules.get(getattr(obj, "__module__", "") or "")
        filename = getattr(module, "__file__", None) or ""
    return bool(filename) and Path(filename).is_relative_to(TESTS)


def code_starts_process(code: types.CodeType, globals_: dict[str, Any]) -> bool:
    if code in _seen:
        return _seen[code]
    _seen[code] = False  # a recursive call is answered by the rest of the walk
    found = direct(code, globals_) or any(
        code_starts_process(const, globals_) for const in code.co_consts if isinstance(const, types.CodeType)
    )
    if not found:
        for name in code.co_names:
            target = globals_.get(name)
            if target is not None and not isinstance(target, types.ModuleType) and starts_process(target):
                found = True
                break
    _seen[code] = found
    return found


def direct(code: types.CodeType, globals_: dict[str, Any]) -> bool:
    names = set(code.co_names)
    if names & PROCESS_CALLS:
        return True
    if names & OS_CALLS and globals_.get("os") is os and "os" in names:
        return True
    if names & PYTESTER_CALLS and PYTESTER_NAMES & (set(code.co_varnames) | set(code.co_freevars)):
        return True
    return any(module_of(globals_.get(name)).split(".")[0] in PROCESS_MODULES for name in names)


def module_of(target: Any) -> str:
    """The module a global is (`import subprocess`) or comes from (`from subprocess import run`)."""
    if isinstance(target, types.ModuleType):
        return target.__name__
    module = getattr(target, "__module__", None)
    return module if isinstance(module, str) else ""


# The plugin's hooks (tests/conftest.py imports them; `-p opt_in` in a pytester run).


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="store_true",
        dest="run_slow",
        help=f"also run the end-to-end tests (they start processes or servers; also {ENV}=1)",
    )


@pytest.hookimpl(tryfirst=True)  # before `-m` reads the `slow` marks this adds
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks every opt-in test `slow` (so `-m slow` selects them) and, unless asked to run them,
    deselects them."""
    keep, left_out = [], []
    for item in items:
        if opt_in(item):
            item.add_marker(pytest.mark.slow)
            if not run_slow(config) and not named_on_command_line(item, config):
                left_out.append(item)
                continue
        keep.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
        config.stash[LEFT_OUT] = len(left_out)
        if hasattr(config.option, "warn_unused_snapshots"):
            # a left-out test's snapshot is not "unused": syrupy would exit 1 on it
            config.option.warn_unused_snapshots = True


LEFT_OUT = pytest.StashKey[int]()


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    n = config.stash.get(LEFT_OUT, 0)
    if not n:
        return []
    return [
        f"{n} end-to-end tests (they start processes or servers) left out; run them with "
        f"{OPTION} or {ENV}=1, as CI does"
    ]
