"""A chat model's answer to the file context, read as SorryDB reads it, through a whole run
(issue #47, item 1): pytest in a subprocess, a fake OpenAI-compatible server answering as Claude
Sonnet 4.5 answered SorryDB's prompt (the declaration restated with its nested sorry filled in,
SorryDB's intermediate_experiment_outputs at 71959ed), the row's file at its commit through the
fake git and a fake `lake`/`lean` at the process edge.

With `--lsrb-context file` the model saw the declaration up to its sorry; what replaced that
sorry is the answer (`omega`), not the declaration's whole body (which, spliced over the sorry,
is Lean's error: `rcases n` where no `n` is left). A restated statement that is not the
target's is the model's failure, refused before Lean runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from lean_fakes import install_toolchain, path_with

COMMIT = "b" * 40
SOURCE = (
    "import Repo.Defs\n\n"
    "example (n : Nat) (h : n < 3) : n = 0 ∨ n = 1 ∨ n = 2 := by\n"
    "  rcases n with _ | n'\n"
    "  · left; rfl\n"
    "  -- Need to handle the successor case!\n"
    "  sorry\n"
)
ROW = {
    "item_id": "rcases",
    "repo_remote": "https://github.com/example/repo",
    "repo_branch": "main",
    "repo_commit": COMMIT,
    "repo_lean_version": "v4.22.0",
    "path": "Repo/Basic.lean",
    "start_line": 7,
    "start_column": 2,
    "end_line": 7,
    "end_column": 7,
    "goal_text": "case succ\nn' : ℕ\nh : n' + 1 < 3\n⊢ n' + 1 = 0 ∨ n' + 1 = 1 ∨ n' + 1 = 2",
}
# Claude Sonnet 4.5's answer (SorryDB 0e4ecec8..., verified; SorryDB's extraction: `omega`)
RESTATED = (
    "Since `n' + 1 < 3`, `n' + 1 ∈ {1, 2}`. I can use `omega`:\n\n```lean\n"
    "example (n : Nat) (h : n < 3) : n = 0 ∨ n = 1 ∨ n = 2 := by\n"
    "  rcases n with _ | n'\n  · left; rfl\n  -- Need to handle the successor case!\n  omega\n```"
)
CHANGED = RESTATED.replace("(h : n < 3)", "(h : n < 2)")
# Lean on the whole body spliced over the sorry: the second `rcases n` finds no `n`.
RULES = [
    {
        "contains": "left; rfl\n  omega",
        "messages": [{"severity": "error", "data": "unknown identifier 'n'", "at": "omega"}],
    }
]


def _run(run_suite: Any, tmp_path: Path, reply: str, *extra: str) -> tuple[Any, list[Any]]:
    bin_dir = tmp_path / "bin"
    install_toolchain(bin_dir)
    tree = tmp_path / "tree"
    (tree / "Repo").mkdir(parents=True)
    (tree / "Repo" / "Basic.lean").write_text(SOURCE, encoding="utf-8")
    (tree / "lean-toolchain").write_text("leanprover/lean4:v4.22.0\n", encoding="utf-8")
    index = tmp_path / "index.jsonl"
    index.write_text(json.dumps(ROW, ensure_ascii=False) + "\n", encoding="utf-8")
    profile = tmp_path / "profile.toml"
    profile.write_text("schema_version = 1\nbuild_timeout_s = 30\nmathlib_cache = false\n", encoding="utf-8")
    with FakeOllama(reply=reply, models=("claude-sonnet-4-5",)) as server:
        res = run_suite(
            f"--lsrb-index={index}",
            "--lsrb-verification=repo_replay",
            f"--lsrb-profiles={profile}",
            f"--lsrb-cache-dir={tmp_path / 'cache'}",
            "--lsrb-context=file",
            "--lsrb-answer=proof",
            "--lsrb-adapter=openai",
            "--lsrb-model=claude-sonnet-4-5",
            f"--lsrb-base-url={server.url}/v1",
            "--lsrb-outcome=record",
            *extra,
            env={
                "PATH": path_with(bin_dir),
                "FAKE_GIT_TREE": str(tree),
                "FAKE_GIT_COMMIT": COMMIT,
                "FAKE_LEAN_RULES": json.dumps(RULES),
                "FAKE_LEAN_LOG": str(tmp_path / "lean.log"),
            },
        )
        chats = list(server.chat_requests())
    return res, chats


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_a_nested_sorry_filled_in_closes_with_its_replacement(run_suite: Any, tmp_path: Path) -> None:
    res, chats = _run(run_suite, tmp_path, RESTATED)
    attempts = res.attempts()
    assert len(attempts) == 1, res.stdout[-3000:] + res.stderr[-3000:]
    attempt = attempts[0]
    assert (
        "  · left; rfl\n  -- Need to handle the successor case!\n  sorry"
        in chats[0].body["messages"][-1]["content"]
    )
    assert attempt["verification_outcome"] == "closed", attempt.get("verification_detail")
    assert attempt["tactic"] == "omega" and "fill" in attempt["answer_format"]


def test_a_changed_statement_is_the_models_failure_before_lean(run_suite: Any, tmp_path: Path) -> None:
    res, _ = _run(run_suite, tmp_path, CHANGED)
    attempts = res.attempts()
    assert len(attempts) == 1, res.stdout[-3000:] + res.stderr[-3000:]
    attempt = attempts[0]
    assert (attempt["valid"], attempt["verification_attempted"]) == (False, False)
    verdict = (attempt["verification_outcome"], attempt["verification_error_subkind"])
    assert verdict == ("forbidden_token", "changed_statement")
    assert attempt["verification_error_domain"] == "model"
    assert "changes the statement" in attempt["verification_detail"]
    lean_calls = (tmp_path / "lean.log").read_text() if (tmp_path / "lean.log").exists() else ""
    assert "omega" not in lean_calls  # nothing of the answer went to Lean


def test_in_sorrydbs_own_prompt_the_fill_is_read_the_same(run_suite: Any, tmp_path: Path) -> None:
    """`--lsrb-prompt sorrydb` asks in SorryDB's words (its `llm` strategy's prompt, the file up to
    the sorry): the answer it was written for is read as SorryDB's diff reads it."""
    res, chats = _run(run_suite, tmp_path, RESTATED, "--lsrb-prompt=sorrydb")
    attempts = res.attempts()
    assert len(attempts) == 1, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Output the ENTIRE code block" in chats[0].body["messages"][-1]["content"]
    assert (attempts[0]["tactic"], attempts[0]["verification_outcome"]) == ("omega", "closed")
