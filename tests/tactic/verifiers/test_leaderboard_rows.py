"""Every row of docs/tactic.md's leaderboard table runs as written (issue #47 item 3): the command in
the table, with `$RUN` and `$MODEL` as the page defines them, on two built-in goals replayed from
their file (`repo_replay` on the fake toolchain, tests/tactic/lean/lean_fakes.py) and a fake
OpenAI-compatible server standing for the model; each run is checked to have selected the
protocol the row names (run.json's config, the prompt the server received)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from lean_fakes import install_toolchain, path_with
from lsrb_testing import REPO, TACTIC_SUITE

from pytest_lsrb.tactic.prompts import AGENTIC_PROMPT, LLM_PROMPT
from pytest_lsrb.tactic.search import SEARCH_PROMPT

PAGE = REPO / "docs" / "tactic.md"
STAND_IN = Path(__file__).resolve().parents[2] / "fakes" / "stand_in_repl.py"
SECTION = "## SorryDB's leaderboard, row by row"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(SECTION)
    return text[start : text.index("\n## ", start + 1)]


def _variables() -> dict[str, str]:
    return dict(re.findall(r'^([A-Z]+)="([^"]*)"$', _section(), re.M))


def _rows() -> list[tuple[str, str]]:
    """(row, command) of each table line whose command is not `—`."""
    rows = []
    for line in _section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[2].startswith("`$RUN"):
            continue
        rows.append((cells[0], cells[2].split("`")[1]))
    return rows


ROWS = _rows()


def test_the_table_has_every_leaderboard_row() -> None:
    names = " ".join(row for row, _ in ROWS)
    for row in ("Trivial", "Tactics", "Pass@1", "Pass@32", "Kimina", "(SC)", "tactic by tactic"):
        assert row in names, row
    assert len(ROWS) == 8
    assert "Gemini Flash 3 (Agentic)" in _section()  # named, with no command: no tools here


# What each row's run must have selected: run.json config values, and the prompt's shape.
EXPECTED: dict[str, dict[str, Any]] = {
    "Trivial": {"adapter": "sorrydb-rfl", "samples": 1},
    "Tactics": {"adapter": "sorrydb-tactics", "samples": 12, "headline": "verification_pass_at_k_12"},
    "GPT 5.2": {"prompt": "sorrydb", "answer": "proof", "samples": 1, "asked": LLM_PROMPT},
    "the same — Pass@32#1": {"prompt": "sorrydb", "samples": 32, "asked": LLM_PROMPT},
    "Kimina": {"prompt": "sorrydb", "context_lines": 300, "samples": 1, "asked": LLM_PROMPT},
    "the same — Pass@32#2": {"prompt": "sorrydb", "context_lines": 300, "samples": 32, "asked": LLM_PROMPT},
    "Claude Opus 4.5 (SC)": {"prompt": "sorrydb", "feedback_rounds": 15, "asked": AGENTIC_PROMPT},
    "(no row) tactic by tactic": {"answer": "search", "asked": SEARCH_PROMPT},
}


def _expected(index: int, row: str) -> dict[str, Any]:
    if row.startswith("the same"):
        return EXPECTED[f"{row.split(' —')[0]} — Pass@32#{1 if index < 4 else 2}"]
    return next(v for k, v in EXPECTED.items() if row.startswith(k))


def _words(command: str, variables: dict[str, str], url: str) -> list[str]:
    for name, value in variables.items():
        command = command.replace(f"${name}", value)
    words = shlex.split(command)
    assert words[:2] == ["pytest", "suites/goal_to_tactic_proposal_v1"], words
    words = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-p", "no:cacheprovider", *words[2:]]
    return [url if w == "https://openrouter.ai/api" else "qwen2.5:7b" if w == "M" else w for w in words]


def _tree(tmp_path: Path) -> dict[str, str]:
    """The built-in goals' file as the repository the fake `git` checks out, two of its rows as
    `index.jsonl`, `repl.toml` for the search row, and the fake toolchain on PATH."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "BuiltinGoals.lean").write_bytes((TACTIC_SUITE / "lean" / "BuiltinGoals.lean").read_bytes())
    (tree / "lean-toolchain").write_text("leanprover/lean4:v4.22.0\n")
    every = (TACTIC_SUITE / "index.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [r for r in every if json.loads(r)["start_line"] > 400][:2]  # (300 lines above each)
    (tmp_path / "index.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "repl.toml").write_text(
        f'schema_version = 1\nreplay_method = "repl"\nrepl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    )
    install_toolchain(tmp_path / "bin")
    commit = json.loads(rows[0])["repo_commit"]
    return {
        "PATH": path_with(tmp_path / "bin"),
        "FAKE_GIT_TREE": str(tree),
        "FAKE_GIT_COMMIT": commit,
        "HOME": str(tmp_path / "home"),  # the checkout cache (~/.cache/pytest-lsrb) stays here
        "OPENROUTER_API_KEY": "sk-or-test-0123456789abcdef",
    }


@pytest.mark.parametrize(("index", "row", "command"), [(i, r, c) for i, (r, c) in enumerate(ROWS)])
def test_each_row_s_command_runs_the_protocol_it_names(
    tmp_path: Path, index: int, row: str, command: str
) -> None:
    env = {**os.environ, **_tree(tmp_path)}
    env.pop("PYTEST_ADDOPTS", None)
    out = tmp_path / "out"
    answer = "```lean\nsimp\n```"
    with FakeOllama(reply=answer, replies=(("Full proof search history", "[0] simp"),)) as fake:
        words = _words(command, _variables(), fake.url)
        words += ["--lsrb-max-items=1", "--lsrb-outcome=record", f"--lsrb-output-dir={out}", "-q"]
        proc = subprocess.run(words, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
        chats = fake.chat_requests()
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    config = json.loads((out / "run.json").read_text())["config"]
    want = _expected(index, row)
    for key in ("adapter", "prompt", "answer", "samples", "feedback_rounds", "context_lines"):
        if key in want:
            assert config[key] == want[key], (key, config[key])
    assert config["verification"] == "repo_replay"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["attempts"] == config["samples"] and summary.get("infrastructure_attempts", 0) == 0
    if "headline" in want:
        assert summary["headline"]["metric"] == want["headline"]
    if "asked" not in want:
        assert not chats  # no model behind SorryDB's deterministic rows
        return
    messages = chats[0].body["messages"]
    assert [m["role"] for m in messages] == ["user"]  # SorryDB sends one user message
    asked: str = messages[0]["content"]
    template: str = want["asked"]
    head = template.split("{", 1)[0]
    assert asked.startswith(head) and asked.endswith(template.rsplit("}", 1)[1])
    if template == AGENTIC_PROMPT:
        assert "<feedback>\n\n</feedback>" in asked  # round 1: the section empty, in place
    if template in (LLM_PROMPT, AGENTIC_PROMPT):
        context = asked.split("<context>\n```lean\n", 1)[1].split("\n```\n</context>", 1)[0]
        lines = context.split("\n")
        assert lines[-1].strip() == "sorry"  # the file up to the sorry's line
        assert len(lines) == 300 if want.get("context_lines") == 300 else lines[0].startswith("/-")
    if template == SEARCH_PROMPT:
        assert config["search"] == {
            "protocol": "sorrydb-tactic-by-tactic",
            "iterations": 10,
            "failures": 3,
            "parse": "sorrydb",
        }
