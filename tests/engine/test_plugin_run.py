"""The plugin end to end, run as a user runs it (pytest in a subprocess)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from lsrb_testing import SCRIPTED_ADAPTER, TACTIC_SUITE, RunSuite, pytest_verdict

from pytest_lsrb.engine.records import strip_timing
from pytest_lsrb.engine.summary import SUMMARY_TIMING_KEYS

N_BUILTIN = sum(1 for line in (TACTIC_SUITE / "index.jsonl").read_text().splitlines() if line.strip())


def comparable_summary(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in SUMMARY_TIMING_KEYS}


def sorted_attempts(attempts: list[dict]) -> list[dict]:
    return sorted((strip_timing(a) for a in attempts), key=lambda a: (a["item_id"], a["sample_index"]))


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_default_run_writes_one_record_per_item_and_sample(run_suite: RunSuite) -> None:
    result = run_suite("--lsrb-samples=2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{2 * N_BUILTIN} passed" in result.stdout
    attempts = result.attempts()
    assert len(attempts) == 2 * N_BUILTIN
    assert {(a["item_id"], a["sample_index"]) for a in attempts} == {
        (a["item_id"], k) for a in attempts for k in (0, 1)
    }
    summary = result.summary()
    assert summary["attempts"] == summary["attempts_expected"] == 2 * N_BUILTIN
    assert summary["complete"] is True
    for key in (
        "valid_rate",
        "nonempty_rate",
        "contains_sorry_rate",
        "latency_ms_mean",
        "latency_ms_p50",
        "latency_ms_p95",
        "generation_error_kinds",
        "generation_error_domains",
        "selected_rows_hash",
    ):
        assert key in summary
    # The short metrics table at the end of the terminal output.
    assert "lsrb: goal_to_tactic_proposal_v1" in result.stdout
    assert re.search(r"valid_rate\s+\d\.\d{3}", result.stdout)
    # The mock baseline is not one constant answer.
    assert len({a["tactic"] for a in attempts}) > 3


def test_test_ids_are_item_hash_sample(run_suite_here: RunSuite) -> None:
    result = run_suite_here("--collect-only", "--lsrb-samples=3")
    assert "test_goal_to_tactic[logic_and_intro#s0]" in result.stdout
    ids = re.findall(r"\[([^\]]+)\]", result.stdout)
    assert len(ids) == 3 * N_BUILTIN
    assert all(re.fullmatch(r"[\w.\-]+#s[0-2]", i) for i in ids)


def test_same_options_give_the_same_attempts_byte_for_byte(run_suite_here: RunSuite, tmp_path: Path) -> None:
    a = run_suite_here("--lsrb-samples=2", "--lsrb-seed=7", out=tmp_path / "a")
    b = run_suite_here("--lsrb-samples=2", "--lsrb-seed=7", out=tmp_path / "b")
    assert a.returncode == b.returncode == 0
    assert [strip_timing(r) for r in a.attempts()] == [strip_timing(r) for r in b.attempts()]
    assert comparable_summary(a.summary()) == comparable_summary(b.summary())
    c = run_suite_here("--lsrb-samples=2", "--lsrb-seed=8", out=tmp_path / "c")
    assert [r["attempt_seed"] for r in c.attempts()] != [r["attempt_seed"] for r in a.attempts()]


def test_xdist_run_gives_the_same_summary(run_suite: RunSuite, tmp_path: Path) -> None:
    serial = run_suite("--lsrb-samples=2", out=tmp_path / "serial")
    parallel = run_suite("--lsrb-samples=2", "-n", "2", out=tmp_path / "parallel")
    assert serial.returncode == parallel.returncode == 0, parallel.stdout + parallel.stderr
    assert sorted_attempts(serial.attempts()) == sorted_attempts(parallel.attempts())
    assert comparable_summary(serial.summary()) == comparable_summary(parallel.summary())


def test_shards_partition_the_run(run_suite_here: RunSuite, tmp_path: Path) -> None:
    full = run_suite_here(out=tmp_path / "full")
    keys: set[tuple[str, int]] = set()
    hashes = set()
    for i in range(3):
        part = run_suite_here("--lsrb-shard-count=3", f"--lsrb-shard-index={i}", out=tmp_path / f"s{i}")
        assert part.returncode == 0
        part_keys = {(a["item_id"], a["sample_index"]) for a in part.attempts()}
        assert not part_keys & keys
        keys |= part_keys
        hashes.add(part.summary()["selected_rows_hash"])
    assert keys == {(a["item_id"], a["sample_index"]) for a in full.attempts()}
    assert hashes == {full.summary()["selected_rows_hash"]}


def test_k_matches_repo_name_path_and_tags(run_suite_here: RunSuite, tmp_path: Path) -> None:
    rows = [
        {
            "item_id": "pnt1",
            "repo_remote": "https://github.com/AlexKontorovich/PrimeNumberTheoremAnd",
            "path": "PrimeNumberTheoremAnd/Wiener.lean",
            "tags": ["analysis"],
        },
        {
            "item_id": "flt1",
            "repo_remote": "https://github.com/ImperialCollegeLondon/FLT",
            "path": "FLT/Basic.lean",
            "tags": ["algebra"],
        },
    ]
    index = tmp_path / "index.jsonl"
    common = {
        "repo_branch": "main",
        "repo_commit": "0" * 40,
        "repo_lean_version": "v4.22.0",
        "start_line": 1,
        "start_column": 0,
        "end_line": 1,
        "end_column": 5,
        "goal_text": "n : Nat\n⊢ n = n",
    }
    index.write_text("".join(json.dumps({**common, **r}) + "\n" for r in rows))
    for expr, expected in [
        ("PrimeNumberTheoremAnd and s0", {"pnt1"}),
        ("Wiener", {"pnt1"}),
        ("algebra", {"flt1"}),
        ("s1", set()),
    ]:
        out = tmp_path / re.sub(r"\W", "_", expr)
        result = run_suite_here(f"--lsrb-index={index}", "-k", expr, out=out)
        assert {a["item_id"] for a in result.attempts()} == expected, (expr, result.stdout)


# Ends the session after the 5th test: the mock's attempts run ahead 32 at a time (engine.runner).
STOP_AFTER_FIVE = """
import pytest

