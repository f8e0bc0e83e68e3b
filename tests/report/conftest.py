"""Runs the report tests read: one real mock-suite run and synthetic runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_lsrb import api

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_runs import equation_run, tactic_run  # noqa: E402


@pytest.fixture(scope="session")
def mock_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in tactic suite run with the mock adapter, 2 samples per item, once for every test
    that reads it. In this process (`api.run`, pytest.main with the same command line): the run
    directory is what these tests read, not how the run was started."""
    out = tmp_path_factory.mktemp("mock-run") / "out"
    result = api.run(
        REPO / "suites" / "goal_to_tactic_proposal_v1", samples=2, output_dir=out, pytest_args=["-q"]
    )
    assert result.exit_code == 0 and (out / "summary.json").exists(), result.summary
    return out


@pytest.fixture(scope="session")
def tactic_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(baseline, current) synthetic tactic runs over the same items; the baseline holds a hostile output."""
    root = tmp_path_factory.mktemp("tactic-pair")
    base = tactic_run(root / "base", seed=1, skill=0.35, hostile_item=True, model="model-a")
    cur = tactic_run(root / "cur", seed=1, skill=0.6, hostile_item=True, model="model-b")
    return base, cur


@pytest.fixture(scope="session")
def equation_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("equation-pair")
    return equation_run(root / "base", seed=5, model="model-a"), equation_run(root / "cur", seed=1)
