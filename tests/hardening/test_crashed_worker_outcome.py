"""A test whose xdist worker dies after the test's record was written reports what the record
says (as a resumed run would), not xdist's "worker crashed" failure; without a record (the worker
died in the attempt: a segfault, the OOM killer), the test is an error of the environment, never
a failure, and `--lsrb-resume` runs its attempt. The worker is really killed (os._exit)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("xdist")

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
CRASH_CONFTEST = """
import os
from pathlib import Path

TARGET = os.environ.get("LSRB_CRASH_TEST", "")
PHASE = os.environ.get("LSRB_CRASH_PHASE", "teardown")
FLAG = Path(os.environ.get("LSRB_CRASH_FLAG", "/nonexistent"))


def _crash(item):
    if TARGET and item.name == TARGET and os.environ.get("PYTEST_XDIST_WORKER"):
        try:
            os.close(os.open(FLAG, os.O_CREAT | os.O_EXCL))  # once: the rerun on a new worker lives
        except FileExistsError:
            return
        os._exit(3)


def pytest_runtest_teardown(item):
    if PHASE == "teardown":
        _crash(item)


def pytest_runtest_setup(item):
    if PHASE == "setup":  # before the attempt: no record
        _crash(item)
"""


@pytest.fixture(scope="module")
def suite_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite") / SUITE.name
    shutil.copytree(SUITE, root, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (root / "conftest.py").write_text(CRASH_CONFTEST, encoding="utf-8")
    return root


def run(
    suite: Path, out: Path, *extra: str, env: dict[str, str] | None = None, seen: list[str] | None = None
) -> tuple[int, dict[str, str]]:
    """(exit code, test name -> outcome from the JUnit XML); `seen` gets the terminal's text."""
    xml = out.with_suffix(".xml")
    cmd = [
        sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
        "--lsrb-max-items=6", "--lsrb-samples=2", f"--lsrb-output-dir={out}", f"--junitxml={xml}", *extra,
    ]  # fmt: skip
    clean = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS" and not k.startswith("LSRB_CRASH")}
    done = subprocess.run(
        cmd, cwd=out.parent, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=300
    )
    if seen is not None:
        seen.append(done.stdout + done.stderr)
    outcomes: dict[str, str] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name", "")] = kinds[0] if kinds else "passed"
    assert outcomes, done.stdout[-3000:] + done.stderr[-3000:]
    return done.returncode, outcomes


@pytest.mark.slow
def test_a_worker_crash_after_the_record_reports_the_record(suite_copy: Path, tmp_path: Path) -> None:
    code, serial = run(suite_copy, tmp_path / "serial")
    assert code == 0 and set(serial.values()) == {"passed"}
    target = sorted(serial)[3]
    env = {"LSRB_CRASH_TEST": target, "LSRB_CRASH_FLAG": str(tmp_path / "crashed")}
    code, crashed = run(suite_copy, tmp_path / "xdist", "-n", "2", env=env)
    assert (tmp_path / "crashed").exists()  # the worker really died in the target's teardown
    assert crashed == serial
    assert code == 0


@pytest.mark.slow
def test_a_worker_crash_before_the_record_is_an_environment_error(suite_copy: Path, tmp_path: Path) -> None:
    _, serial = run(suite_copy, tmp_path / "serial")
    target = sorted(serial)[3]
    env = {
        "LSRB_CRASH_TEST": target,
        "LSRB_CRASH_FLAG": str(tmp_path / "crashed"),
        "LSRB_CRASH_PHASE": "setup",
    }
    seen: list[str] = []
    code, crashed = run(suite_copy, tmp_path / "xdist", "-n", "2", env=env, seen=seen)
    assert (tmp_path / "crashed").exists()
    assert crashed[target] == "error"  # JUnit: an <error>, not a <failure>
    others = {k: v for k, v in serial.items() if k != target}
    assert {k: v for k, v in crashed.items() if k != target} == others
    stats = seen[0].strip().splitlines()
    assert any("1 error" in line for line in stats[-3:])
    assert not any(" failed" in line for line in stats[-3:])
    assert "environment" in seen[0] and "before its attempt was recorded" in seen[0]
    assert code == 1  # pytest's status for an erroring test (a failure would read the same: the text differs)
    assert "--lsrb-resume" in stats[-1]  # the run is unfinished: the last line finishes it
    # the resumed run asks only for the crashed test's attempt, and passes it
    code, resumed = run(suite_copy, tmp_path / "xdist", "--lsrb-resume", "-n", "2", env=env)
    assert code == 0 and resumed == serial


@pytest.mark.parametrize(
    ("outcome", "policy", "expected", "when"),
    [
        ("pass", "strict", "passed", "call"),
        ("fail", "strict", "failed", "call"),
        ("fail", "record", "passed", "call"),
        ("error", "record", "failed", "setup"),  # pytest shows a setup failure as an error
        ("skip", "strict", "skipped", "setup"),
    ],
)
def test_each_judgement_becomes_the_report_pytest_would_have_made(
    outcome: str, policy: str, expected: str, when: str
) -> None:
    from pytest_lsrb.engine.task import Judgement
    from pytest_lsrb.session.crashes import follow_record

    report = pytest.TestReport("s/t.py::t[a#s0]", ("s/t.py", None, "s/t.py"), {}, "failed", "crashed", "???")
    follow_record(report, Judgement(outcome, "why"), policy, "gw1")
    assert (report.outcome, report.when) == (expected, when)
    if expected == "skipped":
        assert isinstance(report.longrepr, tuple) and "gw1 crashed" in report.longrepr[2]
    elif expected == "failed":
        assert "why" in str(report.longrepr) and "gw1 crashed" in str(report.longrepr)
