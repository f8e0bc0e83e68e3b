"""The attempt record: one JSON line per attempt in attempts.jsonl.

Field names come from the benchmark card; add fields, never rename these. Suites add their own
metrics as extra fields (e.g. `nmse_id`, `acc_tau_id`, `symbolic_match`).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import describe_validation_error

RECORD_SCHEMA_VERSION: Final = 1

# Fields that measure time and so differ between otherwise identical runs.
TIMING_FIELDS: Final[frozenset[str]] = frozenset(
    {"latency_ms", "verification_latency_ms", "finished_at", "wall_time_s", "generation_latency_ms"}
)


class AttemptRecord(BaseModel):
    """What one attempt produced. Validated when records are read back (resume, merge, report)."""

    model_config = ConfigDict(extra="allow")

    record_schema_version: int = RECORD_SCHEMA_VERSION
    item_id: str
    sample_index: int
    attempt_seed: int
    suite: str
    adapter: str
    model: str
    config_hash: str
    prompt_hash: str | None = None
    prompt: list[dict[str, str]] | None = None  # the messages sent ({role, content}), if recorded
    raw_output: str | None = None
    proposal: str | None = None
    valid: bool = False
    nonempty: bool = False
    contains_sorry: bool | None = None
    latency_ms: float = 0.0
    model_calls: int = 0
    cached: bool = False
    # adapters.usage: what the calls cost and how they ended (None when the server did not say).
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    generation_error_kind: str | None = None
    generation_error_domain: str | None = None
    generation_error_message: str | None = None
    verification_mode: str = "none"
    verification_attempted: bool = False
    verification_success: bool | None = None
    verification_outcome: str = "not_attempted"
    verification_error_kind: str | None = None
    verification_error_domain: str | None = None
    verification_error_subkind: str | None = None
    verification_detail: str | None = None
    verification_latency_ms: float = 0.0
    repo_replay_profile_id: str | None = None
    verification_toolchain: str | None = None
    finished_at: str | None = None


class ReadBack(BaseModel):
    """The fields the engine reads back from an earlier run (resume, summary, merge), with the
    types it relies on. Lax: `"3"` is a fine latency; a list where an error kind belongs is not."""

    model_config = ConfigDict(extra="allow")

    item_id: str
    sample_index: int = Field(ge=0)
    config_hash: str | None = None
    raw_output: str | None = None
    tactic: str | None = None
    proposal: str | None = None
    latency_ms: float | None = None
    verification_latency_ms: float | None = None
    model_calls: int | None = None
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cached: bool | None = None
    generation_error_kind: str | None = None
    generation_error_domain: str | None = None
    generation_error_message: str | None = None
    verification_outcome: str | None = None
    verification_error_kind: str | None = None
    verification_error_domain: str | None = None
    verification_error_subkind: str | None = None
    repo_replay_profile_id: str | None = None
    nmse_id: float | None = None
    nmse_ood: float | None = None


def check_record(record: dict[str, Any], where: str) -> None:
    """Refuse (one sentence naming `where` and the field) a record the engine could not read back."""
    try:
        ReadBack.model_validate(record)
    except ValidationError as exc:
        raise LsrbUsageError(f"{where}: {describe_validation_error(exc)}.") from None


def record_key(record: dict[str, Any]) -> tuple[str, int]:
    return (str(record["item_id"]), int(record["sample_index"]))


def strip_timing(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}
