"""Published JSON Schemas, generated from the pydantic models at every boundary (`lsrb schema NAME`).

The registry maps a schema name to the model that defines it, imported lazily: a model whose
module is not part of this installation is listed as unavailable rather than breaking the rest.
Add a schema by adding one line to SCHEMAS.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from pytest_lsrb.core.errors import LsrbUsageError

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_VERSION: Final = 1


@dataclass(frozen=True)
class SchemaSource:
    target: str  # "module:Model"
    describes: str
    # Rewrites the model's schema into the file's shape, when the file is not the model itself.
    derive: Callable[[dict[str, Any]], dict[str, Any]] | None = None


class _Generator(GenerateJsonSchema):
    """pydantic's generator, plus numpy arrays as the tables of numbers they are read from."""

    def is_instance_schema(self, schema: core_schema.IsInstanceSchema) -> JsonSchemaValue:
        cls = schema.get("cls")
        if getattr(cls, "__module__", "") == "numpy" and getattr(cls, "__name__", "") == "ndarray":
            return {
                "type": "array",
                "minItems": 1,
                "description": "rows of numbers (a 2-D table)",
                "items": {"type": "array", "items": {"type": "number"}},
            }
        return super().is_instance_schema(schema)


def problem_index_row(schema: dict[str, Any]) -> dict[str, Any]:
    """An LLM-SRBench index line: the problem's fields with its tables replaced by a data path."""
    from pytest_lsrb.srbench.data.problem import SPLITS

    props = {k: v for k, v in schema.get("properties", {}).items() if k not in SPLITS}
    props["data"] = {
        "type": "string",
        "minLength": 1,
        "description": "the problem's data: an .npz file or a CSV folder, relative to the index",
    }
    props["data_sha256"] = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    required = [k for k in schema.get("required", []) if k not in SPLITS] + ["data"]
    return {**schema, "properties": props, "required": required}


SCHEMAS: dict[str, SchemaSource] = {
    "index_row": SchemaSource(
        "pytest_lsrb.tactic.rows:TacticRow", "one line of a tactic suite's index.jsonl (SorryDB-compatible)"
    ),
    "attempt_record": SchemaSource("pytest_lsrb.engine.records:AttemptRecord", "one line of attempts.jsonl"),
    "tactic_attempt_record": SchemaSource(
        "pytest_lsrb.tactic.records:TacticAttemptRecord", "one line of a tactic suite's attempts.jsonl"
    ),
    "srbench_attempt_record": SchemaSource(
        "pytest_lsrb.srbench.records:SrbenchAttemptRecord", "one line of an llm_srbench run's attempts.jsonl"
    ),
    "summary": SchemaSource("pytest_lsrb.output.models:Summary", "summary.json"),
    "run": SchemaSource("pytest_lsrb.output.models:RunHeader", "run.json"),
    "replay_profile": SchemaSource(
        "pytest_lsrb.tactic.profiles:ReplayProfile", "one repo_replay profile (schema_version 1)"
    ),
    "problem": SchemaSource(
        "pytest_lsrb.srbench.data.problem:Problem",
        "one LLM-SRBench problem with its data tables inline (equation discovery)",
    ),
    "problem_index_row": SchemaSource(
        "pytest_lsrb.srbench.data.problem:Problem",
        "one line of an LLM-SRBench problem index (data in an .npz file or a CSV folder)",
        derive=problem_index_row,
    ),
}


def load_model(name: str) -> type[BaseModel]:
    """The pydantic model behind a schema name; unknown or unavailable names are usage errors."""
    try:
        source = SCHEMAS[name]
    except KeyError:
        raise LsrbUsageError(f"no schema '{name}' (schemas: {', '.join(sorted(SCHEMAS))}).") from None
    module_name, attr = source.target.split(":")
    try:
        model = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        raise LsrbUsageError(
            f"schema '{name}' is not available in this installation ({source.target} is missing)."
        ) from None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise LsrbUsageError(f"schema '{name}': {source.target} is not a pydantic model.")
    return model


def available() -> dict[str, bool]:
    """Every registered name -> whether its model can be imported here."""
    out = {}
    for name in SCHEMAS:
        try:
            load_model(name)
            out[name] = True
        except LsrbUsageError:
            out[name] = False
    return out


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one registered model."""
    model = load_model(name)
    schema = model.model_json_schema(mode="validation", schema_generator=_Generator)
    derive = SCHEMAS[name].derive
    if derive is not None:
        schema = derive(schema)
        schema["title"] = "".join(part.capitalize() for part in name.split("_"))
        schema.pop("description", None)
    head = {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": f"urn:pytest-lsrb:schema:{name}:v{SCHEMA_VERSION}",
        "title": schema.pop("title", model.__name__),
        "description": schema.pop("description", SCHEMAS[name].describes),
    }
    return {**head, **schema}


def dumps_schema(name: str) -> str:
    return json.dumps(json_schema(name), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def listing() -> str:
    """One line per schema: name, what it describes, and whether this installation has it."""
    state = available()
    width = max(len(n) for n in SCHEMAS)
    return "\n".join(
        f"{name.ljust(width)}  {SCHEMAS[name].describes}" + ("" if state[name] else "  (not available here)")
        for name in SCHEMAS
    )
