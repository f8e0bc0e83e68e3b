"""Published JSON Schemas, generated from the definitions at every boundary (`lsrb schema NAME`).

The registry maps a schema name to the type that defines it, imported lazily: a pydantic model or
a `TypedDict` pydantic validates (the attempt records, `engine.records`), whose fields' docstrings
become their descriptions. A type whose module is not part of this installation is listed as
unavailable rather than breaking the rest. Add a schema by adding one line to SCHEMAS.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, TypeAdapter
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


def load_model(name: str) -> type[Any]:
    """The type behind a schema name (a pydantic model or a `TypedDict`); unknown or unavailable
    names are usage errors."""
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
    if not (isinstance(model, type) and (issubclass(model, BaseModel) or is_typeddict(model))):
        raise LsrbUsageError(f"schema '{name}': {source.target} is not a pydantic model or a TypedDict.")
    return model


def is_typeddict(tp: type[Any]) -> bool:
    return issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def field_docs(tp: type[Any]) -> dict[str, str]:
    """The docstring written under each field of a `TypedDict` and of the TypedDicts it extends
    (pluggy's and inspect_ai's way of documenting a record's fields), by field name."""
    docs: dict[str, str] = {}
    for base in getattr(tp, "__orig_bases__", ()):
        if isinstance(base, type) and is_typeddict(base):
            docs |= field_docs(base)
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(tp))).body[0]
    except (OSError, TypeError, IndexError):  # no source (a zipped install): no descriptions
        return docs
    stmts = body.body if isinstance(body, ast.ClassDef) else []
    for stmt, after in itertools.pairwise(stmts):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


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
    if is_typeddict(model):
        schema = TypeAdapter(model).json_schema(mode="validation", schema_generator=_Generator)
        described(schema, field_docs(model))
    else:
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


def described(schema: dict[str, Any], docs: dict[str, str]) -> None:
    """Give each property its field's docstring as its description, and each optional property
    that may be null the default an absent field reads as (null)."""
    required = set(schema.get("required", ()))
    props = schema.get("properties", {})
    for field, prop in props.items():
        if field in docs:
            prop.setdefault("description", docs[field])
        nullable = any(arm.get("type") == "null" for arm in prop.get("anyOf", ()))
        if field not in required and nullable:
            prop.setdefault("default", None)
        props[field] = dict(sorted(prop.items()))  # in pydantic's order (its keys sorted)


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
