"""Whose `lsrb_adapter` fixture a suite's tests get: pytest-lsrb's own, or a user's override.

pytest gives a test the fixture defined closest to it: a conftest.py in the suite's folder (or
above it) overrides ours; among plugins the one registered last wins. Ours is registered from its
entry point, after every `-p` plugin, so a `lsrb_adapter` given with `-p` never takes effect:
that is said, not ignored. An override that does take effect becomes part of the run's identity
(where it is defined and a hash of that file: its adapter class and settings), so its runs are
not mistaken for runs of the adapter the options name.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.session.seams import is_fixture

FIXTURE = "lsrb_adapter"


def _file(plugin: Any) -> Path | None:
    name = getattr(plugin, "__file__", None)
    return Path(name).resolve() if isinstance(name, str) else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def adapter_identity(
    plugins: Sequence[tuple[str, Any]], ours: ModuleType, suite_root: Path
) -> dict[str, str]:
    """The identity entries of the `lsrb_adapter` override the suite's tests get ({} for ours).

    `plugins`: (name, plugin) in registration order (`pluginmanager.list_name_plugin()`).
    """
    order = [plugin for _, plugin in plugins]
    mine = order.index(ours) if ours in order else len(order)
    suite_root = suite_root.resolve()
    closest: tuple[int, Path] | None = None  # (depth, file) of the nearest conftest override
    plugin_override: tuple[str, Path | None] | None = None
    for position, (name, plugin) in enumerate(plugins):
        if plugin is ours or not is_fixture(getattr(plugin, FIXTURE, None)):
            continue
        path = _file(plugin)
        if path is not None and path.name == "conftest.py":
            if path.parent == suite_root or path.parent in suite_root.parents:
                depth = len(path.parent.parts)
                if closest is None or depth > closest[0]:
                    closest = (depth, path)
            continue
        shown = getattr(plugin, "__name__", name)
        if position < mine:
            raise LsrbUsageError(
                f"the {FIXTURE} fixture of plugin '{shown}' cannot take effect: pytest-lsrb's own "
                f"{FIXTURE}, registered after every -p plugin, overrides it; define it in a "
                f"conftest.py in the suite's folder (or load that module from one with pytest_plugins)."
            )
        plugin_override = (shown, path)
    if closest is not None:
        path = closest[1]
        where = os.path.relpath(path, suite_root).replace(os.sep, "/")
        return {"adapter": f"{where}::{FIXTURE}", "adapter_source_sha256": _sha256(path)}
    if plugin_override is not None:
        shown, path = plugin_override
        digest = _sha256(path) if path is not None and path.is_file() else ""
        return {"adapter": f"{shown}::{FIXTURE}", "adapter_source_sha256": digest}
    return {}


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
