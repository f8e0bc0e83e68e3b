"""The attempt record: one JSON line per attempt in attempts.jsonl, defined once.

Field names come from the benchmark card; add fields, never rename these. A record is a plain
dict at run time (building one per attempt costs nothing more than the dict); its shape is the
`TypedDict`s below, each field written once with its docstring under it. From them derive:

- the writer's typing: a task's `run_attempt` returns its family's `*Fields`, the runner adds
  the identity and has an `AttemptRecord` (mypy checks every key and type);
- the JSON Schema (`lsrb schema attempt_record`, `tools.schemas`: pydantic's `TypeAdapter`, the
  docstrings as descriptions);
- the strict reader (`check_record`): the same fields, checked strictly by pydantic, with only the
  attempt's key required.

Each family extends the shared fields with its own (`tactic.records`, `srbench.records`).

Adding a field is a one-place change: write it, with its type and a docstring under it, in the
`*Fields` class of the record that carries it (here for every family, else the family's
`records.py`), then set it where the record is built. The schema, the writer's typing and the
reader follow; tests/engine/test_record_types.py checks every field has a docstring.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Final

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from pydantic.fields import FieldInfo

# pydantic reads typing's TypedDict only from Python 3.12 on
from typing_extensions import NotRequired, Required, TypedDict

from pytest_lsrb.adapters.usage import Count, UsageFields
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

# Fields whose values are the engine's own words or the run's identity, never a server's text:
# written as they are when keys are redacted from a record (`output.files.record_line`), so even a
# key that is also one of these words (`none`) leaves the record readable. Every other string of a
# record, a family's or a plug-in's fields included, is redacted.
OWN_WORD_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "item_id",
        "suite",
        "adapter",
        "model",
        "config_hash",
        "prompt_hash",
        "finished_at",
        "adapter_class",
        "adapter_settings_sha256",
        "generation_error_kind",
        "generation_error_domain",
        "verification_mode",
        "verification_outcome",
        "verification_error_kind",
        "verification_error_domain",
        "verification_error_subkind",
    }
)

# Records allow fields their definition does not name (a newer version's, a user's task's).
RECORD_CONFIG: Final = ConfigDict(extra="allow")


@with_config(RECORD_CONFIG)
class AttemptKey(TypedDict):
    """What identifies an attempt and the run that made it: the runner writes these into every
    record (`engine.runner`), whatever the task."""

    item_id: str
    """The benchmark item (an index row's `item_id`, a problem's name)."""
    sample_index: Count
    """Which sample of the item (0-based, below `--lsrb-samples`)."""
    attempt_seed: int
    """The attempt's seed: a function of the run seed, the item and the sample (`core.seeds`)."""
    suite: str
    """The suite's name."""
    adapter: str
    """The adapter that asked the model (`mock`, `openai`, `ollama`, ...)."""
    model: str
    """The model the run asked for."""
    config_hash: str
    """SHA-256 of the run's identity options (run.json's `config_hash`): resume keeps only the
    records of the same config."""


@with_config(RECORD_CONFIG)
class AttemptFields(UsageFields, total=False):
    """What an attempt of any task produced, every field optional: what a task's `run_attempt`
    returns (each family extends it). An absent field reads as its default, or as null. The
    fields the model calls give (tokens, finish reasons, served model) are `UsageFields`'."""

    record_schema_version: Annotated[int, Field(default=RECORD_SCHEMA_VERSION)]
    """The version of this record's shape (`RECORD_SCHEMA_VERSION`)."""
    prompt_hash: str | None
    """SHA-256 of the messages sent to the model (the same prompt, the same hash)."""
    prompt: list[dict[str, str]] | None
    """The messages sent, as `{role, content}`, when the task records them."""
    raw_output: str | None
    """What the model wrote, whole (an llm_srbench record keeps an excerpt: `raw_output_chars`)."""
    proposal: str | None
    """The answer read from `raw_output`: the tactic, or the equation."""
    valid: Annotated[bool, Field(default=False)]
    """The answer could be read as the task asks (one tactic line, a parsable equation)."""
    nonempty: Annotated[bool, Field(default=False)]
    """The answer is not empty."""
    latency_ms: Annotated[float, Field(default=0.0)]
    """Wall time of the model calls, in milliseconds (a timing field: not compared between runs)."""
    queue_ms: float | None
    """Time the attempt waited for a model slot behind other attempts, in milliseconds
    (`engine.runner`; not part of `latency_ms`; a timing field). Absent when it asked no endpoint
    that queues (the mock, cache hits)."""
    model_calls: Annotated[Count, Field(default=0)]
    """HTTP requests sent for this attempt (retries included; 0 when answered from the cache)."""
    cached: Annotated[bool, Field(default=False)]
    """The answer came from the response cache: no request was sent (every call of the attempt)."""
    calls_refused: Count | None
    """Model calls the harness refused, not sent: past the most the attempt may make (the task's
    `calls_per_attempt`) or past an llm_srbench method's `--lsrb-sr-budget` (`engine.calls`).
    Absent when none was."""
    adapter_class: str | None
    """A user's own adapter (an `lsrb_adapter` override): its class."""
    adapter_settings_sha256: str | None
    """... and a SHA-256 of its `identity()`."""
    generation_error_kind: str | None
    """Why the model gave no usable answer (`timeout`, `rate_limit`, `empty_output`, `harness`,
    ...: `core.errors`); null when it answered."""
    generation_error_domain: str | None
    """Whose failure that is: `transport`, `provider`, `model_output` or `harness`."""
    generation_error_message: str | None
    """The error in one line, keys redacted."""
    verification_mode: Annotated[str, Field(default="none")]
    """The verifier that checked the answer (`none`, `synthetic`, `repo_replay`, `equation`, ...)."""
    verification_attempted: Annotated[bool, Field(default=False)]
    """The verifier ran on the answer."""
    verification_success: bool | None
    """The verifier's verdict; null when there was none."""
    verification_outcome: Annotated[str, Field(default="not_attempted")]
    """The verifier's outcome (`closed`, `progress`, `lean_error`, `timeout`, ...)."""
    verification_error_kind: str | None
    """Why the answer was not verified as a success (`lean_error`, `forbidden_token`, `timeout`, ...)."""
    verification_error_domain: str | None
    """Whose failure that is: `model` (the answer's) or an environment's, never held against the model."""
    verification_error_subkind: str | None
    """A finer kind (`unknown_identifier`, `type_mismatch`, `sorry_axiom`, ...)."""
    verification_detail: str | None
    """The verifier's message, bounded."""
    verification_latency_ms: Annotated[float, Field(default=0.0)]
    """Wall time of the verification, in milliseconds (a timing field)."""
    verification_toolchain: str | None
    """The checker's toolchain (a Lean version), when it said."""
    finished_at: str | None
    """When the attempt finished (UTC, ISO 8601; a timing field)."""


