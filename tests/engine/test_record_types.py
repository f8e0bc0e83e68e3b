"""The record TypedDicts (the static types records are built and read as) agree with the pydantic
schema models (what `lsrb schemas` publishes): same keys, same required set, same types."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_lsrb.adapters.usage import UsageFields
from pytest_lsrb.engine.records import AttemptDict, AttemptFields, AttemptRecord
from pytest_lsrb.srbench.records import SrbenchAttemptDict, SrbenchAttemptRecord, SrbenchFields
from pytest_lsrb.tactic.records import TacticAttemptDict, TacticAttemptRecord, TacticFields

PAIRS = [
    (AttemptDict, AttemptFields, AttemptRecord),
    (TacticAttemptDict, TacticFields, TacticAttemptRecord),
    (SrbenchAttemptDict, SrbenchFields, SrbenchAttemptRecord),
]


def model_types(model: type[BaseModel]) -> dict[str, object]:
    return {name: field.annotation for name, field in model.model_fields.items()}


@pytest.mark.parametrize(("record", "fields", "model"), PAIRS, ids=lambda t: t.__name__)
def test_typed_dict_matches_the_schema_model(record: Any, fields: Any, model: type[BaseModel]) -> None:
    assert typing.get_type_hints(record) == model_types(model)
    required = {name for name, field in model.model_fields.items() if field.is_required()}
    assert record.__required_keys__ == required
    assert record.__optional_keys__ == set(model.model_fields) - required


@pytest.mark.parametrize(("record", "fields", "model"), PAIRS, ids=lambda t: t.__name__)
def test_a_tasks_fields_are_the_records_optional_ones(
    record: Any, fields: Any, model: type[BaseModel]
) -> None:
    """What `run_attempt` returns (the `*Fields` type) is every field but the identity the
    runner adds, all optional."""
    assert fields.__required_keys__ == frozenset()
    assert fields.__optional_keys__ == record.__optional_keys__


def test_the_usage_fields_are_record_fields_of_the_same_types() -> None:
    """`adapters.usage.UsageFields` (spread into every tactic record) is a part of the record."""
    record = model_types(AttemptRecord)
    usage = typing.get_type_hints(UsageFields)
    assert usage == {name: record[name] for name in usage}
