"""The tactic family's attempt record: the shared `AttemptRecord` plus what the tactic task adds
(published as the `tactic_attempt_record` JSON Schema)."""

from __future__ import annotations

from pytest_lsrb.engine.records import AttemptDict, AttemptFields, AttemptRecord


class TacticAttemptRecord(AttemptRecord):
    """One goal_to_tactic_proposal_v1 attempt."""

    tactic: str | None = None  # the tactic (with its nested block) or, in proof mode, the proof read
    # from the answer (also `proposal`)
    contains_sorry: bool | None = None  # sorry/admit in the tactic: never verified, a model failure
    answer_format: str | None = None  # the rules of tactic/answer.py that read it (`think+fences+header`)
    answer_mode: str | None = None  # `tactic` (one tactic) or `proof` (--lsrb-answer proof)
    repo_replay_profile_id: str | None = None  # the replay profile the row matched
    repo_remote: str | None = None  # the row's repository (the summary's by_repository)
    repo_lean_version: str | None = None  # its Lean version (the summary's by_lean_version)


class TacticFields(AttemptFields, total=False):
    """What the tactic task's `run_attempt` returns: `TacticAttemptRecord`'s optional fields."""

    tactic: str | None
    contains_sorry: bool | None
    answer_format: str | None
    answer_mode: str | None
    repo_replay_profile_id: str | None
    repo_remote: str | None
    repo_lean_version: str | None


class TacticAttemptDict(AttemptDict, TacticFields):
    """`TacticAttemptRecord` as a TypedDict: one tactic record, a plain dict at run time."""
