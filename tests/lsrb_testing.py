"""Test helpers shared across test folders (a module with its own name: several folders have a
conftest.py, so `from conftest import ...` would pick whichever was imported first)."""

from __future__ import annotations

import json
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
