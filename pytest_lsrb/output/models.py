"""The shapes of run.json and summary.json as pydantic models, for the published JSON Schemas.

outputs.py writes these files from plain dicts; these models say what a reader may rely on. Both
allow extra keys: suites add their own summary sections (e.g. LLM-SRBench's table) and later
versions add fields without renaming these.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

Rate = Annotated[float, Field(ge=0.0, le=1.0)]
Hash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256, hex")]
Counts = Annotated[dict[str, Annotated[int, Field(ge=0)]], Field(description="kind or domain -> attempts")]

PASS_AT_K_PATTERN = r"^verification_pass_at_k_[1-9][0-9]*$"


class RunHeader(BaseModel):
    """run.json: the identity of a run, written before the first attempt (resume checks it)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = Field(ge=1)
    suite: str
    config: dict[str, Any] = Field(description="the run config: every identity option by its key")
    config_hash: Hash
    selected_rows_hash: Hash
    selected_items: int = Field(ge=0)
    shard_count: int = Field(ge=1)
    shard_index: int = Field(ge=0)
    attempts_expected: int = Field(ge=0)
    started_at: str | None = None


class Summary(BaseModel):
    """summary.json: aggregate metrics over the latest record of each attempt of the run."""

    model_config = ConfigDict(
        extra="allow",
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
    suite: str
    config: dict[str, Any]
    config_hash: Hash
    selected_rows_hash: Hash
    selected_items: int = Field(ge=0)
    shard_count: int = Field(ge=1)
    shard_index: int = Field(ge=0)
    attempts_expected: int = Field(ge=0)
    complete: bool
    profile_config_path: str | None = None
    attempts: int = Field(ge=0)
    items: int = Field(ge=0)
    answered_attempts: int | None = Field(
        None,
        ge=0,
        description="attempts the model answered (all but generation infrastructure errors): "
        "the denominator of valid_rate and nonempty_rate",
    )
    judged_attempts: int | None = Field(
        None,
        ge=0,
        description="answered attempts the checker gave a verdict on (no infrastructure error or "
        "profile skip): "
        "the denominator of the success rates and pass@k",
    )
    infrastructure_attempts: int | None = Field(
        None,
        ge=0,
        description="attempts an infrastructure error (transport, provider, environment, harness) "
        "kept from being judged",
    )
    skipped_attempts: int | None = Field(
        None,
        ge=0,
        description="attempts the checker has no verdict for (a profile skip, no symbolic verdict)",
    )
    valid_rate: Rate | None = Field(description="of answered attempts")
    nonempty_rate: Rate | None = Field(description="of answered attempts")
    contains_sorry_rate: Rate | None = Field(None, description="tactic suite only; of answered attempts")
    model_calls: int = Field(ge=0)
    cached_attempts: int = Field(ge=0)
    latency_ms_mean: float | None
    latency_ms_p50: float | None
    latency_ms_p95: float | None
    generation_error_rate: Rate | None
    generation_error_kinds: Counts
    generation_error_domains: Counts
    verification_attempted_rate: Rate | None
    success_rate: Rate | None = Field(
        None,
        description="of judged attempts, by the judging rule: the checker's verdict, or a valid "
        "answer under --lsrb-verification none (the number the gate, compare, report and merge give)",
    )
    verification_success_rate: Rate | None = Field(
        description="of judged attempts; null when nothing was verified (--lsrb-verification none)"
    )
    verification_success_rate_of_attempted: Rate | None
    verification_error_rate: Rate | None
    verification_latency_ms_mean: float | None
    verification_latency_ms_p50: float | None
    verification_latency_ms_p95: float | None
    verification_error_kinds: Counts
    verification_error_domains: Counts
    profile_match_counts: Counts | None = Field(None, description="tactic suite only")
    wall_time_s: float | None = None
