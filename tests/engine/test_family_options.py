"""Options that belong to their family (issue #49 item 3): a task, verifier or method declares its
options; they are in `pytest --help` in a group of their own, validated, recorded in run.json,
part of config_hash, and refused in one sentence by a run that has no such option. A plug-in's
options count like a built-in family's, which declare theirs the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import REPO, SUITES, TACTIC_SUITE, install_distribution

from pytest_lsrb import api
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.option_sets import installed_sets
from pytest_lsrb.engine.option_table import OPTIONS, dest
from pytest_lsrb.session.prepare import prepare_suite_run

SRBENCH_SUITE = SUITES / "llm_srbench"

PLUGIN = """
from pydantic import BaseModel

from pytest_lsrb import Task, VerificationResult, Verifier
from pytest_lsrb.core.rows import stream_jsonl
from pytest_lsrb.engine.option_spec import Bounds, Option, OptionSet, integer
from pytest_lsrb.engine.verifier import verification_fields


class Row(BaseModel):
    item_id: str
    number: int

    def content_hash(self):
        return str(self.number)


class GsmTask(Task):
    name = "gsm"
    verification_modes = ("gsm_exact", "none")

    def load_rows(self, suite, index_path):
        return stream_jsonl(index_path, Row)

    def run_attempt(self, ctx):
        answer = str(ctx.case.row.number + int(ctx.options["gsm_shift"]))
        fields = {"raw_output": answer, "proposal": answer, "valid": True, "nonempty": True,
                  "verification_mode": ctx.verifier.mode}
        verdict = ctx.verifier.verify(ctx.case.row, answer, attempt_seed=0)
        fields.update(verification_fields(verdict))
        return fields

    def mock_answer(self, context, seed):
        return "0"


class ExactVerifier(Verifier):
    mode = "gsm_exact"
    outcomes = {"right": None, "wrong": "model"}

    def __init__(self, config):
        self.tolerance = int(config.options.get("gsm_tolerance", 0))

    def verify(self, row, proposal, *, attempt_seed):
        ok = abs(int(proposal) - row.number) <= self.tolerance
        return VerificationResult(attempted=True, success=ok, outcome="right" if ok else "wrong")

    def preflight(self):
        return None

    def close(self):
        return None


TASK_OPTIONS = OptionSet(
    kind="task",
    owners=("gsm",),
    title="gsm: grade-school arithmetic",
    options=(
        Option("gsm-shift", integer, 0, "add this to every answer", bounds=Bounds(0, 10)),
        Option("gsm-style", str, "plain", "how answers are written", choices=("plain", "boxed")),
    ),
)
VERIFIER_OPTIONS = OptionSet(
    kind="verifier",
    owners=("gsm_exact",),
    title="gsm_exact: exact numeric match",
    options=(Option("gsm-tolerance", integer, 0, "accept answers this far off"),),
)
TAKEN = OptionSet(kind="task", owners=("greedy",), title="greedy", options=(Option("seed", str, "", "mine"),))
"""

ENTRY_POINTS = """
[pytest_lsrb.tasks]
gsm = gsmplug:GsmTask

[pytest_lsrb.verifiers]
gsm_exact = gsmplug:ExactVerifier

