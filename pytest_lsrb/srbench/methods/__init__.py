"""Discovery methods: `--lsrb-sr-method` value -> implementation. A method of a lab's own is a
`DiscoveryMethod` subclass in its own package, named by an entry point of `pytest_lsrb.methods`
or a "pkg.mod:Class" spec (docs/extending.md): nothing here is edited; the built-ins are listed
here.

Light on purpose: `lsrb list` reads `METHODS` without importing a method (or sympy, which their
equations need); `DiscoveryMethod` and the rest load on first use."""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from pytest_lsrb.core.registry import METHODS_GROUP, Registry, refuse_unfit

if TYPE_CHECKING:
    from pytest_lsrb.srbench.methods.base import TASK_NAME, DiscoveryMethod, DiscoveryResult

# `--lsrb-sr-method NAME`: a built-in, an entry point of `pytest_lsrb.methods`, or a spec; imported
# only when chosen.
METHODS = Registry(
    {
        "direct": "pytest_lsrb.srbench.methods.llmsr:DirectMethod",
        "llmsr": "pytest_lsrb.srbench.methods.llmsr:LLMSRMethod",
        "lasr": "pytest_lsrb.srbench.methods.lasr:LaSRMethod",
        "sga": "pytest_lsrb.srbench.methods.sga:SGAMethod",
        "direct-expression": "pytest_lsrb.srbench.methods.expression:DirectExpressionMethod",
    },
    group=METHODS_GROUP,
    what="method",
    where="--lsrb-sr-method",
)


@cache
def get_method(name: str) -> DiscoveryMethod:
    """The method `--lsrb-sr-method` names (one instance per name for the process); one sentence
    for a name that loads no `DiscoveryMethod` subclass."""
    from pytest_lsrb.srbench.methods.base import DiscoveryMethod

    cls = METHODS.load(name)
    refuse_unfit(cls, DiscoveryMethod, where=METHODS.where, name=name)
    method: DiscoveryMethod = cls()
    return method


__all__ = ["METHODS", "TASK_NAME", "DiscoveryMethod", "DiscoveryResult", "get_method"]

_FROM_BASE = frozenset({"TASK_NAME", "DiscoveryMethod", "DiscoveryResult"})


def __getattr__(name: str) -> Any:
    if name in _FROM_BASE:
        return getattr(importlib.import_module("pytest_lsrb.srbench.methods.base"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
