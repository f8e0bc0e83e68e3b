"""The shapes of run.json and summary.json as pydantic models, for the published JSON Schemas;
the docstring under each field is its description there.

outputs.py writes these files from plain dicts; these models say what a reader may rely on. Both
allow extra keys: suites add their own summary sections (e.g. LLM-SRBench's table) and later
versions add fields without renaming these.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

Rate = Annotated[float, Field(ge=0.0, le=1.0)]
Hash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]  # SHA-256, hex
Counts = dict[str, Annotated[int, Field(ge=0)]]  # kind or domain -> attempts

PASS_AT_K_PATTERN = r"^verification_pass_at_k_[1-9][0-9]*$"


class RunHeader(BaseModel):
    """run.json: the identity of a run, written before the first attempt (resume checks it)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    schema_version: int = Field(ge=1)
    """The version of run.json's and summary.json's shape."""
    suite: str
    """The suite's name."""
    config: dict[str, Any]
    """the run config: every identity option by its key"""
    config_hash: Hash
    """SHA-256 (hex) of `config`: resume and merge refuse a run of another config."""
    selected_rows_hash: Hash
    """SHA-256 (hex) of the selected rows: the same selection, the same hash."""
    selected_items: int = Field(ge=0)
    """Items this shard selected."""
    shard_count: int = Field(ge=1)
    """Shards the selection is split into (--lsrb-shard-count)."""
    shard_index: int = Field(ge=0)
    """This shard (--lsrb-shard-index), below `shard_count`."""
    attempts_expected: int = Field(ge=0)
    """Items times samples: the attempts a complete run has."""
    started_at: str | None = None
    """When the run started (UTC, ISO 8601)."""


class Summary(BaseModel):
    """summary.json: aggregate metrics over the latest record of each attempt of the run."""

    model_config = ConfigDict(
        extra="allow",
        use_attribute_docstrings=True,
        json_schema_extra={
            "patternProperties": {
                PASS_AT_K_PATTERN: {
                    "anyOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "null"}],
                    "description": "item-level pass@k (k <= samples per item); null: no item has k samples",
                }
            }
        },
    )

    schema_version: int = Field(ge=1)
    """The version of run.json's and summary.json's shape."""
    suite: str
    """The suite's name."""
    config: dict[str, Any]
    """The run config (run.json's)."""
    config_hash: Hash
    """SHA-256 (hex) of `config`."""
    selected_rows_hash: Hash
    """SHA-256 (hex) of the selected rows."""
    selected_items: int = Field(ge=0)
    """Items this shard selected."""
    shard_count: int = Field(ge=1)
    """Shards the selection is split into."""
    shard_index: int = Field(ge=0)
    """This shard."""
    attempts_expected: int = Field(ge=0)
    """Items times samples: the attempts a complete run has (of the tests pytest selected: a
    `-k`/`-m` selection is a run of its own)."""
    items_expected: int | None = Field(None, ge=0)
    """Items among the expected attempts."""
    complete: bool
    """Every expected attempt has a record."""
    profile_config_path: str | None = None
    """The repo_replay profile file the run used (tactic suite)."""
    attempts: int = Field(ge=0)
    """Attempts with a record (the latest record of each)."""
    items: int = Field(ge=0)
    """Items with a record."""
    answered_attempts: int | None = Field(None, ge=0)
    """attempts the model answered (all but generation infrastructure errors): the denominator of
    valid_rate and nonempty_rate"""
    judged_attempts: int | None = Field(None, ge=0)
    """answered attempts the checker gave a verdict on (no infrastructure error or profile skip):
    the denominator of the success rates and pass@k"""
    infrastructure_attempts: int | None = Field(None, ge=0)
    """attempts an infrastructure error (transport, provider, environment, harness) kept from being judged"""
    skipped_attempts: int | None = Field(None, ge=0)
    """attempts the checker has no verdict for (a profile skip, no symbolic verdict)"""
    valid_rate: Rate | None
    """of answered attempts"""
    nonempty_rate: Rate | None
    """of answered attempts"""
    contains_sorry_rate: Rate | None = None
    """tactic suite only; of answered attempts"""
    model_calls: int = Field(ge=0)
    """HTTP requests sent, over all attempts."""
    cached_attempts: int = Field(ge=0)
    """Attempts answered from the response cache."""
    latency_ms_mean: float | None
    """Mean model latency per attempt, in milliseconds (a timing field)."""
    latency_ms_p50: float | None
    """Its median."""
    latency_ms_p95: float | None
    """Its 95th percentile."""
    generation_error_rate: Rate | None
    """Attempts with a generation error (no usable answer from the endpoint: transport, provider,
    harness; infrastructure), of all attempts."""
    generation_error_kinds: Counts
    """Generation errors: kind -> attempts (infrastructure only; unreadable answers are apart)."""
    generation_error_domains: Counts
    """Generation errors: domain -> attempts."""
    unreadable_answers: int | None = Field(None, ge=0)
    """Answered attempts with nothing usable in the answer (an empty text, prose with no answer
    found): the model's own failure, counted against it, never a generation error."""
    unreadable_answer_rate: Rate | None = None
    """unreadable_answers, of answered attempts"""
    verification_attempted_rate: Rate | None
    """Attempts the checker ran on and decided, of all attempts."""
    success_rate: Rate | None = None
    """of judged attempts, by the judging rule: the checker's verdict, or a valid answer under
    --lsrb-verification none (the number the gate, compare, report and merge give)"""
    verification_success_rate: Rate | None
    """of judged attempts; null when nothing was verified (--lsrb-verification none)"""
    verification_success_rate_of_attempted: Rate | None
    """Verified successes, of the attempts the checker ran on."""
    verification_error_rate: Rate | None
    """Attempts with a verification error, of all attempts."""
    verification_latency_ms_mean: float | None
    """Mean verification latency, in milliseconds (a timing field)."""
    verification_latency_ms_p50: float | None
    """Its median."""
    verification_latency_ms_p95: float | None
    """Its 95th percentile."""
    verification_error_kinds: Counts
    """Verification errors: kind -> attempts."""
    verification_error_domains: Counts
    """Verification errors: domain -> attempts."""
    profile_match_counts: Counts | None = None
    """tactic suite only: the replay profile each attempt matched -> attempts"""
    wall_time_s: float | None = None
    """Wall time of the run, in seconds (a timing field)."""
