"""pytest-lsrb: evaluate LLMs on hard reasoning benchmarks as a pytest plugin.

The public API: what a suite test, a conftest.py overriding `lsrb_adapter`/`lsrb_verifier`, or a
new task or verifier needs. Names load on first use, so the pytest plugin (which every pytest
session imports) stays light. To run a suite from Python (a notebook, a script): `pytest_lsrb.api`.

PYTEST_DONT_REWRITE: pytest marks every top-level package of a distribution with a `pytest11`
entry point for assertion rewriting, and warns (PytestAssertRewriteWarning) when one is already
imported. `lsrb run`, `python -m lean_sorry_repos_benchmark` and `pytest_lsrb.api.run` import this
package before they call `pytest.main`, so an installed wheel warned on every run. Nothing here
needs rewritten asserts (test outcomes come from `Attempt.check`, not from asserts in the engine);
the marker tells pytest so, and its check skips the warning (`AssertionRewritingHook.mark_rewrite`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from pytest_lsrb.adapters.base import Adapter, AdapterConfig, GenerationRequest, GenerationResult, Message
    from pytest_lsrb.core.errors import LsrbUsageError
    from pytest_lsrb.core.selection import Case
    from pytest_lsrb.engine.metric_declaration import Metric, every
    from pytest_lsrb.engine.outcomes import answered, judged
    from pytest_lsrb.engine.records import AttemptRecord
    from pytest_lsrb.engine.runner import Attempt
    from pytest_lsrb.engine.task import AttemptContext, Judgement, Task
    from pytest_lsrb.engine.verifier import VerificationResult, Verifier, VerifierConfig

_EXPORTS = {
    "Adapter": "pytest_lsrb.adapters.base",
    "AdapterConfig": "pytest_lsrb.adapters.base",
    "GenerationRequest": "pytest_lsrb.adapters.base",
    "GenerationResult": "pytest_lsrb.adapters.base",
    "Message": "pytest_lsrb.adapters.base",
    "LsrbUsageError": "pytest_lsrb.core.errors",
    "Case": "pytest_lsrb.core.selection",
    "AttemptRecord": "pytest_lsrb.engine.records",
    "Metric": "pytest_lsrb.engine.metric_declaration",
    "every": "pytest_lsrb.engine.metric_declaration",
    "answered": "pytest_lsrb.engine.outcomes",
    "judged": "pytest_lsrb.engine.outcomes",
    "Attempt": "pytest_lsrb.engine.runner",
    "AttemptContext": "pytest_lsrb.engine.task",
    "Judgement": "pytest_lsrb.engine.task",
    "Task": "pytest_lsrb.engine.task",
    "VerificationResult": "pytest_lsrb.engine.verifier",
    "Verifier": "pytest_lsrb.engine.verifier",
    "VerifierConfig": "pytest_lsrb.engine.verifier",
}

__all__ = [
    "Adapter",
    "AdapterConfig",
    "Attempt",
    "AttemptContext",
    "AttemptRecord",
    "Case",
    "GenerationRequest",
    "GenerationResult",
    "Judgement",
    "LsrbUsageError",
    "Message",
    "Metric",
    "Task",
    "VerificationResult",
    "Verifier",
    "VerifierConfig",
    "__version__",
    "answered",
    "every",
    "judged",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_lsrb' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
