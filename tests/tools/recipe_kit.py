"""What the recipe tests (test_ci_examples.py) stand on: a user's machine without the network.

- `checkout`: a copy of this repository's files, as `actions/checkout` or `git clone` leaves them.
- `user_venv`: a fresh virtual environment without pytest-lsrb, in which its dependencies are
  already installed (a .pth file names a folder of links to this environment's packages, less
  pytest-lsrb): the recipes' own `pip install` steps then install pytest-lsrb itself, from the
  checkout or from a wheel built from it, with `PIP_NO_INDEX` keeping every install off the
  network (the local stand-in for PyPI is what is already installed).
- `run_until_recorded`: starts a recipe's command, and sends SIGTERM once its shard has written a
  record (as Slurm does before a preemption, or Kubernetes before an eviction).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import REPO

from pytest_lsrb.engine.records import TIMING_FIELDS

# What differs between two runs of the same attempt besides its timing: whether the answer came
# from the response cache, and how many model calls that took.
NOT_COMPARED = TIMING_FIELDS | {"cached", "model_calls"}


def checkout(dest: Path) -> Path:
    """A copy of the repository's files (tracked, and new ones git does not ignore)."""
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout: the recipes install from one")
    listed = proc.stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def user_venv(dest: Path) -> Path:
    """A new venv at `dest` that has pytest-lsrb's dependencies but not pytest-lsrb."""
    subprocess.run([sys.executable, "-m", "venv", str(dest)], check=True, capture_output=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    packages = dest.parent / f"{dest.name}-dependencies"
    packages.mkdir()
    for entry in ours.iterdir():
        if entry.name.startswith(("pytest_lsrb", "_editable_impl_pytest_lsrb", "__editable__")):
            continue
        (packages / entry.name).symlink_to(entry)
    site = subprocess.run(
        [str(dest / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "_lsrb_test_dependencies.pth").write_text(f"{packages}\n", encoding="utf-8")
    return dest


def user_environ(venv: Path | None, home: Path, **extra: str) -> dict[str, str]:
    """The environment a recipe's commands run in: offline pip, their own HOME, `venv` on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH", "VIRTUAL_ENV")}
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.update(
        HOME=str(home),
        PIP_NO_INDEX="1",  # nothing from the network: dependencies are installed already
        # (pip's spelling of --no-build-isolation: build with the hatchling installed here)
        PIP_NO_BUILD_ISOLATION="0",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.update(extra)
    return env


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def run_until_recorded(
    argv: list[str], cwd: Path, env: dict[str, str], attempts: Path, log: Path, *, whole_group: bool
) -> int:
    """Run `argv`; once `attempts` holds a record, SIGTERM it (`whole_group`: every process it
    started too, as Slurm signals all of a job's processes). Its exit status."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 300
            while proc.poll() is None and lines(attempts) < 1 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert proc.poll() is None, "the shard finished before it could be stopped:\n" + log.read_text()
            if whole_group:
                os.killpg(proc.pid, signal.SIGTERM)
            else:
                proc.send_signal(signal.SIGTERM)
            return proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def outcomes(attempts: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Each attempt's record (the last one for it) without what may differ between two runs."""
    records: dict[tuple[str, int], dict[str, Any]] = {}
    for line in attempts.read_text("utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            records[(rec["item_id"], rec["sample_index"])] = {
                k: v for k, v in rec.items() if k not in NOT_COMPARED
            }
    return records
