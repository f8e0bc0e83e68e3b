"""A benchmark family from outside the package (issue #39): `examples/lsrb-mcmath` is installed
as its own distribution (pip builds it, its entry points land in a folder on the path) and runs
through `pytest`, `lsrb run mcmath` (the suite it ships) and `api.run` with no edit to
`pytest_lsrb/`. Its mock model always answers A,
right on 4 of the 12 questions: the 8 wrong answers are the model's (the verifier's
`wrong_answer` is declared so), so success is 4/12, not 4/4."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsrb_testing import REPO

from pytest_lsrb import api

EXAMPLE = REPO / "examples" / "lsrb-mcmath"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example installed from its source by pip (a wheel built with hatchling, which the
    test extra installs: no index is asked) into a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    cmd += ["--no-index", "--target", str(target), str(EXAMPLE)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "lsrb_mcmath-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target


def test_the_installed_family_runs_through_pytest(site: Path, tmp_path: Path) -> None:
    suite = shutil.copytree(EXAMPLE / "suite", tmp_path / "mcmath")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    listed = subprocess.run([sys.executable, "-m", "pytest_lsrb", "list"], capture_output=True, text=True,
                            env=env, timeout=120)  # fmt: skip
    assert (
        "mcmath_exact  entry point (lsrb-mcmath 0.1.0)  lsrb_mcmath.verifier:ExactMatchVerifier"
        in listed.stdout
    )
    suites = [row.split() for row in listed.stdout.split("\nsuites (")[1].splitlines()]
    assert ["mcmath", "entry", "point", "(lsrb-mcmath", "0.1.0)", "lsrb_mcmath:SUITE"] in suites
    # `lsrb run NAME` finds the suite the package ships (its entry point of pytest_lsrb.suites)
    run = [sys.executable, "-m", "pytest_lsrb", "run", "mcmath", "-q", "-p", "no:cacheprovider"]
    run += ["--lsrb-output-dir=n"]
    by_name = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert by_name.returncode == 1, by_name.stdout[-3000:] + by_name.stderr
    assert "8 failed, 4 passed" in by_name.stdout
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "--lsrb-output-dir=o"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr  # the wrong answers fail their tests
    assert "8 failed, 4 passed" in proc.stdout
    assert "success              0.333 (of 12 judged)" in proc.stdout


def test_the_installed_family_runs_through_the_api(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(site))
    result = api.run(EXAMPLE / "suite", output_dir=tmp_path / "o", pytest_args=["-q"])
    assert result.summary is not None and result.exit_code == 1
    outcomes = sorted(r["verification_outcome"] for r in result.records)
    assert outcomes == ["correct"] * 4 + ["wrong_answer"] * 8
    domains = {r["verification_outcome"]: r["verification_error_domain"] for r in result.records}
    assert domains == {"correct": None, "wrong_answer": "model"}
    summary = result.summary
    assert (summary["judged_attempts"], summary["verification_unjudged"]) == (12, 0)
    assert summary["success_rate"] == summary["verification_pass_at_k_1"] == pytest.approx(4 / 12)
