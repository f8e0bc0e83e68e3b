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

from lsrb_testing import SCRIPTED_ADAPTER, TACTIC_SUITE, RunSuite


def suite_with(tmp_path: Path, conftest: str | None) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(TACTIC_SUITE, suite, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    if conftest is not None:
        (suite / "conftest.py").write_text(conftest, encoding="utf-8")
    return suite


def header(out: Path) -> dict:
    data: dict = json.loads((out / "run.json").read_text("utf-8"))
    return data


def test_a_conftest_adapter_changes_the_runs_identity(run_suite: RunSuite, tmp_path: Path) -> None:
    plain = run_suite("--lsrb-max-items=3", "--lsrb-outcome=record", out=tmp_path / "plain")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    suite = suite_with(tmp_path, SCRIPTED_ADAPTER)
    custom = run_suite("--lsrb-max-items=3", "--lsrb-outcome=record", suite=suite, out=tmp_path / "custom")
    config = header(custom.out_dir)["config"]
    assert config["adapter"] == "conftest.py::lsrb_adapter"
    assert len(config["adapter_source_sha256"]) == 64
    assert header(custom.out_dir)["config_hash"] != header(plain.out_dir)["config_hash"]
    records = custom.attempts()
    assert records and {r["adapter_class"] for r in records} == {"conftest.Scripted"}
    assert len({r["adapter_settings_sha256"] for r in records}) == 1
    assert all("adapter_class" not in r for r in plain.attempts())
    # Editing the adapter (here, its model name) makes another run: resuming the old one is refused.
    (suite / "conftest.py").write_text(SCRIPTED_ADAPTER.replace("scripted-1", "scripted-2"), "utf-8")
    edited = run_suite("--lsrb-max-items=3", "--lsrb-resume", suite=suite, out=tmp_path / "custom")
    assert edited.returncode == 4 and "was written by a different run" in edited.stdout + edited.stderr


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
        assert calls == ["generate"] * 4 + ["close"], calls
