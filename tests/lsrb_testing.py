"""Test helpers shared across test folders (a module with its own name: several folders have a
conftest.py, so `from conftest import ...` would pick whichever was imported first)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUITES = REPO / "suites"
TACTIC_SUITE = SUITES / "goal_to_tactic_proposal_v1"
SHARED_DATA = REPO.parent / "shared" / "data"


@dataclass
class SuiteResult:
    returncode: int
    stdout: str
    stderr: str
    out_dir: Path

    def attempts(self) -> list[dict[str, Any]]:
        path = self.out_dir / "attempts.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.out_dir / "summary.json").read_text(encoding="utf-8"))
        return data


RunSuite = Callable[..., SuiteResult]


def lsrb(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`lsrb ARGS` in a child process (`python -m pytest_lsrb`), as a user types it in `cwd`; the
    tests' own PYTEST_ADDOPTS is not passed on to the runs it starts."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def pytest_verdict(stdout: str) -> str:
    """pytest's own last line (`== 3 passed, 2 errors in 1.2s ==`): the lines after it are
    pytest-lsrb's (the command that finishes an unfinished run)."""
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    return next((line for line in reversed(lines) if not line.startswith("lsrb: ")), "")


# A suite's conftest.py plugging in a user's own adapter (it overrides the lsrb_adapter fixture)
# with every outcome: a wrong answer (fails), a refused connection (errors), a right one (passes);
# with LSRB_TEST_SLEEP set, each answer takes that many seconds.
SCRIPTED_ADAPTER = """
import os
import time

import pytest
from pytest_lsrb.adapters.base import GenerationResult

SLEEP = float(os.environ.get("LSRB_TEST_SLEEP", "0"))


class Scripted:
    name = "scripted"
    model = "scripted-1"
    default_concurrency = 1
    def check(self): pass
    def identity(self): return {"adapter": self.name}
    def close(self): pass
    def generate(self, request):
        time.sleep(SLEEP)
        goal = request.context["goal_text"]
        if "∧" in goal:
            return GenerationResult(text="sorry", latency_ms=1.0)
        if "∨" in goal:
            return GenerationResult.failure("connection", "connection refused", 2.0)
        return GenerationResult(text="simp", latency_ms=1.0)


@pytest.fixture(scope="session")
def lsrb_adapter():
    return Scripted()
"""


def mock_config(mock_answer: Callable[..., str]) -> Any:
    """The mock adapter's `AdapterConfig` as a run of a task builds it: answering with that task's
    `mock_answer` (`engine.task.mock_answers`)."""
    from pytest_lsrb.adapters.base import AdapterConfig
    from pytest_lsrb.engine.task import mock_answers

    return AdapterConfig(name="mock", answers=mock_answers(mock_answer))


def kimina_row(goal: str, item: str = "k1") -> Any:
    """One tactic index row for `goal` at a fixed location, as the Kimina tests send it."""
    from pytest_lsrb.tactic.rows import TacticRow

    return TacticRow.model_validate(
        {
            "item_id": item,
            "repo_remote": "https://github.com/example/repo",
            "repo_branch": "main",
            "repo_commit": "a" * 40,
            "repo_lean_version": "v4.22.0",
            "path": "Repo/Basic.lean",
            "start_line": 4,
            "start_column": 2,
            "end_line": 4,
            "end_column": 7,
            "goal_text": goal,
        }
    )


def sin_problem() -> Any:
    """A small llm_srbench problem, y = x·sin(x) on 80 rows of x in [0.5, 2), train = test: what the
    discovery methods' cap tests (time, tokens) run on."""
    import numpy as np

    from pytest_lsrb.srbench.data.problem import Problem

    x = np.random.default_rng(0).uniform(0.5, 2.0, 80)
    table = np.column_stack([np.sin(x) * x, x])
    return Problem(
        name="p",
        symbols=["y", "x"],
        symbol_descs=["y", "x"],
        symbol_properties=["O", "V"],
        problem_set="lsr_synth",
        domain="phys_osc",
        train=table,
        test=table,
    )


def install_distribution(
    site: Path, name: str, entry_points: str, modules: dict[str, str], monkeypatch: Any
) -> Path:
    """A real distribution `name` 1.0 on sys.path, as `pip install --target site` lays it out: its
    `*.dist-info` (METADATA, entry_points.txt) and its modules (`{module name: source}`), each
    imported afresh by the test."""
    import sys

    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source, encoding="utf-8")
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.syspath_prepend(str(site))
    return site


def install_example(name: str, site: Path, monkeypatch: Any) -> Path:
    """`examples/NAME` on sys.path as if installed, in this process: its source folder on the path
    and, in `site`, the `*.dist-info` pip would write from its pyproject.toml (its name, version
    and entry points), so `importlib.metadata` finds its entry points like any package's. (The
    slow tests install the same folders with pip.)"""
    import sys

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    example = REPO / "examples" / name
    project = tomllib.loads((example / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = project.get("entry-points", {})
    text = "".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items()) + "\n"
        for group, points in groups.items()
    )
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text(text, encoding="utf-8")
    for package in example.glob("lsrb_*"):
        for module in [m for m in sys.modules if m == package.name or m.startswith(f"{package.name}.")]:
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(example))
    return example
