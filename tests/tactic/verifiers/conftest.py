"""The Lean fakes (tests/tactic/lean/lean_fakes.py) for the verifier tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lean"))

from lean_fakes import install_toolchain, path_with


@pytest.fixture
def fake_lean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake `lean`, `lake`, `git` and `repl` first on PATH; returns the log folder."""
    install_toolchain(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    for name in ("LEAN", "LAKE", "GIT"):
        monkeypatch.setenv(f"FAKE_{name}_LOG", str(tmp_path / f"{name.lower()}.log"))
    return tmp_path
