"""Index rows that try to run a command through git, or to read and rewrite a file outside the
checkout (issue #14, attacks 1 and 2), against a real git repository made in tmp_path and a fake
`lake` on PATH: the importer, the suite through pytest, and the checkout module itself.

The attack from the issue: `repo_commit: "--upload-pack=cd;touch MARKER;git-upload-pack"` with a
local path as `repo_remote`. Without `--` before git's positional values, `git fetch ... origin
<commit>` reads the commit as an option and runs the command (the first test shows that this
machine's git really does, so the others' "no MARKER" means something).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_kit import assert_one_sentence

from pytest_lsrb.core.paths import OutsideError, inside, relative_path_problem
from pytest_lsrb.tactic.lean.checkout import CheckoutCache, CheckoutFailure, repo_slug
from pytest_lsrb.tactic.lean.gitrefs import commit_problem, remote_problem
from pytest_lsrb.tactic.sorrydb import import_sorrydb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tactic" / "lean"))

from lean_fakes import FAKE_LAKE, install

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

SOURCE = "theorem t (p : Prop) (hp : p) : p := by\n  sorry\n"


# The payload: `cd` goes to $HOME (ours, in tmp_path), where MARKER appears if git runs it.
ATTACK = "--upload-pack=cd;touch MARKER;git-upload-pack"


def markers(*places: Path) -> list[Path]:
    return [p for place in places for p in place.rglob("MARKER")]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A real git repository, a HOME of our own, and a fake `lake` first on PATH (real git)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    src = tmp_path / "src"
    (src / "Repo").mkdir(parents=True)
    (src / "Repo" / "Basic.lean").write_text(SOURCE, encoding="utf-8")
    victim = tmp_path / "victim.lean"
    victim.write_text(SOURCE, encoding="utf-8")
    (src / "Repo" / "Link.lean").symlink_to(victim)  # a checkout may hold a link leading out
    ident = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    for argv in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-q", "-m", "goals"]):
        subprocess.run([GIT or "git", *argv], cwd=src, check=True, capture_output=True)
    commit = subprocess.run(
        [GIT or "git", "rev-parse", "HEAD"], cwd=src, check=True, capture_output=True, text=True
    ).stdout.strip()
    bin_dir = tmp_path / "bin"
    install(bin_dir, "lake", FAKE_LAKE)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return {"home": home, "src": src, "commit": commit, "victim": victim, "tmp": tmp_path}


def test_this_git_runs_the_payload_without_the_separator(world: dict[str, Any]) -> None:
    """The control: the attack is real on this machine when `--` is missing."""
    dst = world["tmp"] / "control"
    dst.mkdir()
    subprocess.run([GIT or "git", "init", "-q"], cwd=dst, check=True)
    subprocess.run([GIT or "git", "remote", "add", "origin", str(world["src"])], cwd=dst, check=True)
    subprocess.run([GIT or "git", "fetch", "-q", "origin", ATTACK], cwd=dst, capture_output=True)
    assert markers(world["home"]), "this git did not run --upload-pack; the attack tests prove nothing"
    # ... and with `--` it is a refspec, not an option.
    for marker in markers(world["home"]):
        marker.unlink()
    subprocess.run([GIT or "git", "fetch", "-q", "--", "origin", ATTACK], cwd=dst, capture_output=True)
    assert not markers(world["home"])


# -- the checkout module directly -------------------------------------------------------------


def test_checkout_refuses_the_payload_and_runs_nothing(world: dict[str, Any]) -> None:
    cache = CheckoutCache(world["tmp"] / "cache", allow_local_remotes=True)
    with pytest.raises(CheckoutFailure) as failure:
        cache.ensure(str(world["src"]), ATTACK, build_timeout_s=60, memory_mb=None, mathlib_cache=False)
    assert failure.value.kind == "checkout_failed"
    assert "repo_commit" in failure.value.detail and "hexadecimal" in failure.value.detail
    assert not markers(world["home"], world["tmp"])
    assert not (world["tmp"] / "cache").exists()  # refused before anything was written


def test_checkout_clones_a_real_repo_with_separators(world: dict[str, Any]) -> None:
    """The `--` forms work with this git: a real local clone at the pinned commit."""
    cache = CheckoutCache(world["tmp"] / "cache", allow_local_remotes=True)
    root = cache.ensure(
        str(world["src"]), world["commit"], build_timeout_s=120, memory_mb=None, mathlib_cache=False
    )
    assert (root / "Repo" / "Basic.lean").read_text(encoding="utf-8") == SOURCE
    head = subprocess.run([GIT or "git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    assert head.stdout.strip() == world["commit"]


def test_checkout_refuses_a_local_remote_unless_the_user_opts_in(world: dict[str, Any]) -> None:
    cache = CheckoutCache(world["tmp"] / "cache")
    with pytest.raises(CheckoutFailure, match="--lsrb-allow-local-remotes"):
        cache.ensure(
            str(world["src"]), world["commit"], build_timeout_s=60, memory_mb=None, mathlib_cache=False
        )
    assert not (world["tmp"] / "cache").exists()


@pytest.mark.parametrize(
    "remote",
    [
        "--upload-pack=touch MARKER",
        "ext::sh -c touch% MARKER",
        "ext::sh",
        "fd::3",
        "ssh://-oProxyCommand=touch%20MARKER/x",
        "-oProxyCommand=touch:x",
        "http://example.com/o/r",
        "https://user:secret@example.com/o/r",
        "r",
        "",
        "https://exa mple.com/o/r",
        "https://example.com/o/r\n",
    ],
)
def test_hostile_remotes_are_refused(remote: str) -> None:
    assert remote_problem(remote, allow_local=True) is not None


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/leanprover-community/mathlib4",
        "https://github.com/o/r.git",
        "ssh://git@github.com/o/r.git",
        "ssh://git@github.com:2222/o/r",
        "git://example.com/o/r",
        "git@github.com:o/r.git",
        "github.com:o/r",
    ],
)
def test_network_remotes_are_accepted(remote: str) -> None:
    assert remote_problem(remote, allow_local=False) is None


@pytest.mark.parametrize("commit", ["abc1234", "0" * 40, "DEADbeef00"])
def test_commits_are_hex(commit: str) -> None:
    assert commit_problem(commit) is None


@pytest.mark.parametrize("commit", ["abc123", "0" * 41, "HEAD", "main", "--upload-pack=x", "g" * 40, ""])
def test_non_hex_commits_are_refused(commit: str) -> None:
    assert commit_problem(commit) is not None


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../x.lean", "a/../../x.lean", "a//b.lean", "./a.lean", "a\\b.lean", "~/x", ""]
)
def test_paths_that_leave_the_checkout_are_refused(path: str, tmp_path: Path) -> None:
    assert relative_path_problem(path) is not None
    with pytest.raises(OutsideError):
        inside(tmp_path, path)


def test_inside_follows_symlinks(world: dict[str, Any]) -> None:
    assert inside(world["src"], "Repo/Basic.lean") == world["src"] / "Repo" / "Basic.lean"
    with pytest.raises(OutsideError, match="outside"):
        inside(world["src"], "Repo/Link.lean")


@pytest.mark.parametrize("remote", ["..", ".", "./..", "/", "a" * 400])
def test_checkout_folder_names_stay_in_the_cache(remote: str, tmp_path: Path) -> None:
    slug = repo_slug(remote)
    assert slug not in (".", "..") and not slug.startswith(".") and "/" not in slug and len(slug) <= 100
    inside(tmp_path, slug)


# -- the SorryDB importer ----------------------------------------------------------------------


def sorrydb_dump(path: Path, *, remote: str, commit: str, file: str = "Repo/Basic.lean") -> Path:
    record = {
        "repo": {"remote": remote, "branch": "main", "commit": commit, "lean_version": "v4.22.0"},
        "location": {"path": file, "start_line": 2, "start_column": 2, "end_line": 2, "end_column": 7},
        "debug_info": {"goal": "p : Prop\nhp : p\n⊢ p", "url": None},
        "metadata": {"blame_date": None, "inclusion_date": None},
        "id": "a" * 64,
    }
    path.write_text(json.dumps({"sorries": [record]}, indent=1), encoding="utf-8")
    return path


def lsrb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.mark.parametrize(
    ("remote", "commit", "file", "field"),
    [
        ("SRC", "ATTACK", "Repo/Basic.lean", "repo.commit"),
        ("SRC", "COMMIT", "Repo/Basic.lean", "repo.remote"),  # local, without the opt-in
        ("ext::sh -c touch% MARKER", "COMMIT", "Repo/Basic.lean", "repo.remote"),
        ("https://github.com/o/r", "COMMIT", "/etc/passwd", "location.path"),
        ("https://github.com/o/r", "COMMIT", "../../victim.lean", "location.path"),
    ],
)
def test_the_importer_refuses_hostile_records_in_one_sentence(
    world: dict[str, Any], remote: str, commit: str, file: str, field: str
) -> None:
    values = {"SRC": str(world["src"]), "ATTACK": ATTACK, "COMMIT": world["commit"]}
    dump = sorrydb_dump(
        world["tmp"] / "dump.json",
        remote=values.get(remote, remote),
        commit=values.get(commit, commit),
        file=file,
    )
    out = world["tmp"] / "index.jsonl"
    proc = lsrb(world["tmp"], "import", "sorrydb", str(dump), "-o", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr.strip().removeprefix("ERROR: ").removeprefix("error: ")
    assert_one_sentence(message, dump)
    assert f"field '{field}'" in message and "record sorries[0]" in message
    assert not out.exists() and not markers(world["home"], world["tmp"])


def test_the_importer_keeps_a_local_remote_when_asked(world: dict[str, Any]) -> None:
    dump = sorrydb_dump(world["tmp"] / "dump.json", remote=str(world["src"]), commit=world["commit"])
    rows = import_sorrydb(dump, allow_local_remotes=True)
    assert rows[0].repo_remote == str(world["src"])


# -- the suite through pytest ------------------------------------------------------------------


def index_row(remote: str, commit: str, path: str = "Repo/Basic.lean") -> dict[str, Any]:
    return {
        "item_id": "hostile",
        "repo_remote": remote,
        "repo_branch": "main",
        "repo_commit": commit,
        "repo_lean_version": "v4.22.0",
        "path": path,
        "start_line": 2,
        "start_column": 2,
        "end_line": 2,
        "end_column": 7,
        "goal_text": "p : Prop\nhp : p\n⊢ p",
    }


def run_suite(world: dict[str, Any], row: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    index = world["tmp"] / "index.jsonl"
    index.write_text(json.dumps(row) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--lsrb-index={index}",
        "--lsrb-verification=repo_replay",
        f"--lsrb-cache-dir={world['tmp'] / 'cache'}",
        f"--lsrb-output-dir={world['tmp'] / 'out'}",
        "--lsrb-overwrite",
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=world["tmp"], env=env, timeout=300)


@pytest.mark.parametrize(
    ("remote", "commit", "path", "field"),
    [
        ("SRC", "ATTACK", "Repo/Basic.lean", "repo_commit"),
        ("ext::sh -c touch% MARKER", "COMMIT", "Repo/Basic.lean", "repo_remote"),
        ("SRC", "COMMIT", "../victim.lean", "path"),
        ("SRC", "COMMIT", "VICTIM", "path"),
    ],
)
def test_the_suite_refuses_hostile_rows_before_any_git_call(
    world: dict[str, Any], remote: str, commit: str, path: str, field: str
) -> None:
    values = {
        "SRC": str(world["src"]),
        "ATTACK": ATTACK,
        "COMMIT": world["commit"],
        "VICTIM": str(world["victim"]),
    }
    row = index_row(values.get(remote, remote), values.get(commit, commit), values.get(path, path))
    proc = run_suite(world, row, "--lsrb-allow-local-remotes")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"index.jsonl:1: field '{field}'" in proc.stderr and "Traceback" not in proc.stderr
    assert not markers(world["home"], world["tmp"])
    assert not (world["tmp"] / "cache" / "lean-checkouts").exists()
    assert world["victim"].read_text(encoding="utf-8") == SOURCE


def test_a_symlink_out_of_the_checkout_errors_the_test_and_changes_nothing(world: dict[str, Any]) -> None:
    """A row that passes every check when read, pointing at a link that leads out of the real
    checkout: refused where the file is opened (`checkout_failed`, an environment error)."""
    proc = run_suite(
        world, index_row(str(world["src"]), world["commit"], "Repo/Link.lean"), "--lsrb-allow-local-remotes"
    )
    assert proc.returncode == 1 and "1 error" in proc.stdout, proc.stdout + proc.stderr
    record = json.loads((world["tmp"] / "out" / "attempts.jsonl").read_text(encoding="utf-8"))
    assert (record["verification_outcome"], record["verification_error_domain"]) == (
        "checkout_failed",
        "environment",
    )
    assert world["victim"].read_text(encoding="utf-8") == SOURCE


def test_the_suite_without_the_opt_in_never_clones_a_local_remote(world: dict[str, Any]) -> None:
    proc = run_suite(world, index_row(str(world["src"]), world["commit"]))
    assert proc.returncode == 1 and "1 error" in proc.stdout, proc.stdout + proc.stderr
    record = json.loads((world["tmp"] / "out" / "attempts.jsonl").read_text(encoding="utf-8"))
    assert record["verification_outcome"] == "checkout_failed"
    assert not list((world["tmp"] / "cache").rglob("*.git"))


# -- replay profiles name the executables --------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('git_command = "--upload-pack=touch MARKER"', "git_command"),
        ('lake_command = "sh -c touch MARKER"', "lake_command"),
        ('lean_command = ""', "lean_command"),
        ('repl_command = ["-c", "x"]', "repl_command"),
    ],
)
def test_a_profile_cannot_smuggle_options_into_a_command(tmp_path: Path, line: str, field: str) -> None:
    from pytest_lsrb.core.errors import LsrbUsageError
    from pytest_lsrb.tactic.profiles import load_profile_file

    profile = tmp_path / "p.toml"
    profile.write_text(f"schema_version = 1\n{line}\n", encoding="utf-8")
    with pytest.raises(LsrbUsageError) as info:
        load_profile_file(profile)
    assert_one_sentence(str(info.value), profile)
    assert f"field '{field}'" in str(info.value)
