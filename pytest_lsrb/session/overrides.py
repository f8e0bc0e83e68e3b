"""Whose `lsrb_adapter` fixture a suite's tests get: pytest-lsrb's own, or a user's override.

pytest gives a test the fixture defined closest to it: a conftest.py in the suite's folder (or
above it) overrides ours; among plugins the one registered last wins. Ours is registered from its
entry point, after every `-p` plugin, so a `lsrb_adapter` given with `-p` never takes effect:
that is said, not ignored. An override that does take effect becomes part of the run's identity,
so its runs are not mistaken for runs of the adapter the options name: where it is defined and a
hash of that file, and (`made_for_identity`) the adapter's class and a hash of its settings, from
an adapter the controller makes with the override before the run starts (as it makes the named
adapter to check it), when the fixture asks for nothing but `lsrb_suite_run` and `pytestconfig`.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.session.seams import fixture_function, is_fixture

FIXTURE = "lsrb_adapter"
# The run identity's entries for a user's adapter (`identity_of`; `Override.identity` the first two).
IDENTITY_KEYS = ("adapter", "adapter_fixture", "adapter_source_sha256", "adapter_settings_sha256")
# What the controller can hand an override it calls before the run starts (fixture name: value).
GIVEN = ("lsrb_suite_run", "pytestconfig")


def _file(plugin: Any) -> Path | None:
    name = getattr(plugin, "__file__", None)
    return Path(name).resolve() if isinstance(name, str) else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Override:
    """A user's `lsrb_adapter` that the suite's tests get."""

    where: str  # `conftest.py::lsrb_adapter` (suite-relative), or `<plugin>::lsrb_adapter`
    source_sha256: str  # of the defining file ("" when it has none)
    fixture: Any  # the fixture definition

    def identity(self) -> dict[str, str]:
        """The run's identity entries when no adapter could be made before the run: the file."""
        return {"adapter": self.where, "adapter_source_sha256": self.source_sha256}


def find_override(plugins: Sequence[tuple[str, Any]], ours: ModuleType, suite_root: Path) -> Override | None:
    """The `lsrb_adapter` override the suite's tests get (None for ours).

    `plugins`: (name, plugin) in registration order (`pluginmanager.list_name_plugin()`).
    """
    order = [plugin for _, plugin in plugins]
    mine = order.index(ours) if ours in order else len(order)
    suite_root = suite_root.resolve()
    closest: tuple[int, Path, Any] | None = None  # (depth, file, fixture) of the nearest conftest
    plugin_override: tuple[str, Path | None, Any] | None = None
    for position, (name, plugin) in enumerate(plugins):
        fixture = getattr(plugin, FIXTURE, None)
        if plugin is ours or not is_fixture(fixture):
            continue
        path = _file(plugin)
        if path is not None and path.name == "conftest.py":
            if path.parent == suite_root or path.parent in suite_root.parents:
                depth = len(path.parent.parts)
                if closest is None or depth > closest[0]:
                    closest = (depth, path, fixture)
            continue
        shown = getattr(plugin, "__name__", name)
        if position < mine:
            raise LsrbUsageError(
                f"the {FIXTURE} fixture of plugin '{shown}' cannot take effect: pytest-lsrb's own "
                f"{FIXTURE}, registered after every -p plugin, overrides it; define it in a "
                f"conftest.py in the suite's folder (or load that module from one with pytest_plugins)."
            )
        plugin_override = (shown, path, fixture)
    if closest is not None:
        _, path, fixture = closest
        where = os.path.relpath(path, suite_root).replace(os.sep, "/")
        return Override(f"{where}::{FIXTURE}", _sha256(path), fixture)
    if plugin_override is not None:
        shown, found, fixture = plugin_override
        digest = _sha256(found) if found is not None and found.is_file() else ""
        return Override(f"{shown}::{FIXTURE}", digest, fixture)
    return None


def adapter_identity(
    plugins: Sequence[tuple[str, Any]], ours: ModuleType, suite_root: Path
) -> dict[str, str]:
    """The identity entries of the file defining the override the suite's tests get ({} for ours)."""
    found = find_override(plugins, ours, suite_root)
    return found.identity() if found is not None else {}


@dataclass
class Made:
    """An adapter made with an override outside pytest's fixtures, and how to end it as pytest would."""

    adapter: Any
    finish: Callable[[], None]


def made_for_identity(override: Override, given: Mapping[str, Any]) -> Made | None:
    """Call the override's fixture function as pytest would for a session's first test, with the
    fixtures in `given` (`GIVEN`). None when it asks for another fixture (it cannot be made here).
    A fixture that yields is ended by `Made.finish` (its teardown runs, as at the session's end);
    one that returns its adapter is left as it is (it may hand every caller one shared object)."""
    function = fixture_function(override.fixture)
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    wanted = [p.name for p in parameters if p.default is inspect.Parameter.empty]
    if any(name not in given for name in wanted) or inspect.iscoroutinefunction(function):
        return None
    try:
        if not inspect.isgeneratorfunction(function):
            return Made(function(**{name: given[name] for name in wanted}), lambda: None)
        steps = function(**{name: given[name] for name in wanted})
        adapter = next(steps)
    except LsrbUsageError:
        raise
    except Exception as exc:  # the user's code: one sentence, before any model call
        raise LsrbUsageError(
            f"{override.where}: making the adapter to name the run failed: {type(exc).__name__}: {exc}"
        ) from None

    def finish() -> None:
        try:
            next(steps)
        except StopIteration:
            return
        steps.close()  # a second yield: pytest would refuse it; end it here

    return Made(adapter, finish)


def identity_of(override: Override, made: Made) -> dict[str, str]:
    """The run's identity entries of an override whose adapter was made: its class names the run
    (`adapter`), the fixture and file stay (`adapter_fixture`, `adapter_source_sha256`), and a hash
    of its settings (`adapter_settings_sha256`) tells two settings of one class apart."""
    fingerprint = adapter_fingerprint(made.adapter)
    return {
        "adapter": fingerprint["adapter_class"],
        "adapter_fixture": override.where,
        "adapter_source_sha256": override.source_sha256,
        "adapter_settings_sha256": fingerprint["adapter_settings_sha256"],
    }


def adapter_fingerprint(adapter: Any) -> dict[str, str]:
    """A custom adapter as its records name it: its class, and a hash of its settings (what its
    `identity()` says, which never holds a secret)."""
    import json

    inner = getattr(adapter, "inner", adapter)
    cls = type(inner)
    try:
        settings = json.dumps(inner.identity(), sort_keys=True, default=str)
    except Exception as exc:  # a user's adapter: say what went wrong instead of failing the run
        settings = f"identity() failed: {type(exc).__name__}"
    return {
        "adapter_class": f"{cls.__module__}.{cls.__qualname__}",
        "adapter_settings_sha256": hashlib.sha256(settings.encode()).hexdigest(),
    }
