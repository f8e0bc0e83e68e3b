"""Hostile replay profiles: broken TOML, wrong types, unknown keys, odd globs. Each ends in one
sentence naming the file and the field, and every profile that loads can match any row."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hostile_kit import assert_one_sentence, byte_mutations, hostile_text, json_values, outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_lsrb.engine.verifier import VerifierConfig, create_verifier
from pytest_lsrb.tactic.profiles import ReplayProfile, load_profiles

REPO = Path(__file__).resolve().parents[2]
FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
FIELDS = sorted(ReplayProfile.model_fields)


def toml_value(value: Any) -> str:
    """A small TOML writer: enough for hostile scalars, arrays and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items() if v is not None)
            + "}"
        )
    raise TypeError(type(value))


def toml_doc(fields: dict[str, Any]) -> bytes:
    lines = [f"{json.dumps(k)} = {toml_value(v)}" for k, v in fields.items() if v is not None]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def usable(path: Path) -> None:
    """What a run does with loaded profiles: build the verifier, match hostile rows."""
    profiles = load_profiles(path)
    for remote, version in (("https://github.com/x/y", "v4.22.0"), ("", ""), ("\x00[", "*?[")):
        profiles.match(remote, version)
    create_verifier(VerifierConfig(mode="synthetic", options={"profiles": str(path)})).close()


VALID = {
    "schema_version": 1,
    "id": "p",
    "repo_remote": "https://github.com/o/r",
    "repo_lean_version": "v4.2*",
    "memory_mb": 4096,
    "replay_method": "file",
}


@FUZZ
@given(
    field=st.sampled_from([*FIELDS, "unknown_key", "a\nb"]),
    value=json_values | hostile_text | st.integers(-(10**6), 10**6),
)
def test_a_field_with_any_value_loads_or_is_named(tmp_path: Path, field: str, value: Any) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(toml_doc({**VALID, field: value}))
    _, message = outcome(lambda: usable(path))
    if message is not None:
        assert_one_sentence(message, path)
        assert "not valid TOML" in message or "field '" in message, message


@FUZZ
@given(data=st.data(), name=st.sampled_from(["default.toml", "mathlib4.toml", "old-toolchains.toml"]))
def test_byte_level_damage_to_a_shipped_profile_ends_in_one_sentence(
    tmp_path: Path, data: st.DataObject, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data.draw(byte_mutations((REPO / "profiles" / name).read_bytes())))
    _, message = outcome(lambda: usable(path))
    if message is not None:
        assert_one_sentence(message, path)


def test_pathological_toml_is_one_sentence(tmp_path: Path) -> None:
    cases = {
        b"schema_version = 1\nx = " + b"[" * 50_000 + b"]" * 50_000: "nested too deeply",
        b"schema_version = 1\nmemory_mb = " + b"9" * 5000: "too many digits",
        b"schema_version = 1\n# \xff\n": "not valid UTF-8",
        b'schema_version = "' + b"x" * 500 + b'"': "field 'schema_version' is \"xxx",
        b'schema_version = 1\n"a\\nb" = 1\n': "field 'a\\nb'",
    }
    for raw, expected in cases.items():
        path = tmp_path / "p.toml"
        path.write_bytes(raw)
        _, message = outcome(lambda path=path: load_profiles(path))
        assert message is not None
        assert_one_sentence(message, path)
        assert expected in message and len(message) < 400, message


def test_timeouts_and_limits_past_their_bounds_are_one_sentence(tmp_path: Path) -> None:
    """`check_timeout_s = 1e300` on a Kimina profile loaded, then ended in an INTERNALERROR when
    it reached a socket's timeout (issue #38, item 9): every such field is bounded at load."""
    kimina = {**VALID, "replay_method": "kimina", "kimina_url": "http://127.0.0.1:9"}
    for field, value in [
        ("check_timeout_s", 1e300),
        ("build_timeout_s", 1e9),
        ("memory_mb", 10**18),
        ("max_parallel", 10**9),
    ]:
        path = tmp_path / "p.toml"
        path.write_bytes(toml_doc({**kimina, field: value}))
        _, message = outcome(lambda path=path: usable(path))
        assert message is not None, field
        assert_one_sentence(message, path)
        assert f"field '{field}'" in message and "less than or equal" in message, message
