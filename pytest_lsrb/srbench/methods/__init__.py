"""Discovery methods: `--lsrb-sr-method` value -> implementation. Add one by adding a module
that satisfies `DiscoveryMethod` and a line here."""

from __future__ import annotations

from functools import cache

from pytest_lsrb.core.registry import METHODS_GROUP, Registry
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
    method: DiscoveryMethod = METHODS.load(name)()
    return method


__all__ = ["METHODS", "TASK_NAME", "DiscoveryMethod", "DiscoveryResult", "get_method"]
