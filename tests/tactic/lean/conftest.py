"""Fixtures for the Lean tests: the recorded REPL transcripts and fake Lean executables."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lean_fakes import install_toolchain, path_with

SHARED_DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
TRANSCRIPTS = SHARED_DATA / "lean-repl-transcripts"
SORRYDB = SHARED_DATA / "sorrydb" / "SorryDB_2601_sample.json"


@pytest.fixture(scope="session")
def transcripts() -> Path:
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"the recorded REPL transcripts are not present at {TRANSCRIPTS}")
    return TRANSCRIPTS


@pytest.fixture(scope="session")
def sorrydb_path() -> Path:
    if not SORRYDB.is_file():
        pytest.skip(f"the SorryDB sample is not present at {SORRYDB}")
    return SORRYDB


@pytest.fixture
def fake_toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fake `lean`, `lake` and `repl` executables, first on PATH."""
    tools = install_toolchain(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    monkeypatch.setenv("FAKE_LEAN_LOG", str(tmp_path / "lean.log"))
    monkeypatch.setenv("FAKE_LAKE_LOG", str(tmp_path / "lake.log"))
    return tools
