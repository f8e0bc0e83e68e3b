"""Hostile suite.toml files: a `[defaults]` value of any type, or a damaged file, ends in one
sentence naming suite.toml (and the field) before anything runs."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hostile_kit import assert_one_sentence, byte_mutations, hostile_text, json_values, outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_profiles import toml_value

from pytest_lsrb.engine.option_sets import every_option
from pytest_lsrb.engine.option_table import key
from pytest_lsrb.session.prepare import prepare_suite_run

OPTIONS = every_option()

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
FUZZ = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Defaults that would point the run at files or endpoints, not at how the suite is run.
SKIP = {"index", "output_dir", "profiles", "cache_dir", "baseline", "api_key_env", "base_url", "split_policy"}
KEYS = sorted(key(o.name) for o in OPTIONS if key(o.name) not in SKIP)


def suite_with(root: Path, toml: bytes) -> Path:
    suite = root / "suite"
    shutil.copytree(SUITE, suite, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (suite / "suite.toml").write_bytes(toml)
    return suite


# Small numbers: `samples = 10**6` is a valid (huge) run, not a hostile file.
SMALL = json_values.filter(lambda v: not isinstance(v, int) or v < 1000)


@FUZZ
@given(name=st.sampled_from(KEYS), value=SMALL | hostile_text | st.integers(-5, 300))
def test_a_default_of_any_type_runs_or_is_named(name: str, value: Any) -> None:
    text = (SUITE / "suite.toml").read_text("utf-8").split("[defaults]")[0]
    rendered = toml_value(value) if value is not None else '""'
    toml = (text + f"[defaults]\n{name} = {rendered}\n").encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as tmp:
        suite = suite_with(Path(tmp), toml)
        run, message = outcome(lambda: prepare_suite_run(suite, lambda _: None, REPO))
        if message is not None:
            assert_one_sentence(message, suite / "suite.toml")
        else:
            assert len({c.key for c in run.cases}) == len(run.cases)  # a run it can collect


@FUZZ
@given(data=st.data())
def test_byte_damage_to_suite_toml_ends_in_one_sentence(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = suite_with(Path(tmp), data.draw(byte_mutations((SUITE / "suite.toml").read_bytes())))
        _, message = outcome(lambda: prepare_suite_run(suite, lambda _: None, REPO))
        if message is not None:
            assert_one_sentence(message, suite)
