"""pytest-lsrb: evaluate LLMs on hard reasoning benchmarks as a pytest plugin.

This package's names are the public plug-in API, stable from 0.1.0 on (docs/extending.md, "The
public API"): everything a suite's test, a benchmark family (task, row model, verifier, metric,
options), an adapter and an llm_srbench discovery method need, from this one place. A name is
added here, never renamed or removed without a deprecation noted in docs/changelog.md; the
modules behind them are internal and move as the code needs (`tests/test_public_api.py` holds
`examples/` to these names alone). Names load on first use, so the pytest plugin (which every
pytest session imports) stays light. To run a suite from Python (a notebook, a script):
`pytest_lsrb.api`.

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
    from pytest_lsrb.adapters.base import (
        Adapter,
        AdapterConfig,
        GenerationRequest,
        GenerationResult,
        Message,
        SamplingConfig,
    )
    from pytest_lsrb.adapters.http import (
        Reply,
        ResponseError,
        bad_response,
        error_in_success,
        reply_string,
        token_usage,
    )
    from pytest_lsrb.adapters.http_adapter import HttpAdapter
    from pytest_lsrb.core.errors import LsrbUsageError
    from pytest_lsrb.core.rows import stream_jsonl
    from pytest_lsrb.core.selection import Case
    from pytest_lsrb.engine.metric_declaration import Metric, every
    from pytest_lsrb.engine.option_spec import (
        Bounds,
        Option,
        OptionSet,
        integer,
        number,
        optional_integer,
        optional_number,
    )
    from pytest_lsrb.engine.outcomes import answered, judged
    from pytest_lsrb.engine.records import AttemptFields, AttemptRecord
    from pytest_lsrb.engine.runner import Attempt
    from pytest_lsrb.engine.suite import SuiteSpec
    from pytest_lsrb.engine.task import AttemptContext, Judgement, SummaryAccumulator, Task
    from pytest_lsrb.engine.verifier import (
        Domain,
        VerificationResult,
        Verifier,
        VerifierConfig,
        verification_fields,
    )
    from pytest_lsrb.equations import EquationError, Program, parse_equation
    from pytest_lsrb.srbench.data.problem import Problem
    from pytest_lsrb.srbench.fitting.fit import fit_program
    from pytest_lsrb.srbench.methods.base import DiscoveryMethod, DiscoveryResult

# name -> the module that defines it (imported when the name is first used)
_EXPORTS = {
    # a suite's test
    "Attempt": "pytest_lsrb.engine.runner",
    "Case": "pytest_lsrb.core.selection",
    "LsrbUsageError": "pytest_lsrb.core.errors",
    # a task and its rows
    "Task": "pytest_lsrb.engine.task",
    "AttemptContext": "pytest_lsrb.engine.task",
    "Judgement": "pytest_lsrb.engine.task",
    "SummaryAccumulator": "pytest_lsrb.engine.task",
    "SuiteSpec": "pytest_lsrb.engine.suite",
    "AttemptFields": "pytest_lsrb.engine.records",
    "AttemptRecord": "pytest_lsrb.engine.records",
    "stream_jsonl": "pytest_lsrb.core.rows",
    # a verifier
    "Verifier": "pytest_lsrb.engine.verifier",
    "Domain": "pytest_lsrb.engine.verifier",
    "VerifierConfig": "pytest_lsrb.engine.verifier",
    "VerificationResult": "pytest_lsrb.engine.verifier",
    "verification_fields": "pytest_lsrb.engine.verifier",
    # a metric
    "Metric": "pytest_lsrb.engine.metric_declaration",
    "every": "pytest_lsrb.engine.metric_declaration",
    "answered": "pytest_lsrb.engine.outcomes",
    "judged": "pytest_lsrb.engine.outcomes",
    # options
    "Option": "pytest_lsrb.engine.option_spec",
    "OptionSet": "pytest_lsrb.engine.option_spec",
    "Bounds": "pytest_lsrb.engine.option_spec",
    "integer": "pytest_lsrb.engine.option_spec",
    "number": "pytest_lsrb.engine.option_spec",
    "optional_integer": "pytest_lsrb.engine.option_spec",
    "optional_number": "pytest_lsrb.engine.option_spec",
    # an adapter
    "Adapter": "pytest_lsrb.adapters.base",
    "AdapterConfig": "pytest_lsrb.adapters.base",
    "GenerationRequest": "pytest_lsrb.adapters.base",
    "GenerationResult": "pytest_lsrb.adapters.base",
    "Message": "pytest_lsrb.adapters.base",
    "SamplingConfig": "pytest_lsrb.adapters.base",
    "HttpAdapter": "pytest_lsrb.adapters.http_adapter",
    "Reply": "pytest_lsrb.adapters.http",
    "ResponseError": "pytest_lsrb.adapters.http",
    "bad_response": "pytest_lsrb.adapters.http",
    "error_in_success": "pytest_lsrb.adapters.http",
    "reply_string": "pytest_lsrb.adapters.http",
    "token_usage": "pytest_lsrb.adapters.http",
    # an llm_srbench discovery method
    "DiscoveryMethod": "pytest_lsrb.srbench.methods.base",
    "DiscoveryResult": "pytest_lsrb.srbench.methods.base",
    "Problem": "pytest_lsrb.srbench.data.problem",
    "Program": "pytest_lsrb.equations",
    "EquationError": "pytest_lsrb.equations",
    "parse_equation": "pytest_lsrb.equations",
    "fit_program": "pytest_lsrb.srbench.fitting.fit",
}

__all__ = [
    "Adapter",
    "AdapterConfig",
    "Attempt",
    "AttemptContext",
    "AttemptFields",
    "AttemptRecord",
    "Bounds",
    "Case",
    "DiscoveryMethod",
    "DiscoveryResult",
    "Domain",
    "EquationError",
    "GenerationRequest",
    "GenerationResult",
    "HttpAdapter",
    "Judgement",
    "LsrbUsageError",
    "Message",
    "Metric",
    "Option",
    "OptionSet",
    "Problem",
    "Program",
    "Reply",
    "ResponseError",
    "SamplingConfig",
    "SuiteSpec",
    "SummaryAccumulator",
    "Task",
    "VerificationResult",
    "Verifier",
    "VerifierConfig",
    "__version__",
    "answered",
    "bad_response",
    "error_in_success",
    "every",
    "fit_program",
    "integer",
    "judged",
    "number",
    "optional_integer",
    "optional_number",
    "parse_equation",
    "reply_string",
    "stream_jsonl",
    "token_usage",
    "verification_fields",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_lsrb' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
