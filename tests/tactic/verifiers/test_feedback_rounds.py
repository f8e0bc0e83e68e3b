"""Feedback rounds (issue #41, item 1): SorryDB's self-correcting protocol. A wrong answer is shown
back with Lean's reply in SorryDB's `<feedback>` block, up to N more times; the loop stops at the
first closed answer; every round is in the record and the verdict is the last round's. A whole run
through pytest with a fake Ollama (the model) and a fake `lean` (the checker) at the process edge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from lean_fakes import install_toolchain, path_with

from pytest_lsrb.adapters.base import Message
from pytest_lsrb.report import build_report, load_run
from pytest_lsrb.tactic.feedback import (
    INTRO,
    NO_PROOF,
    OUTRO,
    Tried,
    combined,
    feedback_block,
    model_failed,
    what_lean_said,
    with_feedback,
)

WRONG = "```lean\nlinarith_wrong\n```"
RIGHT = "```lean\ntrivial\n```"
LEAN_SAYS = "unknown tactic 'linarith_wrong'"
RULES = [
    {
        "contains": "linarith_wrong",
        "messages": [{"severity": "error", "data": LEAN_SAYS, "at": "linarith_wrong"}],
    }
]


def _run(run_suite: Any, tmp_path: Path, fake: FakeOllama, *args: str) -> Any:
    install_toolchain(tmp_path / "bin")
    return run_suite(
        "--lsrb-verification=synthetic",
        "--lsrb-max-items=2",
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}",
        "--lsrb-outcome=record",
        "--lsrb-concurrency=1",
        *args,
        env={"PATH": path_with(tmp_path / "bin"), "FAKE_LEAN_RULES": json.dumps(RULES)},
    )


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_a_wrong_answer_is_corrected_in_the_next_round(run_suite: Any, tmp_path: Path) -> None:
    with FakeOllama(reply=WRONG, replies=(("<feedback>", RIGHT),)) as fake:
        res = _run(run_suite, tmp_path, fake, "--lsrb-feedback-rounds=3")
        chats = fake.chat_requests()
    attempts = res.attempts()
    assert len(attempts) == 2, res.stdout[-3000:]
    assert len(chats) == 4  # two rounds per item: the loop stops at the first closed answer
    for a in attempts:
        assert a["verification_outcome"] == "closed" and a["tactic"] == "trivial"
        rounds = a["feedback_rounds"]
        assert [r["outcome"] for r in rounds] == ["lean_error", "closed"]
        assert LEAN_SAYS in rounds[0]["lean"] and rounds[1]["lean"] is None
        assert rounds[0]["prompt_hash"] == a["prompt_hash"] != rounds[1]["prompt_hash"]
        assert a["model_calls"] == 2
    second = chats[1].body["messages"][-1]["content"]
    assert INTRO in second and OUTRO in second and LEAN_SAYS in second
    assert "<proposed_code>\nlinarith_wrong\n</proposed_code>" in second
    assert res.summary()["config"]["feedback_rounds"] == 3
    assert res.summary()["verification_pass_at_k_1"] == 1.0
    page = build_report(load_run(res.out_dir))  # the report shows the rounds
    assert "round 1: lean_error" in page and "round 2: closed" in page


def test_rounds_run_out_and_the_verdict_is_the_last(run_suite: Any, tmp_path: Path) -> None:
    with FakeOllama(reply=WRONG) as fake:
        res = _run(run_suite, tmp_path, fake, "--lsrb-feedback-rounds=2")
        chats = fake.chat_requests()
    assert len(chats) == 6  # 1 + 2 rounds for each of 2 items
    for a in res.attempts():
        assert a["verification_outcome"] == "lean_error"
        assert [r["round"] for r in a["feedback_rounds"]] == [1, 2, 3]
    third = chats[2].body["messages"][-1]["content"]
    assert 'iteration="1" age="1 attempt(s) ago"' in third and 'iteration="2" age="most recent"' in third


def test_feedback_needs_a_checker(run_suite: Any) -> None:
    res = run_suite("--lsrb-feedback-rounds=2")
    assert res.returncode == 4 and "needs --lsrb-verification synthetic or repo_replay" in res.stderr


def test_the_block_is_sorrydbs_and_bounded() -> None:
    tried = [Tried(f"tac{i}", "e" * 10_000) for i in range(5)]
    block = feedback_block(tried)
    assert block.startswith(INTRO + "\n<feedback>\nPrevious attempts failed.") and block.endswith(OUTRO)
    assert block.count("<attempt ") == 3 and 'iteration="3"' in block and 'iteration="2"' not in block
    assert len(block) < 3 * (4_000 + 3_000) + 1_000
    asked = with_feedback((Message("system", "s"), Message("user", "goal")), tried[:1])
    assert asked[0].content == "s" and asked[1].content.startswith("goal\n\n" + INTRO)


@pytest.mark.parametrize(
    ("fields", "fed_back"),
    [
        ({"verification_success": True}, False),
        (
            {
                "verification_outcome": "lean_error",
                "verification_error_kind": "lean_error",
                "verification_error_domain": "model",
            },
            True,
        ),
        ({"verification_error_kind": "forbidden_token", "verification_error_domain": "model"}, True),
        ({"generation_error_kind": "empty_output", "generation_error_domain": "model_output"}, True),
        ({"generation_error_kind": "timeout", "generation_error_domain": "transport"}, False),
        ({"verification_error_kind": "timeout", "verification_error_domain": "environment"}, False),
        ({"verification_outcome": "progress", "nonempty": True}, True),
    ],
)
def test_only_the_models_failures_are_fed_back(fields: dict[str, Any], fed_back: bool) -> None:
    assert model_failed(fields) is fed_back


def test_the_attempt_is_its_last_round_asked_with_its_first_prompt() -> None:
    # (the calls, tokens and time of every round are the engine's count: tests/engine/test_attempt_calls.py)
    a = {"prompt_hash": "p1", "prompt": ["x"], "tactic": "simp", "verification_success": False}
    b = {"prompt_hash": "p2", "prompt": ["y"], "tactic": "rfl", "verification_success": True}
    out = combined(a, [a, b])
    assert (out["prompt_hash"], out["prompt"], out["tactic"], out["verification_success"]) == (
        "p1",
        ["x"],
        "rfl",
        True,
    )
    empty = {"generation_error_kind": "empty_output", "generation_error_domain": "model_output"}
    assert what_lean_said(empty, ()) == NO_PROOF
    lean = {"nonempty": True, "verification_outcome": "lean_error", "verification_detail": "short"}
    assert what_lean_said(lean, ("3:2: error: long\ngoal",)) == "3:2: error: long\ngoal"
    assert what_lean_said(lean, ()) == "lean_error: short"
