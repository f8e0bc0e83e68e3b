"""Discovery methods: `--lsrb-sr-method` value -> implementation. Add one by adding a module
that satisfies `DiscoveryMethod` and a line here."""

from __future__ import annotations

from functools import cache

from pytest_lsrb.core.registry import load_class
from pytest_lsrb.srbench.methods.base import TASK_NAME, DiscoveryMethod, DiscoveryResult

# name -> "module:Class"; imported lazily.
METHODS: dict[str, str] = {
    "direct": "pytest_lsrb.srbench.methods.llmsr:DirectMethod",
    "llmsr": "pytest_lsrb.srbench.methods.llmsr:LLMSRMethod",
    "lasr": "pytest_lsrb.srbench.methods.lasr:LaSRMethod",
    "sga": "pytest_lsrb.srbench.methods.sga:SGAMethod",
    "direct-expression": "pytest_lsrb.srbench.methods.expression:DirectExpressionMethod",
}


@cache
def get_method(name: str) -> DiscoveryMethod:
    method: DiscoveryMethod = load_class(METHODS, name, what="method", where="--lsrb-sr-method")()
    return method


__all__ = ["METHODS", "TASK_NAME", "DiscoveryMethod", "DiscoveryResult", "get_method"]
