"""The tactic family's attempt record: the shared `AttemptRecord` plus what the tactic task adds
(published as the `tactic_attempt_record` JSON Schema). Add a tactic field in `TacticFields`,
with a docstring under it (`engine.records` says what follows from it)."""

from __future__ import annotations

from typing import Any

from pydantic import with_config

from pytest_lsrb.engine.records import RECORD_CONFIG, AttemptFields, AttemptRecord


@with_config(RECORD_CONFIG)
class TacticFields(AttemptFields, total=False):
    """What the tactic task's `run_attempt` returns: the shared fields and these."""

    tactic: str | None
    """The tactic (with its nested block) or, in proof mode, the proof read from the answer
    (also `proposal`)."""
    contains_sorry: bool | None
    """The answer holds sorry/admit: never verified, a model failure."""
    answer_format: str | None
    """The rules of tactic/answer.py that read the answer (`think+fences+header`)."""
    answer_mode: str | None
    """`tactic` (one tactic) or `proof` (--lsrb-answer proof)."""
    repo_replay_profile_id: str | None
    """The replay profile the row matched (repo_replay)."""
    repo_remote: str | None
    """The row's repository (the summary's by_repository)."""
    repo_lean_version: str | None
    """The row's Lean version (the summary's by_lean_version)."""
    search_tree: dict[str, Any] | None
    """With --lsrb-answer search: `root` (the sorry's proof state), `stop` (why the search ended:
    completed, failures, iterations, unparsed, invalid_state, no_open_state, model_error,
    repl_failed), `iterations` (model calls) and `steps` in order (`state`, `tactic`, then
    `result` and `goals` left, or `error`); the proof found is `tactic`."""
    sorrydb: dict[str, Any] | None
    """A run imported from SorryDB (`lsrb import sorrydb-results`): SorryDB's own fields beside the
    record - its extracted `proof`, `proof_verified`, `verification_message`, `strategy_name`,
    `success`, `error_type`, and this attempt's proof (`attempt_proof`); the record's verdict is
    SorryDB's (`verification_mode` `sorrydb_recorded`), its reading (`tactic`) this project's."""
    feedback_rounds: list[dict[str, Any]] | None
    """With --lsrb-feedback-rounds: every round in order (`round`, `answer`, `outcome`, `subkind`,
    `lean`: Lean's reply shown to the next round, `prompt_hash`, `prompt_tokens`,
    `completion_tokens`, `latency_ms`); the attempt's verdict is the last round's."""


@with_config(RECORD_CONFIG)
class TacticAttemptRecord(AttemptRecord, TacticFields):
    """One goal_to_tactic_proposal_v1 attempt."""
