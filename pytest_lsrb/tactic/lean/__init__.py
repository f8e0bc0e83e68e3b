"""Lean verification machinery: goals, scripts, splicing, backends, checkouts and verdicts."""

from pytest_lsrb.tactic.lean.backend import FileBackend, LeanBackend, LeanRun, ReplBackend
from pytest_lsrb.tactic.lean.goal import Goal, Hypothesis, Restatement, Unrestatable, parse_goal, restate
from pytest_lsrb.tactic.lean.outcome import LeanMessage, Verdict, judge_messages
from pytest_lsrb.tactic.lean.repl import ReplClient
from pytest_lsrb.tactic.lean.splice import splice

__all__ = [
    "FileBackend",
    "Goal",
    "Hypothesis",
    "LeanBackend",
    "LeanMessage",
    "LeanRun",
    "ReplBackend",
    "ReplClient",
    "Restatement",
    "Unrestatable",
    "Verdict",
    "judge_messages",
    "parse_goal",
    "restate",
    "splice",
]
