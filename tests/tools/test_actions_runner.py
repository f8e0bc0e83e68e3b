"""The stand-in for GitHub's expressions (actions_runner) and the CI recipe's own expressions: who
re-baselines, and that every `${{ }}` and `if:` in examples/github-workflow.yml is one the runner
evaluates (the end-to-end run of the workflow is tests/tools/test_ci_examples.py, opt-in)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from actions_runner import EXPR, UnsupportedExpression, evaluate, expand, loose_equal

yaml = pytest.importorskip("yaml")

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-workflow.yml"
MAIN = "refs/heads/main"


def contexts(event: str, ref: str, message: str = "", **inputs: Any) -> dict[str, Any]:
    github = {
        "event_name": event,
        "ref": ref,
        "sha": "0" * 40,
        "run_id": "1",
        "run_attempt": "1",
        "event": {"head_commit": {"message": message}} if event == "push" else {},
    }
    return {"github": github, "inputs": inputs, "matrix": {"shard": 0}, "env": {}}


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (None, False, True),  # GitHub compares a null and a boolean as numbers: 0 == 0
        (None, True, False),
        ("TRUE", "true", True),  # strings ignore case
        (True, "true", False),  # a boolean and a string: 1 against NaN
        (1.0, "1", True),
        ("", False, True),
    ],
)
def test_loose_equality_is_githubs(a: Any, b: Any, equal: bool) -> None:
    assert loose_equal(a, b) is equal


@pytest.mark.parametrize(
    ("ctx", "rebaseline"),
    [
        (contexts("push", MAIN, "new prompt"), "false"),
        (contexts("push", MAIN, "new prompt [lsrb rebaseline]"), "true"),
        (contexts("push", MAIN, "New prompt [LSRB REBASELINE]"), "true"),  # contains() ignores case
        (contexts("workflow_dispatch", MAIN, rebaseline=True), "true"),
        (contexts("workflow_dispatch", MAIN, rebaseline=False), "false"),
        (contexts("workflow_dispatch", "refs/heads/topic", rebaseline=True), "false"),  # main only
        (contexts("pull_request", "refs/pull/3/merge"), "false"),
        (contexts("schedule", MAIN), "false"),
    ],
)
def test_who_re_baselines(ctx: dict[str, Any], rebaseline: str) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    assert expand(workflow["env"]["REBASELINE"], ctx) == rebaseline


def test_every_expression_in_the_workflow_is_one_the_runner_evaluates() -> None:
    text = WORKFLOW.read_text("utf-8")
    workflow = yaml.safe_load(text)
    found = [m.group(1) for m in EXPR.finditer(text)]
    found += [str(s["if"]) for job in workflow["jobs"].values() for s in job["steps"] if "if" in s]
    assert found
    for ctx in (contexts("push", MAIN, "x"), contexts("pull_request", "refs/pull/1/merge")):
        for expression in found:
            evaluate(re.sub(r"^\$\{\{|\}\}$", "", expression), ctx)  # raises if it cannot


def test_an_expression_outside_the_subset_is_refused_not_guessed() -> None:
    with pytest.raises(UnsupportedExpression):
        evaluate("hashFiles('**/x')", contexts("push", MAIN))
    with pytest.raises(UnsupportedExpression):
        evaluate("secrets.TOKEN == ''", contexts("push", MAIN))
