"""Leaderboard interop (issue #47 item 4): `lsrb import sorrydb-results` turns SorryDB's agent output
(an experiment folder in its `intermediate_experiment_outputs` layout) into a run here, `lsrb
export sorrydb` writes a run as SorryDB's agent output, and `lsrb compare` / `lsrb report` put the
two side by side by sorry id. The experiment folders are written here in SorryDB's layout, with
its field names (sorrydb/database/sorry.py `SorryResult` and the runner's log lines at 71959ed);
the commands run as a user runs them, in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import TACTIC_SUITE, lsrb

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.sorrydb_results import read_bounded, read_experiment

# SorryDB's SorryResult fields, in its dataclass's order (sorrydb/database/sorry.py at 71959ed).
SORRY_RESULT_FIELDS = [
    *("sorry", "proof", "proof_verified", "feedback", "verification_message", "success"),
    *("error_type", "error_message", "strategy_name", "failed_attempts", "successful_attempts"),
    *("input_tokens", "output_tokens", "estimated_cost"),
]


def sorry(n: int, goal: str) -> dict[str, Any]:
    """A sorry record as SorryDB's DATABASE.md specifies it."""
    return {
        "repo": {
            "remote": "https://github.com/ImperialCollegeLondon/FLT",
            "branch": "main",
            "commit": f"{n:040x}",
            "lean_version": "v4.24.0",
        },
        "location": {
            "path": f"FLT/F{n}.lean",
            "start_line": 7,
            "start_column": 2,
            "end_line": 7,
            "end_column": 7,
        },
        "debug_info": {
            "goal": goal,
            "url": f"https://github.com/ImperialCollegeLondon/FLT/blob/x/F{n}.lean#L7",
        },
        "metadata": {
            "blame_email_hash": "1679c78ca90b",
            "blame_date": "2025-06-12T14:33:04+02:00",
            "inclusion_date": "2025-12-16T13:10:49+00:00",
        },
        "id": f"{n:064x}",
    }


GOALS = ["n : ℕ\n⊢ n + 0 = n", "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q", "a b : ℕ\nh : a = b\n⊢ b = a"]


def pass_at_2_results() -> list[dict[str, Any]]:
    """SorryDB's pass@k runner's output (run_morphcloud_local.py) for three sorries, k = 2."""
    base = {"feedback": None, "success": True, "error_type": None, "error_message": None}
    return [
        {
            **base,
            "sorry": sorry(1, GOALS[0]),
            "proof": "\n  simp",
            "proof_verified": True,
            "verification_message": "1 succeeded, 1 failed out of 2 attempts",
            "strategy_name": "LLMStrategy_pass_at_2",
            "successful_attempts": ["\n  simp"],
            "failed_attempts": ["omega_wrong"],
            "input_tokens": 1817,
            "output_tokens": 93,
            "estimated_cost": 0.0,
        },
        {
            **base,
            "sorry": sorry(2, GOALS[1]),
            "proof": None,
            "proof_verified": False,
            "verification_message": "0 succeeded, 1 failed out of 2 attempts",
            "strategy_name": "LLMStrategy_pass_at_2",
            "successful_attempts": None,
            "failed_attempts": ["exact hp"],
        },
        {  # the one-shot runner's shape: no attempt lists
            **base,
            "sorry": sorry(3, GOALS[2]),
            "proof": "h.symm",
            "proof_verified": False,
            "verification_message": 'Cannot build modified file: <error line="7" column="2">',
        },
    ]


SETTINGS = {
    "strategy": {
        "name": "llm",
        "args": {"model_config": {"provider": "google", "params": {"model": "gemini-3-flash-preview"}}},
    }
}


