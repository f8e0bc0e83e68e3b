"""An installed wheel prints no warning of ours. pytest marks every top-level package of a
distribution with a `pytest11` entry point for assertion rewriting and warns when one is already
imported; `lsrb run`, `python -m lean_sorry_repos_benchmark` and `pytest_lsrb.api.run` import our
packages before they call `pytest.main`, so a wheel (whose RECORD lists every module, unlike an
editable install) printed `PytestAssertRewriteWarning: Module already imported so cannot be
rewritten; pytest_lsrb` on every run. Both packages' docstrings say PYTEST_DONT_REWRITE.

The wheel is built from this checkout and installed with pip (no dependencies) into a fresh venv;
the dependencies come from the venv running these tests through a folder of links that leaves out
this project's own (editable) install, so the wheel is the only pytest_lsrb the venv can see and
nothing is downloaded. Each way in runs with warnings as errors."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from lsrb_testing import REPO, pytest_verdict

# `pytest_lsrb.api.run`, pytest's -W among its pytest_args
API_RUN = (
    "from pytest_lsrb import api\n"
    "api.run('goal_to_tactic_proposal_v1', max_items=2,\n"
    "        pytest_args=['-W', 'error::pytest.PytestAssertRewriteWarning'])\n"
)
OURS = ("pytest_lsrb", "lean_sorry_repos_benchmark", "_editable_impl_pytest_lsrb", "__editable__")


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builders = pytest.importorskip("hatchling.builders.wheel", reason="hatchling (the test extra) absent")
    root = tmp_path_factory.mktemp("wheel-venv")
    wheel = next(builders.WheelBuilder(str(REPO)).build(directory=str(root / "dist"), versions=["standard"]))
    venv.EnvBuilder(with_pip=False).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", wheel],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if install.returncode != 0 and "no such option: --python" in install.stderr:
        pytest.skip("this pip has no --python option (pip >= 22.3 installs into another venv)")
    assert install.returncode == 0, install.stderr
    deps = root / "deps"
    deps.mkdir()
    here = Path(sysconfig.get_paths()["purelib"])
    for entry in here.iterdir():
        if not entry.name.startswith(OURS):
            (deps / entry.name).symlink_to(entry)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "zz_lsrb_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return python


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    return subprocess.run(
        [str(python), "-W", "error::pytest.PytestAssertRewriteWarning", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_the_installed_wheel_is_the_one_imported(wheel_python: Path, tmp_path: Path) -> None:
    proc = _run(wheel_python, tmp_path, "-c", "import pytest_lsrb; print(pytest_lsrb.__file__)")
    assert proc.returncode == 0, proc.stderr
    assert str(wheel_python.parents[1]) in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("-m", "pytest_lsrb", "run", "goal_to_tactic_proposal_v1", "--lsrb-max-items", "3"),
        ("-m", "lean_sorry_repos_benchmark", "--lsrb-max-items", "3"),
        ("-m", "pytest_lsrb", "run", "llm_srbench", "--lsrb-max-items", "1", "--lsrb-outcome", "record"),
        ("-c", API_RUN),
    ],
    ids=["lsrb-run-tactic", "lean_sorry_repos_benchmark", "lsrb-run-llm_srbench", "api-run"],
)
def test_an_installed_wheel_prints_no_assert_rewrite_warning(
    wheel_python: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    # -W error twice: the interpreter's (warnings raised while importing) and pytest's own (its
    # config-time warnings go through pytest's filters).
    if args[0] == "-c":  # the API script passes pytest's -W itself
        proc = _run(wheel_python, tmp_path, *args)
    else:
        proc = _run(wheel_python, tmp_path, *args, "-W", "error::pytest.PytestAssertRewriteWarning")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "PytestAssertRewriteWarning" not in out
    assert "passed" in pytest_verdict(proc.stdout), out
    assert "warning" not in pytest_verdict(proc.stdout), out
