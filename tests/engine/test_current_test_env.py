"""`PYTEST_CURRENT_TEST` stays in Python's view of the environment while a suite runs (issue #27,
`session.seams.environ`): glibc's setenv keeps every value it was given to the end of the process,
~520 bytes per test, so the C-level environment does not get this one, and a child process started
without `env=` does not inherit it; `os.environ` still says what pytest set. With
`--lsrb-fastpath off` pytest's own way is kept. The memory itself is measured in
`bench/bench_controller_memory.py`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsrb_testing import TACTIC_SUITE, RunSuite

from pytest_lsrb.session.seams.environ import VARIABLE, keep_current_test_in_python

PROBE = """
import json, os, subprocess, sys
import pytest

SEEN = []

@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    if len(SEEN) < 2:
        child = subprocess.run(
            [sys.executable, "-c", "import os; print(os.environ.get('PYTEST_CURRENT_TEST', '-'))"],
            capture_output=True, text=True, check=True,
        )
        SEEN.append({"python": os.environ.get("PYTEST_CURRENT_TEST"), "child": child.stdout.strip()})
    return (yield)

def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open(os.environ["LSRB_TEST_PROBE"], "w") as fh:
            json.dump(SEEN, fh)
"""


def child_sees(name: str) -> str:
    code = f"import os; print(os.environ.get({name!r}, '-'))"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize("fastpath", ["on", "off"])
def test_a_suite_test_sees_its_name_in_os_environ_only(
    run_suite: RunSuite, tmp_path: Path, fastpath: str
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TACTIC_SUITE, suite, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (suite / "conftest.py").write_text(PROBE, encoding="utf-8")
    probe = tmp_path / "probe.json"
    run = run_suite(
        "--lsrb-max-items=2", f"--lsrb-fastpath={fastpath}", suite=suite, env={"LSRB_TEST_PROBE": str(probe)}
    )
    assert run.returncode == 0, run.stdout + run.stderr
    seen = json.loads(probe.read_text("utf-8"))
    assert len(seen) == 2
    for test in seen:
        assert test["python"].startswith("suite/test_goal_to_tactic_proposal_v1.py::") and test[
            "python"
        ].endswith(" (call)")
        # the C environment: nothing with the fast path (not even the outer test's value this
        # process was started with), pytest's value without it
        assert test["child"] == ("-" if fastpath == "on" else test["python"])


def test_every_other_variable_reaches_the_c_environment_and_undo_restores_it(monkeypatch) -> None:
    monkeypatch.setenv(VARIABLE, "outer (call)")
    monkeypatch.delenv("LSRB_TEST_OTHER", raising=False)
    real = os.putenv
    undo = keep_current_test_in_python()
    try:
        assert child_sees(VARIABLE) == "-" and os.environ[VARIABLE] == "outer (call)"
        os.environ[VARIABLE] = "tests/x.py::test_a (setup)"
        os.environ["LSRB_TEST_OTHER"] = "yes"
        assert child_sees(VARIABLE) == "-" and os.environ[VARIABLE] == "tests/x.py::test_a (setup)"
        assert child_sees("LSRB_TEST_OTHER") == "yes"
    finally:
        undo()
    assert os.putenv is real
    # still set when the session ended (an interrupted test): the C environment learns it
    assert child_sees(VARIABLE) == "tests/x.py::test_a (setup)"
    os.environ[VARIABLE] = "tests/x.py::test_b (call)"
    assert child_sees(VARIABLE) == "tests/x.py::test_b (call)"