def experiment(folder: Path, results: list[dict[str, Any]], logs: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
    (folder / "run_summary.json").write_text(json.dumps(SETTINGS))
    for sorry_id, text in (logs or {}).items():
        log = folder / "logs" / "process_single_sorry" / f"{sorry_id}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(text, encoding="utf-8")
    return folder


def run_here(index: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    command = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider"]
    command += [f"--lsrb-index={index}", f"--lsrb-output-dir={out}", "--lsrb-outcome=record", *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=out.parent, env=env, timeout=300)


def attempts(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "attempts.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_a_leaderboard_entry_and_a_run_here_side_by_side(tmp_path: Path) -> None:
    source = experiment(tmp_path / "gemini" / "2026-01-14_22-12-53_llm", pass_at_2_results())
    done = lsrb("import", "sorrydb-results", str(source), "-o", "imported", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    imported = tmp_path / "imported"
    records = attempts(imported)
    by_key = {(r["item_id"], r["sample_index"]): r for r in records}
    assert len(records) == 6  # 3 sorries x SorryDB's k = 2
    first = by_key[(f"{1:064x}", 0)]
    assert (first["verification_success"], first["tactic"], first["sorrydb"]["proof_verified"]) == (
        True,
        "simp",
        True,
    )
    assert (
        first["verification_mode"] == "sorrydb_recorded" and first["model"] == "google/gemini-3-flash-preview"
    )
    assert by_key[(f"{1:064x}", 1)]["verification_error_subkind"] == "sorrydb_rejected"
    assert by_key[(f"{2:064x}", 1)]["verification_error_subkind"] == "no_proof"  # no proof given
    summary = json.loads((imported / "summary.json").read_text())
    assert summary["config"]["samples"] == 2 and summary["verification_pass_at_k_2"] == pytest.approx(1 / 3)
    # a run here on the same sorries (the index the import wrote), paired with the entry by sorry id
    here = tmp_path / "here"
    ran = run_here(imported / "index.jsonl", here, "--lsrb-answer=proof", "--lsrb-samples=2")
    assert ran.returncode == 0, ran.stdout[-2000:]
    compared = lsrb("compare", "imported", "here", cwd=tmp_path)
    assert compared.returncode in (0, 6), compared.stderr
    assert "compared: 3 items in both runs" in compared.stdout
    assert "sorrydb/llm/google/gemini-3-flash-preview" in compared.stdout
    reported = lsrb("report", "here", "--baseline", "imported", "-o", "report.html", cwd=tmp_path)
    assert reported.returncode == 0 and (tmp_path / "report.html").stat().st_size > 0, reported.stderr


def test_export_then_import_gives_the_same_proofs(tmp_path: Path) -> None:
    source = experiment(tmp_path / "exp", pass_at_2_results())
    assert lsrb("import", "sorrydb-results", str(source), "-o", "imported", cwd=tmp_path).returncode == 0
    here = tmp_path / "here"
    assert run_here(tmp_path / "imported" / "index.jsonl", here, "--lsrb-answer=proof").returncode == 0
    for run in ("imported", "here"):
        exported = tmp_path / f"{run}.json"
        done = lsrb("export", "sorrydb", run, "-o", str(exported), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        results = json.loads(exported.read_text(encoding="utf-8"))
        assert all(sorted(r) == sorted(SORRY_RESULT_FIELDS) for r in results)  # SorryDB's names exactly
        # SorryDB's records back, but the author's hashed e-mail, which an index never keeps
        for n, (result, goal) in enumerate(zip(results, GOALS, strict=True), start=1):
            record = sorry(n, goal)
            record["metadata"]["blame_email_hash"] = ""
            assert result["sorry"] == record
        back = tmp_path / f"{run}-back"
        assert lsrb("import", "sorrydb-results", str(exported), "-o", str(back), cwd=tmp_path).returncode == 0
        before = {r["item_id"]: r for r in attempts(tmp_path / run) if r["sample_index"] == 0}
        after = {r["item_id"]: r for r in attempts(back) if r["sample_index"] == 0}
        # a result list alone (no run_summary.json) is named by its results' strategy_name, and
        # SorryDB's token counts per sorry come back whole
        header = json.loads((tmp_path / run / "run.json").read_text())["config"]
        again = json.loads((back / "run.json").read_text())["config"]
        assert (again["adapter"], again["model"]) == (
            header["adapter"] if run == "imported" else f"sorrydb/{header['adapter']}",
            header["model"] or "default",  # (export names a run without a model `default`)
        )
        for field, ours in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
            assert [r[field] for r in results] == [
                sum(r[ours] or 0 for r in attempts(back) if r["item_id"] == item) or None for item in before
            ], field
        if run == "imported":
            assert [r["input_tokens"] for r in results] == [1817, None, None]
        for item, result in zip(before, results, strict=True):
            proof = result["proof"]
            if run == "imported":  # the verified proofs SorryDB recorded, and nothing for the rest
                assert (proof is not None) == bool(before[item]["verification_success"])
            if proof is not None:
                assert after[item]["tactic"] == before[item]["tactic"], (run, item)
                assert after[item]["sorrydb"]["proof"] == proof


def test_the_raw_response_in_the_log_is_read_by_our_reader(tmp_path: Path) -> None:
    """A one-shot experiment's log keeps the model's raw response (`Full LLM response:` up to the
    runner's next log line): the answer read is the reader's on that text, SorryDB's proof beside."""
    raw = (
        "Since the goal is reflexive up to symmetry:\n```lean\n"
        "theorem t (a b : ℕ) (h : a = b) : b = a := by\n  exact h.symm\n```"
    )
    log = (
        "[2025-12-19 20:15:21] [INFO] Prompting LLM\n"
        f"[2025-12-19 20:15:45] [INFO] Full LLM response:\n{raw}\n"
        "[2025-12-19 20:15:45] [INFO] Token usage: input=1817, output=93, cost=$0.0000\n"
    )
    result = {**pass_at_2_results()[2], "proof": "\n  exact h.symm", "proof_verified": True}
    source = experiment(tmp_path / "exp", [result], logs={result["sorry"]["id"]: log})
    assert read_experiment(source).responses == {result["sorry"]["id"]: raw}
    assert lsrb("import", "sorrydb-results", str(source), "-o", "run", cwd=tmp_path).returncode == 0
    (record,) = attempts(tmp_path / "run")
    assert record["raw_output"] == raw and record["tactic"] == "exact h.symm"
    assert record["sorrydb"]["proof"] == "\n  exact h.symm" and record["verification_success"] is True


def test_a_proof_sorrydbs_checker_took_through_sorryax_is_refused_beside_its_verdict(tmp_path: Path) -> None:
    """SorryDB's 1,000-sorry run of Claude Opus 4.5 (SC) verified 319 proofs, 48 of them `sorryAx _
    false` and the like; the leaderboard's 27.1 % leaves them out. The import does the same: the
    guard's refusal is the verdict, SorryDB's `proof_verified` stays beside it."""
    cheat = {**pass_at_2_results()[2], "proof": "exact sorryAx _ false", "proof_verified": True}
    honest = {**pass_at_2_results()[0]}
    source = experiment(tmp_path / "exp", [cheat, honest])
    assert lsrb("import", "sorrydb-results", str(source), "-o", "run", cwd=tmp_path).returncode == 0
    first = {r["item_id"]: r for r in attempts(tmp_path / "run") if r["sample_index"] == 0}
    refused = first[cheat["sorry"]["id"]]
    assert (refused["verification_outcome"], refused["verification_error_subkind"]) == (
        "forbidden_token",
        "sorry",
    )
    assert refused["verification_success"] is False and refused["sorrydb"]["proof_verified"] is True
    assert first[honest["sorry"]["id"]]["verification_success"] is True


# -- a stranger's file ------------------------------------------------------------------------------


def _one(**change: Any) -> list[dict[str, Any]]:
    return [{**pass_at_2_results()[0], **change}]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ({"sorries": "x"}, "a JSON list of results"),
        ([], "expected 1 to 100,000 results"),
        (["x"], "results[0]: expected a JSON object"),
        ([{"sorry": sorry(1, "g")}], "results[0]: field 'proof' is missing"),
        (_one(proof_verified="yes"), "results[0]: field 'proof_verified'"),
        (
            _one(sorry={**sorry(1, "g"), "location": {**sorry(1, "g")["location"], "start_line": "7"}}),
            "location.start_line",
        ),
        (
            _one(sorry={**sorry(1, "g"), "repo": {**sorry(1, "g")["repo"], "remote": "--upload-pack=x"}}),
            "repo.remote",
        ),
        (
            _one(
                sorry={**sorry(1, "g"), "location": {**sorry(1, "g")["location"], "path": "../../etc/passwd"}}
            ),
            "location.path",
        ),
        (_one(failed_attempts=["x"] * 2000), "failed_attempts"),
        ([pass_at_2_results()[0], pass_at_2_results()[0]], "results[1]: field 'sorry.id'"),
        (_one(proof="\ud800"), "results[0]"),
    ],
)
def test_a_bad_file_is_one_sentence_naming_file_and_field(tmp_path: Path, content: Any, says: str) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(LsrbUsageError, match=None) as caught:
        read_experiment(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and says in message and "\n" not in message, message


def test_nested_and_oversized_files_are_refused_before_they_are_parsed(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(LsrbUsageError, match="nested too deeply"):
        read_experiment(deep)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    with pytest.raises(LsrbUsageError, match="larger than"):
        read_bounded(big, 1024)


def test_no_path_escapes_the_folder_and_no_link_or_fifo_is_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret.log"
    outside.write_text("[2025-12-19 20:15:45] [INFO] Full LLM response:\nLEAKED\n")
    escaping = {**pass_at_2_results()[2], "sorry": {**sorry(3, GOALS[2]), "id": "../../secret"}}
    source = experiment(tmp_path / "a" / "exp", [escaping], logs={})
    assert read_experiment(source).responses == {}  # the id names no file outside the logs
    linked = experiment(tmp_path / "b", [pass_at_2_results()[2]])
    logs = linked / "logs" / "process_single_sorry"
    logs.mkdir(parents=True)
    (logs / f"{sorry(3, 'g')['id']}.log").symlink_to(outside)
    with pytest.raises(LsrbUsageError, match="symbolic link"):
        read_experiment(linked)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(LsrbUsageError, match="not a regular file"):
        read_experiment(fifo)
    result = tmp_path / "c" / "result.json"
    result.parent.mkdir()
    result.symlink_to(source / "result.json")
    with pytest.raises(LsrbUsageError, match="symbolic link"):
        read_experiment(result.parent)


def test_a_local_repository_is_never_imported(tmp_path: Path) -> None:
    local = {
        **pass_at_2_results()[0],
        "sorry": {**sorry(1, "g"), "repo": {**sorry(1, "g")["repo"], "remote": "file:///etc"}},
    }
    source = experiment(tmp_path / "exp", [local])
    done = lsrb("import", "sorrydb-results", str(source), "-o", "run", cwd=tmp_path)
    assert done.returncode == 2 and "is a repository on this machine" in done.stderr
    assert not (tmp_path / "run" / "attempts.jsonl").exists()
