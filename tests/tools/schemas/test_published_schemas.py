"""The published JSON Schemas accept what the project really writes and reject what it never would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is a dev dependency (.[dev])")

from pytest_lsrb.cli import main  # noqa: E402
from pytest_lsrb.core.errors import LsrbUsageError  # noqa: E402
from pytest_lsrb.core.textfiles import read_toml  # noqa: E402
from pytest_lsrb.tools import schemas  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


def validator(name: str) -> Any:
    schema = schemas.json_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_every_available_schema_is_a_valid_draft_2020_12_schema() -> None:
    state = schemas.available()
    assert {"index_row", "attempt_record", "summary", "run"} <= {n for n, ok in state.items() if ok}
    for name, ok in state.items():
        if ok:
            schema = schemas.json_schema(name)
            assert schema["$schema"] == schemas.JSON_SCHEMA_DIALECT
            assert schema["$id"].startswith(f"urn:pytest-lsrb:schema:{name}:")
            jsonschema.Draft202012Validator.check_schema(schema)


def test_a_real_run_validates_against_the_published_schemas(run_suite: Callable[..., Any]) -> None:
    result = run_suite("--lsrb-samples=2", "--lsrb-max-items=12")
    assert result.returncode == 0, result.stdout[-2000:]
    out = result.out_dir
    validator("run").validate(json.loads((out / "run.json").read_text()))
    summary = result.summary()
    validator("summary").validate(summary)
    with pytest.raises(jsonschema.ValidationError, match=r"1\.5"):
        validator("summary").validate({**summary, "valid_rate": 1.5})
    with pytest.raises(jsonschema.ValidationError):
        validator("summary").validate({**summary, "selected_rows_hash": "not-a-hash"})
    records = result.attempts()
    assert len(records) == 24
    for name in ("attempt_record", "tactic_attempt_record"):  # the shared base and the family's own
        check = validator(name)
        for record in records:
            check.validate(record)
    with pytest.raises(jsonschema.ValidationError):
        validator("tactic_attempt_record").validate({**records[0], "repo_remote": 3})


def test_the_built_in_index_rows_validate() -> None:
    check = validator("index_row")
    lines = (REPO / "suites" / "goal_to_tactic_proposal_v1" / "index.jsonl").read_text().splitlines()
    assert lines
    for line in lines:
        check.validate(json.loads(line))


def test_the_shipped_replay_profiles_validate() -> None:
    if not schemas.available()["replay_profile"]:
        pytest.skip("replay profiles are not part of this installation")
    files = sorted((REPO / "profiles").glob("*.toml"))
    if not files:
        pytest.skip("no profiles/*.toml in this checkout")
    check = validator("replay_profile")
    for path in files:
        check.validate(read_toml(path))
    with pytest.raises(jsonschema.ValidationError):
        check.validate({"schema_version": 1, "no_such_key": True})


@pytest.mark.parametrize(
    ("name", "document"),
    [
        (
            "attempt_record",
            {
                "sample_index": 0,
                "attempt_seed": 1,
                "suite": "s",
                "adapter": "a",
                "model": "m",
                "config_hash": "c",
            },
        ),  # no item_id
        (
            "attempt_record",
            {
                "item_id": "x",
                "sample_index": "0",
                "attempt_seed": 1,
                "suite": "s",
                "adapter": "a",
                "model": "m",
                "config_hash": "c",
            },
        ),
        (
            "index_row",
            {
                "item_id": "x",
                "repo_remote": "r",
                "repo_branch": "b",
                "repo_commit": "c",
                "repo_lean_version": "v",
                "path": "p",
                "start_line": 0,
                "start_column": 0,
                "end_line": 1,
                "end_column": 0,
                "goal_text": "⊢ True",
            },
        ),  # lines are 1-based
        ("summary", {"verification_pass_at_k_2": 1.5}),
    ],
)
def test_documents_the_project_never_writes_are_rejected(name: str, document: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        validator(name).validate(document)


def test_lsrb_schema_prints_the_schema_and_lists_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "attempt_record"]) == 0
    assert json.loads(capsys.readouterr().out) == schemas.json_schema("attempt_record")
    assert main(["schema"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in schemas.SCHEMAS)
    assert main(["schema", "no_such_schema"]) == 2
    assert "no schema 'no_such_schema'" in capsys.readouterr().err


def test_an_unavailable_schema_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(schemas.SCHEMAS, "ghost", schemas.SchemaSource("pytest_lsrb.no_such_module:X", "x"))
    assert schemas.available()["ghost"] is False
    with pytest.raises(LsrbUsageError, match="not available in this installation"):
        schemas.json_schema("ghost")


def test_llm_srbench_problem_files_validate(tmp_path: Path) -> None:
    """Problems written by the srbench writer (index line + .npz) and inline problems validate."""
    if not schemas.available()["problem"]:
        pytest.skip("the LLM-SRBench problem model is not part of this installation")
    from pytest_lsrb.srbench.data.loaders import load_index, write_problem_files
    from pytest_lsrb.srbench.data.problem import Problem

    table = [[2.0, 1.0, 1.0], [5.0, 2.0, 3.0], [10.0, 3.0, 7.0]]
    problem = Problem.model_validate(
        {
            "name": "toy_sum",
            "symbols": ["y", "a", "b"],
            "symbol_descs": ["sum", "first", "second"],
            "symbol_properties": ["O", "V", "V"],
            "expression": "a + b",
            "problem_set": "lsr_synth",
            "domain": "physics",
            "train": table,
            "test": table,
            "ood_test": table,
        }
    )
    index = write_problem_files([problem], tmp_path / "problems.jsonl")
    assert [p.name for p in load_index(index)] == ["toy_sum"]  # the writer's output is loadable
    row_check = validator("problem_index_row")
    for line in index.read_text(encoding="utf-8").splitlines():
        row_check.validate(json.loads(line))
    with pytest.raises(jsonschema.ValidationError):
        row_check.validate({**json.loads(index.read_text().splitlines()[0]), "train": table})
    inline = {**problem.metadata(), "train": table, "test": table}
    validator("problem").validate(inline)
    with pytest.raises(jsonschema.ValidationError):
        validator("problem").validate({**inline, "train": [["x"]]})


def test_llm_srbench_records_validate_against_their_family_schema(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(REPO / "tests" / "report"))
    from synthetic_runs import equation_run

    out = equation_run(tmp_path / "eq", problems=5, samples=2)
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    for name in ("attempt_record", "srbench_attempt_record"):
        check = validator(name)
        for record in records:
            check.validate(record)
    with pytest.raises(jsonschema.ValidationError):
        validator("srbench_attempt_record").validate({**records[0], "acc_tau_id": "yes"})
