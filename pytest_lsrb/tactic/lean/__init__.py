"""Lean verification machinery: goals, scripts, splicing, backends, checkouts and verdicts."""

from pytest_lsrb.tactic.lean.backend import FileBackend, LeanBackend, LeanRun, ProofStateBackend, ReplBackend
from pytest_lsrb.tactic.lean.goal import Goal, Hypothesis, Restatement, Unrestatable, parse_goal, restate
from pytest_lsrb.tactic.lean.outcome import LeanMessage, Verdict, judge_messages, judge_tactic_reply
from pytest_lsrb.tactic.lean.repl import ReplClient
from pytest_lsrb.tactic.lean.splice import splice

__all__ = [
    "FileBackend",
    "Goal",
    "Hypothesis",
    "LeanBackend",
    "LeanMessage",
    "LeanRun",
    "ProofStateBackend",
    "ReplBackend",
    "ReplClient",
    "Restatement",
    "Unrestatable",
    "Verdict",
    "judge_messages",
    "judge_tactic_reply",
    "parse_goal",
    "restate",
    "splice",
]
