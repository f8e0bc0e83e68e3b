"""Plug-point registries: an option value names an implementation as "module:Class".

Adapters, verifiers, tasks and discovery methods each keep a dict of these, so adding one means
adding a module and a line; implementations are imported only when chosen, so a run never pays
for another plug-in's imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError

# Task name -> "module:Class" (the `[suite] task` of a suite.toml); engine.task's registry, kept
# here so the mock adapter can ask a task for its baseline answer without importing up a layer.
TASKS: dict[str, str] = {
    "goal_to_tactic_proposal_v1": "pytest_lsrb.tactic.task:TacticTask",
    "llm_srbench": "pytest_lsrb.srbench.task:SrbenchTask",
}


def load_class(registry: Mapping[str, str], name: str, *, what: str, where: str) -> Any:
    """The class registered as `name`, or a usage error naming `where` and the known names."""
    try:
        target = registry[name]
    except KeyError:
        known = ", ".join(sorted(registry))
        raise LsrbUsageError(f"{where}: unknown {what} '{name}' (known: {known}).") from None
    module_name, cls_name = target.split(":")
    return getattr(importlib.import_module(module_name), cls_name)
