"""The REPL built for a checkout's Lean version: the git and lake calls, on fakes (no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lean_fakes import install, path_with

from pytest_lsrb.tactic.lean.checkout import CheckoutCache, CheckoutFailure
from pytest_lsrb.tactic.lean.locks import file_lock
from pytest_lsrb.tactic.lean.replbuild import REPL_REMOTE, repl_command, repl_tag

LOGGING_TOOL = r"""
import os, sys
name = os.path.basename(sys.argv[0]).removeprefix("_").removesuffix(".py")
with open(os.environ["FAKE_TOOL_LOG"], "a") as fh:
    allowed = os.environ.get("GIT_ALLOW_PROTOCOL", "")
    fh.write(name + " " + " ".join(sys.argv[1:]) + "\t" + os.getcwd() + "\t" + allowed + "\n")
if sys.argv[1:2] == ["clone"]:
    os.makedirs(os.path.join(sys.argv[-1], ".git"), exist_ok=True)
sys.exit(int(os.environ.get("FAKE_TOOL_RC_" + (sys.argv[1] if len(sys.argv) > 1 else ""), "0")))
"""


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("git", "lake"):
        install(tmp_path / "bin", name, LOGGING_TOOL)
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    monkeypatch.setenv("FAKE_TOOL_LOG", str(tmp_path / "tools.log"))
    return tmp_path / "tools.log"


def checkout(tmp_path: Path, toolchain: str) -> Path:
    root = tmp_path / "co"
    root.mkdir(exist_ok=True)
    (root / "lean-toolchain").write_text(toolchain)
    return root


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("leanprover/lean4:v4.22.0\n", "v4.22.0"),
        ("leanprover/lean4:v4.9.0-rc1", "v4.9.0-rc1"),
        ("leanprover/lean4:nightly-2024-01-01", None),
        ("leanprover/lean4:v4.22.0 --upload-pack=touch", None),
        ("", None),
    ],
)
def test_repl_tag(tmp_path: Path, text: str, tag: str | None) -> None:
    assert repl_tag(checkout(tmp_path, text)) == tag


def test_the_repl_is_cloned_at_the_lean_version_and_built_once(tmp_path: Path, tools: Path) -> None:
    cache = CheckoutCache(tmp_path / "cache")
    co = checkout(tmp_path, "leanprover/lean4:v4.22.0\n")
    argv = repl_command(cache, co, timeout_s=60, memory_mb=None)
    again = repl_command(cache, co, timeout_s=60, memory_mb=None)
    target = tmp_path / "cache" / "repl" / "v4.22.0"
    assert argv == again == ["lake", "env", str(target / ".lake" / "build" / "bin" / "repl")]
    calls = [line.split("\t") for line in tools.read_text().splitlines()]
    assert calls == [
        [
            f"git clone -q --depth 1 --branch v4.22.0 -- {REPL_REMOTE} {target}",
            str(target.parent),
            "https:ssh:git",
        ],
        ["lake build", str(target), "https:ssh:git"],
    ]


def test_the_repl_build_never_allows_local_transports(tmp_path: Path, tools: Path) -> None:
    """Its remote is a constant https URL: file:// stays refused even when rows may name local repos."""
    cache = CheckoutCache(tmp_path / "cache", allow_local_remotes=True)
    repl_command(cache, checkout(tmp_path, "leanprover/lean4:v4.22.0\n"), timeout_s=60, memory_mb=None)
    assert {line.split("\t")[2] for line in tools.read_text().splitlines()} == {"https:ssh:git"}


def test_file_lock_excludes_other_processes(tmp_path: Path) -> None:
    lock = tmp_path / "sub" / "x.lock"
    probe = (
        "import fcntl, sys\n"
        "fh = open(sys.argv[1], 'a')\n"
        "try:\n    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(3)\n"
    )
    with file_lock(lock):
        held = subprocess.run([sys.executable, "-c", probe, str(lock)], check=False)
    free = subprocess.run([sys.executable, "-c", probe, str(lock)], check=False)
    assert (held.returncode, free.returncode) == (3, 0)


def test_failures_are_named_and_nightlies_refused(
    tmp_path: Path, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = CheckoutCache(tmp_path / "cache")
    with pytest.raises(CheckoutFailure, match="no Lean release named") as nightly:
        repl_command(
            cache, checkout(tmp_path, "leanprover/lean4:nightly-2024-01-01"), timeout_s=60, memory_mb=None
        )
    assert nightly.value.kind == "checkout_failed" and not tools.exists()
    monkeypatch.setenv("FAKE_TOOL_RC_build", "1")
    with pytest.raises(CheckoutFailure, match=r"building the REPL at v4\.22\.0") as failed:
        repl_command(cache, checkout(tmp_path, "leanprover/lean4:v4.22.0"), timeout_s=60, memory_mb=None)
    assert failed.value.kind == "build_failed"
    assert os.path.exists(tmp_path / "cache" / "repl" / "v4.22.0" / ".git")
