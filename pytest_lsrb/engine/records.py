"""The attempt record: one JSON line per attempt in attempts.jsonl.

Field names come from the benchmark card; add fields, never rename these. Suites add their own
metrics as extra fields (e.g. `nmse_id`, `acc_tau_id`, `symbolic_match`).
"""

from __future__ import annotations

from typing import Annotated, Final, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import describe_validation_error
from pytest_lsrb.core.textfiles import lone_surrogate_problem

RECORD_SCHEMA_VERSION: Final = 1

# Fields that measure time and so differ between otherwise identical runs.
TIMING_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "latency_ms",
        "verification_latency_ms",
        "finished_at",
        "wall_time_s",
        "generation_latency_ms",
        "queue_ms",
    }
)


class AttemptRecord(BaseModel):
    """What one attempt of any task produced: the fields every family shares. Each family extends
    it with its own (`tactic.records.TacticAttemptRecord`, `srbench.records.SrbenchAttemptRecord`);
    `ReadBack` is what readers check when a record is read back."""

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
    latency_ms: float = 0.0
    # waited for a model slot behind other attempts (engine.runner), not in latency_ms; None when
    # the attempt asked no endpoint that queues (the mock, cache hits)
    queue_ms: float | None = None
    model_calls: int = 0
    cached: bool = False
    # adapters.usage: what the calls cost and how they ended (None when the server did not say).
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    served_model: str | None = None
    adapter_class: str | None = None  # a user's own adapter (an lsrb_adapter override)
    adapter_settings_sha256: str | None = None  # ... and a hash of its identity()
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
    verification_toolchain: str | None = None
    finished_at: str | None = None


class AttemptFields(TypedDict, total=False):
    """`AttemptRecord`'s fields with defaults, as a static type at no runtime cost: what a task's
    `run_attempt` returns (each family extends it). tests/engine/test_record_types.py checks it
    against the pydantic model (same keys, same optional set, same types)."""

    record_schema_version: int
    prompt_hash: str | None
    prompt: list[dict[str, str]] | None
    raw_output: str | None
    proposal: str | None
    valid: bool
    nonempty: bool
    latency_ms: float
    queue_ms: float | None
    model_calls: int
    cached: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    served_model: str | None
    adapter_class: str | None
    adapter_settings_sha256: str | None
    system_fingerprint: str | None
    generation_error_kind: str | None
    generation_error_domain: str | None
    generation_error_message: str | None
    verification_mode: str
    verification_attempted: bool
    verification_success: bool | None
    verification_outcome: str
    verification_error_kind: str | None
    verification_error_domain: str | None
    verification_error_subkind: str | None
    verification_detail: str | None
    verification_latency_ms: float
    verification_toolchain: str | None
    finished_at: str | None


class AttemptDict(AttemptFields):
    """One attempt record as the engine builds and reads it: `AttemptRecord` as a TypedDict (its
    required fields required). A plain dict at run time, so building one costs nothing more;
    families extend it (`TacticAttemptDict`, `SrbenchAttemptDict`)."""

    item_id: str
    sample_index: int
    attempt_seed: int
    suite: str
    adapter: str
    model: str
    config_hash: str


Number = Annotated[float, Field(strict=True)]  # an int or a float; never "3", never true
Count = Annotated[int, Field(strict=True, ge=0)]
Flag = Annotated[bool, Field(strict=True)]  # true or false; never "yes"


class ReadBack(BaseModel):
    """The fields every reader of an earlier run relies on (resume, summary, gate, report, merge),
    with their JSON types checked strictly: a tampered record (`"latency_ms": "3"`,
    `"valid": "yes"`, a list where an error kind belongs) is refused, not guessed at."""

    model_config = ConfigDict(extra="allow")

    item_id: str
    sample_index: int = Field(ge=0)
    config_hash: str | None = None
    raw_output: str | None = None
    tactic: str | None = None
    proposal: str | None = None
    valid: Flag | None = None
    nonempty: Flag | None = None
    contains_sorry: Flag | None = None
    latency_ms: Number | None = None
    verification_latency_ms: Number | None = None
    model_calls: Count | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    cached: Flag | None = None
    generation_error_kind: str | None = None
    generation_error_domain: str | None = None
    generation_error_message: str | None = None
    verification_mode: str | None = None
    verification_attempted: Flag | None = None
    verification_success: Flag | None = None
    verification_outcome: str | None = None
    verification_error_kind: str | None = None
    verification_error_domain: str | None = None
    verification_error_subkind: str | None = None
    repo_replay_profile_id: str | None = None
    nmse_id: Number | None = None
    nmse_ood: Number | None = None


def check_record(record: AttemptDict, where: str) -> None:
    """Refuse (one sentence naming `where` and the field) a record the engine could not read back."""
    try:
        ReadBack.model_validate(record)
    except ValidationError as exc:
        raise LsrbUsageError(f"{where}: {describe_validation_error(exc)}.") from None
    # The key is hashed (shards, seeds) and printed: a lone surrogate, which no run writes (an
    # index holding one is refused), cannot be either.
    problem = lone_surrogate_problem({"item_id": record["item_id"]})
    if problem is not None:
        raise LsrbUsageError(f"{where}: {problem}.")


def record_key(record: AttemptDict) -> tuple[str, int]:
    return (str(record["item_id"]), int(record["sample_index"]))


def strip_timing(record: AttemptDict) -> dict[str, object]:
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}
