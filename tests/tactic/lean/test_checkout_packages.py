"""Shared `.lake/packages` across commits of one repository: real git on local repositories, a
fake `lake` whose `build` fetches the dependency into `.lake/packages` only when it is absent
(as Lake does) and logs whether it had to."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from lean_fakes import install, path_with

from pytest_lsrb.tactic.lean.checkout import CheckoutCache, packages_key

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

FAKE_BUILDING_LAKE = r"""
import os, sys
dep = os.path.join(".lake", "packages", "mathlib", "built")
fresh = not os.path.exists(dep)
if sys.argv[1:] == ["build"] and fresh:
    os.makedirs(os.path.dirname(dep), exist_ok=True)
    open(dep, "w").write("olean")
with open(os.environ["FAKE_LAKE_LOG"], "a") as fh:
    fh.write(" ".join(sys.argv[1:]) + ("\tfetched" if fresh else "\treused") + "\n")
"""

MANIFEST_A = {"version": 7, "packages": [{"name": "mathlib", "rev": "aaaa", "url": "https://x/mathlib"}]}
MANIFEST_B = {"version": 7, "packages": [{"name": "mathlib", "rev": "bbbb", "url": "https://x/mathlib"}]}


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run([GIT or "git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def commit(repo: Path, manifest: dict[str, object], note: str) -> str:
    (repo / "lake-manifest.json").write_text(json.dumps(manifest))
    (repo / "lean-toolchain").write_text("leanprover/lean4:v4.22.0\n")
    (repo / "Note.lean").write_text(f"-- {note}\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", note)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, CheckoutCache, Path]:
    install(tmp_path / "bin", "lake", FAKE_BUILDING_LAKE)
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    monkeypatch.setenv("FAKE_LAKE_LOG", str(tmp_path / "lake.log"))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo, CheckoutCache(tmp_path / "cache", allow_local_remotes=True), tmp_path / "lake.log"


def ensure(cache: CheckoutCache, repo: Path, sha: str) -> Path:
    return cache.ensure(str(repo), sha, build_timeout_s=60, memory_mb=None, mathlib_cache=False)


def test_commits_with_the_same_manifest_share_one_package_folder(
    world: tuple[Path, CheckoutCache, Path],
) -> None:
    repo, cache, log = world
    first, second = commit(repo, MANIFEST_A, "one"), commit(repo, MANIFEST_A, "two")
    bumped = commit(repo, MANIFEST_B, "three")
    a, b, c = (ensure(cache, repo, sha) for sha in (first, second, bumped))
    assert len({a, b, c}) == 3
    packages = [p / ".lake" / "packages" for p in (a, b, c)]
    assert all(p.is_symlink() for p in packages)
    assert packages[0].resolve() == packages[1].resolve() != packages[2].resolve()
    assert packages[0].resolve().parent == a.parent / "lake-packages"
    # the second commit builds on the first one's dependency; a new manifest fetches its own
    assert log.read_text().splitlines() == ["build\tfetched", "build\treused", "build\tfetched"]
    assert packages_key(a) == packages_key(b) != packages_key(c)


def test_a_checkout_whose_dot_lake_is_a_link_keeps_it(world: tuple[Path, CheckoutCache, Path]) -> None:
    """A committed `.lake` link could lead anywhere: nothing is created through it."""
    repo, cache, _ = world
    outside = repo.parent / "outside"
    outside.mkdir()
    (repo / ".lake").symlink_to(outside, target_is_directory=True)
    ensure(cache, repo, commit(repo, MANIFEST_A, "linked"))
    assert not (outside / "packages").is_symlink()