seen = []

def pytest_runtest_logfinish(nodeid):
    seen.append(nodeid)
    if len(seen) == 5:
        pytest.exit("stopped after five tests", returncode=3)
"""


def test_an_interrupted_mock_run_keeps_only_what_ran_and_resumes_to_the_same_records(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "stop_after_five.py").write_text(STOP_AFTER_FIVE, encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "interrupted"
    stopped = run_suite("-p", "stop_after_five", "-k", "not logic_and_intro", out=out, env=env)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    # the 27 attempts made ahead of their tests were not written: their tests never ran
    assert len(stopped.attempts()) == 5
    resumed = run_suite("--lsrb-resume", "-k", "not logic_and_intro", out=out)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    whole = run_suite("-k", "not logic_and_intro", out=tmp_path / "whole")
    assert [strip_timing(r) for r in resumed.attempts()] == [strip_timing(r) for r in whole.attempts()]
    assert len(whole.attempts()) == N_BUILTIN - 1  # (the deselected item is never made ahead either)


def test_existing_run_is_never_overwritten_by_accident(run_suite_here: RunSuite, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_suite_here(out=out)
    before = (out / "attempts.jsonl").read_bytes()
    again = run_suite_here(out=out)
    assert again.returncode == 4
    assert "already holds a run; pass --lsrb-resume" in again.stderr
    assert (out / "attempts.jsonl").read_bytes() == before
    replaced = run_suite_here("--lsrb-overwrite", out=out)
    assert replaced.returncode == first.returncode == 0
    assert len(replaced.attempts()) == N_BUILTIN


def test_outcome_policy_fail_error_and_record(run_suite_here: RunSuite, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TACTIC_SUITE, suite, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (suite / "conftest.py").write_text(SCRIPTED_ADAPTER)
    rows = [json.loads(line) for line in (suite / "index.jsonl").read_text().splitlines() if line]
    n_and = sum("∧" in r["goal_text"] for r in rows)
    n_or = sum("∨" in r["goal_text"] and "∧" not in r["goal_text"] for r in rows)
    assert n_and and n_or, "the built-in suite should have conjunction and disjunction goals"

    strict = run_suite_here(suite=suite, out=tmp_path / "strict")
    assert strict.returncode == 1
    assert f"{n_and} failed" in strict.stdout  # a wrong answer fails
    assert f"{n_or} error" in strict.stdout  # an infrastructure failure errors
    assert "contains a forbidden token" in strict.stdout
    records = {r["item_id"]: r for r in strict.attempts()}
    assert len(records) == len(rows)  # errored attempts are recorded too
    errored = [r for r in records.values() if r["generation_error_kind"]]
    assert {(r["generation_error_kind"], r["generation_error_domain"]) for r in errored} == {
        ("connection", "transport")
    }

    record = run_suite_here("--lsrb-outcome=record", suite=suite, out=tmp_path / "record")
    assert "failed" not in pytest_verdict(record.stdout) and " error" in pytest_verdict(record.stdout)
    assert f"{n_or} error" in record.stdout  # infrastructure still errors
    assert record.summary()["contains_sorry_rate"] > 0


def test_a_verification_mode_the_task_does_not_have_is_a_usage_error(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    """Each task declares its modes: `equation` on the tactic suite used to make every attempt a
    harness AttributeError, `synthetic` on llm_srbench was silently ignored (run.json said
    synthetic, every record equation). Now both stop before any model call or file."""
    for suite, mode, modes in (
        (TACTIC_SUITE, "equation", "none, synthetic, repo_replay"),
        (TACTIC_SUITE.parent / "llm_srbench", "synthetic", "equation"),
    ):
        out = tmp_path / mode
        result = run_suite(f"--lsrb-verification={mode}", suite=suite, out=out)
        assert result.returncode == 4, result.stdout + result.stderr
        assert f"has no mode '{mode}' (its modes: {modes})" in result.stderr
        assert "Traceback" not in result.stderr and not (out / "run.json").exists()
