"""Every key an llm_srbench record holds is a field of the published schema
(`SrbenchAttemptRecord`, `lsrb schema`), for every discovery method: the schema allows extra
keys, so without this a method's new field would go out undocumented and untyped."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from lsrb_testing import SUITES
from pydantic import TypeAdapter

from pytest_lsrb.srbench.records import SrbenchAttemptRecord

SUITE = SUITES / "llm_srbench"


@pytest.mark.parametrize("method", ["direct", "llmsr", "lasr", "sga"])
def test_every_record_key_is_a_schema_field(method: str, run_suite, tmp_path: Path) -> None:
    result = run_suite(
        f"--lsrb-sr-method={method}",
        "--lsrb-sr-budget=2",
        "--lsrb-max-items=2",
        "--lsrb-outcome=record",
        # LaSR at the reference's settings searches for minutes; the record's shape is the same
        *(["--lsrb-sr-time-limit=10"] if method == "lasr" else []),
        suite=SUITE,
        out=tmp_path / method,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    records = result.attempts()
    assert records
    known = set(typing.get_type_hints(SrbenchAttemptRecord))
    for rec in records:
        assert set(rec) - known == set(), rec["item_id"]
        # and each value has the definition's type, checked strictly
        TypeAdapter(SrbenchAttemptRecord).validate_python(rec, strict=True)
