"""One definition per record (`engine.records`, `tactic.records`, `srbench.records`): the
TypedDicts records are built as are what `lsrb schema` publishes and what the reader checks, and
every field is documented where it is defined."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.records import AttemptFields, AttemptKey, AttemptRecord, check_record, reader
from pytest_lsrb.output.models import RunHeader, Summary
from pytest_lsrb.srbench.records import SrbenchAttemptRecord, SrbenchFields
from pytest_lsrb.tactic.records import TacticAttemptRecord, TacticFields
from pytest_lsrb.tools.schemas import SCHEMAS, field_docs, json_schema, load_model

RECORDS = {
    "attempt_record": (AttemptRecord, AttemptFields),
    "tactic_attempt_record": (TacticAttemptRecord, TacticFields),
    "srbench_attempt_record": (SrbenchAttemptRecord, SrbenchFields),
}


@pytest.mark.parametrize("name", RECORDS)
def test_the_published_schema_is_the_definition(name: str) -> None:
    record, _ = RECORDS[name]
    assert load_model(name) is record
    schema = json_schema(name)
    assert list(schema["properties"]) == list(typing.get_type_hints(record))
    assert set(schema["required"]) == set(record.__required_keys__) == set(AttemptKey.__annotations__)
    assert schema["additionalProperties"] is True
    docs = field_docs(record)
    assert {k: v["description"] for k, v in schema["properties"].items()} == docs


@pytest.mark.parametrize("name", RECORDS)
def test_every_field_has_a_docstring(name: str) -> None:
    record, _ = RECORDS[name]
    docs = field_docs(record)
    assert sorted(set(typing.get_type_hints(record)) - set(docs)) == []
    assert all(doc.strip() for doc in docs.values())


@pytest.mark.parametrize("name", RECORDS)
def test_a_tasks_fields_are_the_records_all_optional_but_the_key(name: str) -> None:
    """What `run_attempt` returns (the `*Fields` type) is every field but the key the runner
    adds, all optional."""
    record, fields = RECORDS[name]
    assert fields.__required_keys__ == frozenset()
    assert set(typing.get_type_hints(fields)) == set(typing.get_type_hints(record)) - set(
        AttemptKey.__annotations__
    )


GOOD: dict[str, Any] = {"item_id": "a", "sample_index": 0}


@pytest.mark.parametrize(
    ("record_type", "field", "value"),
    [
        (AttemptRecord, "latency_ms", "3"),
        (AttemptRecord, "prompt_tokens", -1),
        (AttemptRecord, "suite", 3),
        (TacticAttemptRecord, "contains_sorry", "no"),
        (TacticAttemptRecord, "repo_remote", ["x"]),
        (SrbenchAttemptRecord, "nmse_id", "0.1"),
        (SrbenchAttemptRecord, "acc_tau_ood", 1),
        (SrbenchAttemptRecord, "params", [1.0, "2"]),
    ],
)
def test_the_reader_checks_a_familys_own_fields_strictly(record_type: Any, field: str, value: Any) -> None:
    check_record({**GOOD, field: None}, "here", record_type)  # null: a value that was not finite
    with pytest.raises(LsrbUsageError, match=f"^here: field '{field}[.']"):
        check_record({**GOOD, field: value}, "here", record_type)


def test_the_reader_requires_only_the_key_and_allows_unknown_fields() -> None:
    check_record({**GOOD, "a_newer_field": {"x": 1}}, "here", SrbenchAttemptRecord)
    with pytest.raises(LsrbUsageError, match="sample_index"):
        check_record({"item_id": "a"}, "here")
    assert reader(TacticAttemptRecord) is reader(TacticAttemptRecord)  # built once per family


def test_every_record_schema_name_is_registered() -> None:
    assert {n for n, s in SCHEMAS.items() if s.target.endswith("AttemptRecord")} == set(RECORDS)


@pytest.mark.parametrize("model", [Summary, RunHeader], ids=lambda m: m.__name__)
def test_every_summary_and_run_field_has_a_docstring(model: type[BaseModel]) -> None:
    """summary.json's and run.json's models describe each field by the docstring under it."""
    assert [name for name, field in model.model_fields.items() if not field.description] == []
