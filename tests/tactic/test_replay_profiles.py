"""Replay profiles: the shipped files load, the match order holds, bad files stop the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.profiles import (
    BUILTIN_DEFAULT_ID,
    load_profiles,
    profile_config_path,
    resolve_profiles_path,
)

REPO = Path(__file__).resolve().parents[2]
MATHLIB = "https://github.com/leanprover-community/mathlib4"


def write(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("schema_version = 1\n" + body, encoding="utf-8")
    return path


def test_shipped_profiles_load_and_match() -> None:
    profiles = load_profiles(REPO / "profiles")
    assert {p.id for p, _ in profiles.profiles} >= {"default", "mathlib4"}
    assert profiles.match(MATHLIB + ".git/", "v4.22.0").id == "mathlib4"
    assert profiles.match("https://github.com/x/y", "v4.22.0").id == "default"
    assert profiles.match("https://github.com/x/y", "v4.3.0").skip


def test_more_specific_wins(tmp_path: Path) -> None:
    write(tmp_path, "a_default.toml", "")
    write(tmp_path, "b_version.toml", 'repo_lean_version = "v4.2*"\n')
    write(tmp_path, "c_version_exact.toml", 'repo_lean_version = "v4.22.0"\n')
    write(tmp_path, "d_remote.toml", f'repo_remote = "{MATHLIB}"\n')
    write(tmp_path, "e_both.toml", f'repo_remote = "{MATHLIB}"\nrepo_lean_version = "v4.2*"\n')
    p = load_profiles(tmp_path)
    assert p.match(MATHLIB, "v4.22.0").id == "e_both"
    assert p.match(MATHLIB, "v4.9.0").id == "d_remote"
    assert p.match("https://github.com/x/y", "v4.22.0").id == "c_version_exact"
    assert p.match("https://github.com/x/y", "v4.21.0").id == "b_version"
    assert p.match("https://github.com/x/y", "v4.9.0").id == "a_default"


def test_no_default_file_falls_back_to_builtin(tmp_path: Path) -> None:
    write(tmp_path, "only.toml", f'repo_remote = "{MATHLIB}"\n')
    assert load_profiles(tmp_path).match("https://github.com/x/y", "v4").id == BUILTIN_DEFAULT_ID


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("memory_mb = 'lots'\n", "field 'memory_mb'"),
        ("replay_method = 'ssh'\n", "field 'replay_method'"),
        ("max_parallel = 0\n", "field 'max_parallel'"),
        ("check_timout_s = 5\n", "field 'check_timout_s'"),
        ("this is = not toml\n", "not valid TOML"),
    ],
)
def test_invalid_file_names_file_and_field(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path, "bad.toml", body)
    with pytest.raises(LsrbUsageError) as info:
        load_profiles(tmp_path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_schema_version_is_required(tmp_path: Path) -> None:
    (tmp_path / "old.toml").write_text("memory_mb = 1024\n")
    with pytest.raises(LsrbUsageError, match="schema_version"):
        load_profiles(tmp_path)


def test_duplicate_match_keys_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.toml", f'repo_remote = "{MATHLIB}"\n')
    write(tmp_path, "b.toml", f'repo_remote = "{MATHLIB}.git"\n')
    with pytest.raises(LsrbUsageError, match=r"b\.toml"):
        load_profiles(tmp_path)


def test_resolved_path(tmp_path: Path) -> None:
    suite_root = REPO / "suites" / "goal_to_tactic_proposal_v1"
    assert resolve_profiles_path(None, suite_root) == REPO / "profiles"
    assert profile_config_path("synthetic", None, suite_root) == str(REPO / "profiles")
    assert profile_config_path("none", None, suite_root) is None
    assert profile_config_path("repo_replay", None, tmp_path / "a" / "b") == "builtin"
    with pytest.raises(LsrbUsageError, match="--lsrb-profiles"):
        resolve_profiles_path(str(tmp_path / "missing"), None)


def test_profile_contents_are_part_of_the_config_hash(tmp_path: Path) -> None:
    """Resuming after editing a profile's timeout is another config, refused as such."""
    from pytest_lsrb.engine.options import RunConfig
    from pytest_lsrb.engine.suite import load_suite
    from pytest_lsrb.tactic.task import TacticTask

    suite = load_suite(Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1")
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "default.toml").write_text("schema_version = 1\ncheck_timeout_s = 300\n")
    values = {
        "samples": 1,
        "temperature": 0.0,
        "verification": "synthetic",
        "profiles": str(profiles),
        "index": str(suite.root / "index.jsonl"),
    }

    def config_hash() -> str:
        base = RunConfig(values, suite, tmp_path, from_command_line=frozenset({"profiles"}))
        return str(TacticTask().configure(base).extra_identity["profiles_sha256"])

    before = config_hash()
    assert before == config_hash()
    (profiles / "default.toml").write_text("schema_version = 1\ncheck_timeout_s = 30\n")
    assert config_hash() != before
