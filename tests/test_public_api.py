"""One public plug-in API (issue #49, item 4): what a family, a verifier, a metric, an adapter and
a discovery method need is exported from `pytest_lsrb` itself, documented as stable in
docs/extending.md, and the packages in `examples/` (a family, an adapter, a method: written as a
lab would) import pytest-lsrb through it alone. Before, examples/lsrb-mcmath imported 4 modules
that are not the API; a lab's adapter, method and family 17."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lsrb_testing import REPO

import pytest_lsrb

EXAMPLES = REPO / "examples"
EXTENDING = REPO / "docs" / "extending.md"

# The stable names: adding one is a change to this list and to the docs' table; removing or
# renaming one is a breaking change, said in docs/changelog.md.
STABLE = {
    # a suite's test
    "Attempt", "Case", "LsrbUsageError",
    # a task and its rows
    "Task", "AttemptContext", "Judgement", "SummaryAccumulator", "SuiteSpec", "AttemptFields",
    "AttemptRecord", "stream_jsonl",
    # a verifier
    "Verifier", "VerifierConfig", "VerificationResult", "verification_fields", "Domain",
    # a metric
    "Metric", "every", "answered", "judged",
    # options
    "Option", "OptionSet", "Bounds", "integer", "number", "optional_integer", "optional_number",
    # an adapter
    "Adapter", "AdapterConfig", "GenerationRequest", "GenerationResult", "Message", "SamplingConfig",
    "HttpAdapter", "Reply", "ResponseError", "bad_response", "error_in_success", "reply_string",
    "token_usage",
    # an llm_srbench discovery method
    "DiscoveryMethod", "DiscoveryResult", "Problem", "Program", "EquationError", "parse_equation",
    "fit_program",
}  # fmt: skip


def non_public_imports(root: Path) -> list[str]:
    """`file:line module` for each import of pytest-lsrb below `root` that is not `from
    pytest_lsrb import <a public name>`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                found += [f"{where} {a.name}" for a in node.names if a.name.split(".")[0] == "pytest_lsrb"]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pytest_lsrb":
                if node.module != "pytest_lsrb":
                    found.append(f"{where} {node.module}")
                else:
                    found += [f"{where} pytest_lsrb.{a.name}" for a in node.names if a.name not in STABLE]
    return found


def test_the_examples_import_the_public_api_alone() -> None:
    packages = sorted(p.name for p in EXAMPLES.iterdir() if (p / "pyproject.toml").is_file())
    assert packages == ["lsrb-anthropic", "lsrb-mcmath", "lsrb-refine"]  # a family, an adapter, a method
    assert non_public_imports(EXAMPLES) == []


def test_the_check_finds_an_internal_import(tmp_path: Path) -> None:
    (tmp_path / "lab.py").write_text(
        "import pytest_lsrb.core.rows\nfrom pytest_lsrb.engine.suite import SuiteSpec\n"
        "from pytest_lsrb import Task, _EXPORTS\n",
        encoding="utf-8",
    )
    assert non_public_imports(tmp_path) == [
        "lab.py:1 pytest_lsrb.core.rows",
        "lab.py:2 pytest_lsrb.engine.suite",
        "lab.py:3 pytest_lsrb._EXPORTS",
    ]


def test_the_public_names_are_the_stable_ones_and_the_docs_list_each() -> None:
    assert set(pytest_lsrb.__all__) - {"__version__"} == STABLE
    for name in STABLE:
        assert getattr(pytest_lsrb, name) is not None
    section = EXTENDING.read_text(encoding="utf-8").split("## The public API", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(\w+)`", section))
    assert STABLE - listed == set(), "docs/extending.md's API table misses these"