[pytest_lsrb.options]
gsm = gsmplug:TASK_OPTIONS
gsm_exact = gsmplug:VERIFIER_OPTIONS
greedy = gsmplug:TAKEN
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`gsmplug` 1.0 installed on sys.path, and a suite folder of its task."""
    site = install_distribution(tmp_path / "site", "gsmplug", ENTRY_POINTS, {"gsmplug": PLUGIN}, monkeypatch)
    suite = tmp_path / "gsm"
    suite.mkdir()
    (suite / "index.jsonl").write_text(
        "".join(json.dumps({"item_id": f"q{i}", "number": i}) + "\n" for i in range(3)), encoding="utf-8"
    )
    (suite / "prompt.md").write_text("{{number}}\n", encoding="utf-8")
    (suite / "test_gsm.py").write_text("def test_gsm(lsrb_attempt):\n    lsrb_attempt.check()\n", "utf-8")
    (suite / "suite.toml").write_text(
        '[suite]\nname = "gsm"\ntask = "gsm"\nindex = "index.jsonl"\nprompt = "prompt.md"\n\n'
        '[defaults]\nverification = "gsm_exact"\ngsm_style = "boxed"\n',
        encoding="utf-8",
    )
    return site


def prepare(suite: Path, **options: str) -> Any:
    values = {dest(k): v for k, v in options.items()}
    return prepare_suite_run(suite, values.get, REPO)


def test_a_foreign_option_is_refused_in_one_sentence() -> None:
    """`--lsrb-sr-budget 7` to the Lean suite was dropped silently: now it is refused, naming whose
    option it is; so is a method's option on a run of another method."""
    with pytest.raises(LsrbUsageError) as foreign:
        prepare(TACTIC_SUITE, sr_budget="7")
    assert str(foreign.value) == (
        "--lsrb-sr-budget: the goal_to_tactic_proposal_v1 suite has no such option (it is an option "
        "of the task llm_srbench; this run: task goal_to_tactic_proposal_v1, verification none)."
    )
    with pytest.raises(LsrbUsageError) as lean:
        prepare(SRBENCH_SUITE, max_heartbeats="1000")
    assert "--lsrb-max-heartbeats: the llm_srbench suite has no such option" in str(lean.value)
    with pytest.raises(LsrbUsageError) as method:
        prepare(SRBENCH_SUITE, sr_reset_every="3")  # the suite's method: direct
    assert str(method.value) == (
        "--lsrb-sr-reset-every: the llm_srbench suite has no such option (it is an option of the "
        "method llmsr; this run: task llm_srbench, verification equation, method direct)."
    )


def test_a_methods_option_is_held_and_hashed_only_in_a_run_of_that_method() -> None:
    llmsr = prepare(SRBENCH_SUITE, sr_method="llmsr", sr_reset_every="3")
    assert llmsr.config.identity()["sr_reset_every"] == 3
    other = prepare(SRBENCH_SUITE, sr_method="llmsr", sr_reset_every="4")
    assert other.config_hash != llmsr.config_hash
    direct = prepare(SRBENCH_SUITE).config.identity()
    assert not {"sr_reset_every", "sr_lasr_backend", "sr_lasr_rows"} & set(direct)
    assert not {"answer", "profiles", "max_heartbeats"} & set(direct)  # no Lean word in it


def test_through_pytest_a_foreign_option_exits_4_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider",
         "--lsrb-sr-budget=7"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "ERROR: --lsrb-sr-budget: the goal_to_tactic_proposal_v1 suite has no such option (it is an "
        "option of the task llm_srbench; this run: task goal_to_tactic_proposal_v1, verification none)."
    ]
    assert not (tmp_path / "lsrb-out").exists()


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_a_plugin_familys_options_are_in_help_grouped_and_refused_elsewhere(
    plugin: Path, tmp_path: Path
) -> None:
    env = {**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}, "PYTHONPATH": str(plugin)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    start = lines.index("pytest-lsrb gsm: grade-school arithmetic:")
    group = " ".join(lines[start : start + 6])
    assert "--lsrb-gsm-shift=LSRB_GSM_SHIFT" in group and "(default: 0)" in group
    assert "pytest-lsrb gsm_exact: exact numeric match:" in lines
    assert "pytest-lsrb greedy" not in proc.stdout  # its --lsrb-seed is the engine's: left out
    with pytest.raises(LsrbUsageError) as foreign:
        prepare(TACTIC_SUITE, gsm_tolerance="2")
    assert "it is an option of the verifier gsm_exact" in str(foreign.value)