@with_config(RECORD_CONFIG)
class AttemptRecord(AttemptKey, AttemptFields):
    """One attempt of any task: its key, then the fields every family shares. Each family
    extends it with its own (`tactic.records.TacticAttemptRecord`,
    `srbench.records.SrbenchAttemptRecord`)."""


# -- reading records back --------------------------------------------------------------------

# What a record read back must hold: its key. Everything else may be absent (a record written by
# an earlier version, or by hand) but, where present, has the definition's type.
READ_REQUIRED: Final = frozenset({"item_id", "sample_index"})


def reader(record_type: type[Any] = AttemptRecord) -> TypeAdapter[Any]:
    """The strict check of a record read back, derived from `record_type`'s definition: every
    field of its type (checked strictly: `"3"` is no number, `"yes"` no boolean, an int is a
    fine float) or null (a number that was not finite is written as null), only the key
    required, other fields allowed. Built once per record type."""
    found = _READERS.get(record_type)
    if found is None:
        found = _READERS[record_type] = _reader(record_type)
    return found


_READERS: dict[type[Any], TypeAdapter[Any]] = {}


def _reader(record_type: type[Any]) -> TypeAdapter[Any]:
    hints = typing.get_type_hints(record_type, include_extras=True)
    fields = {
        name: Required[hint] if name in READ_REQUIRED else NotRequired[_without_default(hint) | None]
        for name, hint in hints.items()
    }
    read_back = with_config(RECORD_CONFIG)(TypedDict(f"{record_type.__name__}ReadBack", fields))  # type: ignore[operator]
    return TypeAdapter(read_back)


def _without_default(hint: Any) -> Any:
    """`hint` with its constraints (`ge=0`) but not its default, which means nothing inside the
    union with null the reader makes of it."""
    if typing.get_origin(hint) is not Annotated:
        return hint
    base, *metadata = typing.get_args(hint)
    kept = [m for item in metadata for m in (item.metadata if isinstance(item, FieldInfo) else [item])]
    args = (base, *kept)
    return Annotated[args] if kept else base


def check_record(record: AttemptRecord, where: str, record_type: type[Any] = AttemptRecord) -> None:
    """Refuse (one sentence naming `where` and the field) a record the engine could not read back:
    a field of the wrong type (`"latency_ms": "3"`, `"valid": "yes"`, a list where an error kind
    belongs) is refused, not guessed at. `record_type`: the family's record, when known."""
    try:
        reader(record_type).validate_python(record, strict=True)
    except ValidationError as exc:
        raise LsrbUsageError(f"{where}: {describe_validation_error(exc)}.") from None
    # The key is hashed (shards, seeds) and printed: a lone surrogate, which no run writes (an
    # index holding one is refused), cannot be either.
    problem = lone_surrogate_problem({"item_id": record["item_id"]})
    if problem is not None:
        raise LsrbUsageError(f"{where}: {problem}.")


def record_key(record: AttemptRecord) -> tuple[str, int]:
    return (str(record["item_id"]), int(record["sample_index"]))


def strip_timing(record: AttemptRecord) -> dict[str, object]:
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}
