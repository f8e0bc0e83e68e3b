"""repo_replay's kernel re-check (issue #29, item 4): with `kernel_recheck = "lean4checker"` a
closed answer's file is compiled to an .olean and replayed through the kernel by lean4checker
(`lake env lean4checker <Module>`, its README's invocation); a rejection is the model's
`lean_error/kernel_recheck`, an absent checker is refused at start. Against the fake toolchain
(tests/tactic/lean/lean_fakes.py), whose lean4checker prints what the real one prints (sources
named there) and rejects what the fake lean added without the kernel's check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_lean_verifiers import _replay_with, row, rules
from test_replay_verdicts import BLUEPRINT, MODULE, MODULE_LINE, TARGET_LINE

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.verifier import VerificationResult, VerifierConfig
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

RECHECK = 'kernel_recheck = "lean4checker"\n'
# A repository tactic that closes any goal by adding a declaration through metaprogramming,
# unchecked by the kernel ("environment hacking", what lean4checker's README says it detects).
HACK = "hack_tac"


def _check(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tactic: str,
    profile: str,
    source: str = BLUEPRINT,
    line: int = TARGET_LINE,
) -> VerificationResult:
    monkeypatch.setenv("FAKE_LEAN4CHECKER_LOG", str(tmp_path / "lean4checker.log"))
    v = _replay_with(tmp_path, monkeypatch, source, profile)
    try:
        v.preflight()
        r = row(start_line=line, end_line=line)
        return v.check(r, tactic, v.profile_for(r))
    finally:
        v.close()


def _checker_calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "lean4checker.log"
    return [json.loads(c) for c in log.read_text().splitlines()] if log.exists() else []


def _hack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LEAN_UNCHECKED", HACK)
    rules(monkeypatch, {"contains": f"  {HACK}\n", "messages": [], "axioms": []})


def test_a_clean_closed_answer_passes_the_kernel_recheck(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _check(tmp_path, monkeypatch, "exact ⟨hp, hq⟩", RECHECK)
    assert (res.outcome, res.subkind) == ("closed", None), res.detail
    assert _checker_calls(tmp_path) == [["LsrbScratch.Checked"]]


def test_an_answer_the_kernel_never_saw_fails_the_recheck(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hack(monkeypatch)
    res = _check(tmp_path, monkeypatch, HACK, RECHECK)
    assert (res.outcome, res.subkind) == ("lean_error", "kernel_recheck"), res.detail
    assert res.detail is not None and res.detail.startswith("uncaught exception: (kernel)")


def test_without_the_option_the_same_answer_closes_and_no_checker_runs(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hack(monkeypatch)
    res = _check(tmp_path, monkeypatch, HACK, "")
    assert (res.outcome, res.subkind) == ("closed", None), res.detail
    assert _checker_calls(tmp_path) == []


def test_an_answer_that_does_not_close_is_not_rechecked(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _check(tmp_path, monkeypatch, "exact helper p q hp hq", RECHECK + "reject_inherited_sorry = true\n")
    assert (res.outcome, res.subkind) == ("lean_error", "inherited_sorry"), res.detail
    assert _checker_calls(tmp_path) == []


def test_a_module_file_is_rechecked_from_its_compiled_module(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _check(tmp_path, monkeypatch, "exact ⟨hp, hq⟩", RECHECK, source=MODULE, line=MODULE_LINE)
    assert (res.outcome, res.subkind) == ("closed", None), res.detail
    assert _checker_calls(tmp_path) == [["LsrbScratch.Checked"]]


def test_an_absent_checker_is_refused_at_start_in_one_sentence(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin" / "lean4checker").unlink()
    with pytest.raises(
        LsrbUsageError, match=r"p\.toml: field 'kernel_recheck': .*lean4checker.* not on PATH"
    ):
        _check(tmp_path, monkeypatch, "exact ⟨hp, hq⟩", RECHECK)


def test_a_checker_that_cannot_run_is_the_environment_s(
    tmp_path: Path, fake_lean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lean4checker exiting without a kernel report (here: the usage error of a wrong argv,
    stood in by a checker that lost its argument) is not the answer's failure."""
    wrapper = tmp_path / "bin" / "lean4checker"
    real = wrapper.read_text()
    wrapper.write_text(real.replace('"$@"', ""))
    res: Any = _check(tmp_path, monkeypatch, "exact ⟨hp, hq⟩", RECHECK)
    assert res.outcome == "oom_or_crash" and res.subkind == "process_failed", res.detail
    assert "Usage: lake exe lean4checker" in (res.detail or "")


def test_a_synthetic_run_refuses_the_option_rather_than_skip_it(tmp_path: Path) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text("schema_version = 1\n" + RECHECK)
    with pytest.raises(LsrbUsageError, match=r"p\.toml: field 'kernel_recheck': .*=repo_replay only"):
        SyntheticVerifier(VerifierConfig(mode="synthetic", options={"profiles": str(profile)}))
