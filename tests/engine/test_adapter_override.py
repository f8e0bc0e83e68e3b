"""A user's own adapter is part of the run's identity: a conftest.py overriding `lsrb_adapter`
changes the run's config hash and `adapter` label, and every record names the adapter's class and
a hash of its settings; the same override given with `-p`, which pytest lets ours override, stops
the run with one sentence instead of silently running the mock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from lsrb_testing import SCRIPTED_ADAPTER, TACTIC_SUITE, RunSuite, lsrb


def suite_with(tmp_path: Path, conftest: str | None) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(TACTIC_SUITE, suite, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    if conftest is not None:
        (suite / "conftest.py").write_text(conftest, encoding="utf-8")
    return suite


def header(out: Path) -> dict:
    data: dict = json.loads((out / "run.json").read_text("utf-8"))
    return data


def test_a_conftest_adapter_names_the_run_by_its_class_and_settings(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    plain = run_suite("--lsrb-max-items=3", "--lsrb-outcome=record", out=tmp_path / "plain")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    suite = suite_with(tmp_path, SCRIPTED_ADAPTER)
    custom = run_suite("--lsrb-max-items=3", "--lsrb-outcome=record", suite=suite, out=tmp_path / "custom")
    assert custom.returncode == 0, custom.stdout + custom.stderr
    config = header(custom.out_dir)["config"]
    assert config["adapter"] == "conftest.Scripted"
    assert config["adapter_fixture"] == "conftest.py::lsrb_adapter"
    assert len(config["adapter_source_sha256"]) == 64
    assert header(custom.out_dir)["config_hash"] != header(plain.out_dir)["config_hash"]
    assert custom.summary()["config"] == config  # the summary names the same run
    records = custom.attempts()
    assert records and {r["adapter_class"] for r in records} == {"conftest.Scripted"}
    assert {r["adapter_settings_sha256"] for r in records} == {config["adapter_settings_sha256"]}
    assert all("adapter_class" not in r for r in plain.attempts())
    # compare and the terminal name each run by its adapter
    shown = lsrb("compare", str(plain.out_dir), str(custom.out_dir), cwd=tmp_path)
    assert "runs: mock/default -> conftest.Scripted/default" in shown.stdout, shown.stdout + shown.stderr
    assert "lsrb: goal_to_tactic_proposal_v1 · conftest.Scripted/default" in custom.stdout
    # Editing the adapter (here, its model name) makes another run: resuming the old one is refused.
    (suite / "conftest.py").write_text(SCRIPTED_ADAPTER.replace("scripted-1", "scripted-2"), "utf-8")
    edited = run_suite("--lsrb-max-items=3", "--lsrb-resume", suite=suite, out=tmp_path / "custom")
    assert edited.returncode == 4 and "was written by a different run" in edited.stdout + edited.stderr


SETTINGS_ADAPTER = """
import os

import pytest
from pytest_lsrb.adapters.base import GenerationResult


class Tuned:
    name = "tuned"
    model = "tuned-1"
    default_concurrency = 1

    def __init__(self, temperature):
        self.temperature = temperature

    def check(self): pass
    def identity(self): return {"adapter": self.name, "temperature": self.temperature}
    def close(self): pass
    def generate(self, request):
        return GenerationResult(text="simp", latency_ms=1.0)


@pytest.fixture(scope="session")
def lsrb_adapter(lsrb_suite_run):
    assert lsrb_suite_run.spec.name == "goal_to_tactic_proposal_v1"
    yield Tuned(float(os.environ["LSRB_TEST_TEMPERATURE"]))