def test_a_plugin_familys_options_are_validated_recorded_and_hashed(plugin: Path, tmp_path: Path) -> None:
    suite = tmp_path / "gsm"
    run = prepare(suite, gsm_shift="1", gsm_tolerance="1")
    identity = run.config.identity()
    assert (identity["gsm_shift"], identity["gsm_style"], identity["gsm_tolerance"]) == (1, "boxed", 1)
    assert prepare(suite, gsm_shift="2", gsm_tolerance="1").config_hash != run.config_hash
    assert prepare(suite, gsm_shift="1", gsm_tolerance="0").config_hash != run.config_hash
    no_check = prepare(suite, gsm_shift="1", verification="none").config.identity()
    assert "gsm_tolerance" not in no_check and no_check["gsm_shift"] == 1  # not this run's verifier
    with pytest.raises(LsrbUsageError) as bad:
        prepare(suite, gsm_shift="abc")
    assert str(bad.value) == "--lsrb-gsm-shift: expected a whole number >= 0 and <= 10 (got 'abc')."
    with pytest.raises(LsrbUsageError) as high:
        prepare(suite, gsm_shift="11")
    assert str(high.value) == "--lsrb-gsm-shift: expected a whole number >= 0 and <= 10 (got 11)."
    result = api.run(suite, gsm_shift=0, output_dir=tmp_path / "o", pytest_args=["-q"])  # type: ignore[call-arg]
    assert result.exit_code == 0 and result.header["config"]["gsm_style"] == "boxed"
    assert result.header["config"]["gsm_tolerance"] == 0
    assert [r["verification_outcome"] for r in result.records] == ["right"] * 3


def test_a_suite_default_for_another_task_and_an_unknown_key_are_refused(
    plugin: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "gsm"
    toml = suite / "suite.toml"
    text = toml.read_text("utf-8")
    toml.write_text(text + "sr_budget = 3\n", encoding="utf-8")
    with pytest.raises(LsrbUsageError) as foreign:
        prepare(suite)
    assert str(foreign.value) == (
        f"{toml}: field 'defaults.sr_budget' is an option of the task llm_srbench, not of this "
        "suite's task gsm."
    )
    toml.write_text(text + "gsm_shfit = 3\n", encoding="utf-8")
    with pytest.raises(LsrbUsageError) as unknown:
        prepare(suite)
    assert str(unknown.value) == f"{toml}: unknown key 'gsm_shfit' in [defaults] (did you mean gsm_shift?)."


def test_the_suites_verifier_table_is_recorded_and_hashed(plugin: Path, tmp_path: Path) -> None:
    suite = tmp_path / "gsm"
    before = prepare(suite)
    assert "verifier_settings" not in before.config.identity()
    toml = suite / "suite.toml"
    toml.write_text(toml.read_text("utf-8") + '\n[verifier]\nunit = "cm"\n', encoding="utf-8")
    after = prepare(suite)
    assert after.config.identity()["verifier_settings"] == {"unit": "cm"}
    assert after.config_hash != before.config_hash
    assert after.verifier_config().settings == {"unit": "cm"}


def test_a_set_taking_a_name_already_taken_is_left_out_and_said_when_its_owner_runs(plugin: Path) -> None:
    found = installed_sets()
    assert "greedy" in found.refused
    assert found.refused["greedy"].endswith(
        "declares --lsrb-seed, which pytest-lsrb's every-suite options already declare."
    )
    assert {s.owners[0] for s in found.sets} >= {
        "gsm",
        "gsm_exact",
        "llm_srbench",
        "goal_to_tactic_proposal_v1",
    }
    assert len({o.name for o in found.options()}) == len(found.options())  # one owner per name


def test_the_engine_declares_no_family_option() -> None:
    """The engine's own table holds only what every suite reads: each family's options are its own
    (`tactic.options`, `srbench.option_table`), found like a plug-in's."""
    engine = {o.name for o in OPTIONS}
    assert not {n for n in engine if n.startswith("sr-")}
    assert not engine & {"answer", "profiles", "screen", "max-heartbeats", "allow-native-decide"}
    owners = {s.owners[0]: s for s in installed_sets().sets}
    assert {o.name for o in owners["goal_to_tactic_proposal_v1"].options} >= {"answer", "profiles"}
    assert {o.name for o in owners["lasr"].options} == {"sr-lasr-backend", "sr-lasr-rows"}