"""


def test_the_same_adapter_file_with_other_settings_is_another_run(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    """Only the settings differ (the file is the same): the settings hash still tells the runs
    apart, so resuming a run with other settings is refused; under -n 2 every worker's records
    carry the hash the controller named the run by."""
    suite = suite_with(tmp_path, SETTINGS_ADAPTER)
    args = ("--lsrb-max-items=4", "--lsrb-outcome=record")
    cold = run_suite(*args, suite=suite, out=tmp_path / "cold", env={"LSRB_TEST_TEMPERATURE": "0"})
    warm = run_suite(
        *args, "-n", "2", suite=suite, out=tmp_path / "warm", env={"LSRB_TEST_TEMPERATURE": "0.7"}
    )
    for run in (cold, warm):
        assert run.returncode == 0, run.stdout + run.stderr
    c, w = header(cold.out_dir), header(warm.out_dir)
    assert c["config"]["adapter"] == w["config"]["adapter"] == "conftest.Tuned"
    assert c["config"]["adapter_source_sha256"] == w["config"]["adapter_source_sha256"]
    assert c["config"]["adapter_settings_sha256"] != w["config"]["adapter_settings_sha256"]
    assert c["config_hash"] != w["config_hash"]
    assert {r["config_hash"] for r in warm.attempts()} == {w["config_hash"]}
    assert {r["adapter_settings_sha256"] for r in warm.attempts()} == {w["config"]["adapter_settings_sha256"]}
    again = run_suite(
        *args, "--lsrb-resume", suite=suite, out=tmp_path / "cold", env={"LSRB_TEST_TEMPERATURE": "0.7"}
    )
    assert again.returncode == 4 and "was written by a different run" in again.stdout + again.stderr
    same = run_suite(
        *args, "--lsrb-resume", suite=suite, out=tmp_path / "cold", env={"LSRB_TEST_TEMPERATURE": "0"}
    )
    assert same.returncode == 0, same.stdout + same.stderr


def test_an_adapter_fixture_asking_for_other_fixtures_is_named_by_its_file(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    """A fixture that needs what only a test can give (here tmp_path_factory) is not made before
    the run: the run is named by the defining file, as the records still name the class."""
    conftest = SETTINGS_ADAPTER.replace(
        "def lsrb_adapter(lsrb_suite_run):", "def lsrb_adapter(tmp_path_factory, lsrb_suite_run):"
    )
    suite = suite_with(tmp_path, conftest)
    run = run_suite("--lsrb-max-items=2", suite=suite, env={"LSRB_TEST_TEMPERATURE": "0"})
    assert run.returncode == 0, run.stdout + run.stderr
    config = header(run.out_dir)["config"]
    assert config["adapter"] == "conftest.py::lsrb_adapter" and "adapter_settings_sha256" not in config
    assert {r["adapter_class"] for r in run.attempts()} == {"conftest.Tuned"}


def test_the_users_adapter_is_checked_before_the_run_and_ended_by_its_fixture(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    """The adapter made to name the run is the one checked before any test (not the mock the
    options name); a failed check stops the run in one sentence, and the fixture's teardown ran."""
    log = tmp_path / "calls.log"
    conftest = SETTINGS_ADAPTER.replace(
        "    def check(self): pass",
        "    def check(self):\n        raise RuntimeError('no model tuned-1 on this server')",
    ).replace(
        '    yield Tuned(float(os.environ["LSRB_TEST_TEMPERATURE"]))',
        '    yield Tuned(0.0)\n    open(os.environ["LSRB_TEST_LOG"], "a").write("teardown\\n")',
    )
    suite = suite_with(tmp_path, conftest)
    run = run_suite("--lsrb-max-items=2", suite=suite, env={"LSRB_TEST_LOG": str(log)})
    said = run.stdout + run.stderr
    assert run.returncode == 4, said
    assert "the lsrb_adapter's check() failed: RuntimeError: no model tuned-1 on this server" in said
    assert log.read_text("utf-8").splitlines() == ["teardown"]
    assert not (run.out_dir / "attempts.jsonl").exists()


def test_an_adapter_that_changes_between_makings_stops_the_run(run_suite: RunSuite, tmp_path: Path) -> None:
    """The adapter the tests get must be the one the run is named by: a fixture whose adapter's
    settings differ each time it is made (here a counter) stops with one sentence."""
    conftest = SETTINGS_ADAPTER.replace(
        'yield Tuned(float(os.environ["LSRB_TEST_TEMPERATURE"]))',
        "global MADE\n    MADE = globals().get('MADE', 0) + 1\n    yield Tuned(float(MADE))",
    )
    suite = suite_with(tmp_path, conftest)
    run = run_suite("--lsrb-max-items=2", suite=suite)
    said = run.stdout + run.stderr
    assert run.returncode != 0
    assert "conftest.py::lsrb_adapter gave the tests a conftest.Tuned whose settings hash" in said, said
    assert "the fixture must make the same adapter each time" in said
    assert not (run.out_dir / "attempts.jsonl").exists() or not run.attempts()


def test_an_adapter_given_with_p_says_it_cannot_take_effect(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "my_adapter.py").write_text(SCRIPTED_ADAPTER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugins), env.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "pytest", "-p", "my_adapter", str(TACTIC_SUITE), "-q"]
    argv += ["-p", "no:cacheprovider", f"--lsrb-output-dir={tmp_path / 'out'}", "--lsrb-max-items=2"]
    proc = subprocess.run(
        argv,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr
    assert "the lsrb_adapter fixture of plugin 'my_adapter' cannot take effect" in said
    assert not (tmp_path / "out" / "attempts.jsonl").exists()


OWNED_ADAPTER = """
import os

import pytest
from pytest_lsrb.adapters.base import GenerationResult

LOG = os.environ["LSRB_TEST_CLOSES"]


class Owned:
    name = "owned"
    model = "owned-1"
    default_concurrency = {concurrency}
    def check(self): pass
    def identity(self): return {{"adapter": self.name, "model": self.model}}
    def generate(self, request):
        with open(LOG, "a") as fh:
            fh.write("generate\\n")
        return GenerationResult(text="simp", latency_ms=1.0)
    def close(self):
        with open(LOG, "a") as fh:
            fh.write("close\\n")


@pytest.fixture(scope="session")
def lsrb_adapter():
    adapter = Owned()
    yield adapter
    adapter.close()  # the fixture made it: the fixture closes it, once
"""


def test_a_users_adapter_is_closed_by_its_fixture_alone(run_suite: RunSuite, tmp_path: Path) -> None:
    for concurrency in (1, 3):
        suite = suite_with(tmp_path / f"c{concurrency}", OWNED_ADAPTER.format(concurrency=concurrency))
        log = tmp_path / f"closes-{concurrency}.log"
        env = {"LSRB_TEST_CLOSES": str(log)}
        result = run_suite("--lsrb-max-items=4", suite=suite, out=tmp_path / f"out{concurrency}", env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        calls = log.read_text("utf-8").splitlines()
        # one adapter made (and closed by its fixture) to name the run, then the tests' own
        assert calls == ["close"] + ["generate"] * 4 + ["close"], calls
