"""A full disk ends the run with one sentence naming the file; what was written stays readable,
and --lsrb-resume finishes the run once there is space again."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsrb_testing import TACTIC_SUITE

ITEMS = 60
SENTENCE = (
    "No space left on device (ENOSPC); the run stops here and every attempt written before it is "
    "kept: free some space and continue the run with --lsrb-resume."
)


def run(cwd: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider",
           f"--lsrb-output-dir={out}", f"--lsrb-max-items={ITEMS}", *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 KiB tmpfs (root only; skipped where mounting is not allowed)."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    point = tmp_path / "disk"
    point.mkdir()
    if os.name != "posix" or os.geteuid() != 0 or mount is None or umount is None:
        pytest.skip("mounting a small tmpfs needs root")
    made = subprocess.run([mount, "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(point)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(
            f"mounting a tmpfs is not permitted here ({made.stderr.decode(errors='replace').strip()})"
        )
    try:
        yield point
    finally:
        subprocess.run([umount, str(point)], capture_output=True)


def test_a_disk_filling_up_mid_run_stops_it_and_resume_finishes_it(tmp_path: Path, small_disk: Path) -> None:
    out = small_disk / "out"
    full = run(tmp_path, out)
    assert full.returncode == 2, full.stdout[-2000:] + full.stderr
    assert f"Interrupted: cannot write {out / 'attempts.jsonl'}: {SENTENCE}" in full.stdout
    assert "INTERNALERROR" not in full.stdout + full.stderr and "Traceback" not in full.stdout
    kept = (out / "attempts.jsonl").read_bytes().split(b"\n")
    complete = [json.loads(line) for line in kept[:-1]]  # every finished line reads back
    assert 0 < len(complete) < ITEMS and not (out / "summary.json").exists()
    subprocess.run(["mount", "-o", "remount,size=1m", str(small_disk)], check=True)
    resumed = run(tmp_path, out, "--lsrb-resume")
    assert resumed.returncode == 0, resumed.stdout[-2000:]
    records = [json.loads(x) for x in (out / "attempts.jsonl").read_text("utf-8").splitlines()]
    assert len({r["item_id"] for r in records}) == len(records) == ITEMS
    assert records[: len(complete)] == complete
    assert json.loads((out / "summary.json").read_text("utf-8"))["complete"] is True


def full_device(path: Path) -> None:
    """Make `path` a device like /dev/full (every write: ENOSPC). Not a symbolic link to it: lsrb
    never writes a run's file through a link (`core.nofollow`)."""
    if not Path("/dev/full").exists() or not hasattr(os, "mknod"):
        pytest.skip("needs /dev/full (Linux)")
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.stat("/dev/full").st_rdev)
    except OSError as exc:
        pytest.skip(f"making a device file is not permitted here ({exc.strerror})")


def test_a_full_disk_under_xdist_is_one_sentence(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    full_device(out / "attempts.jsonl")  # every write: ENOSPC
    proc = run(tmp_path, out, "-n", "2")
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr
    assert f"cannot write {out / 'attempts.jsonl'}: {SENTENCE}" in proc.stdout
    assert "INTERNALERROR" not in proc.stdout + proc.stderr and "Traceback" not in proc.stdout
    assert json.loads((out / "run.json").read_text("utf-8"))["attempts_expected"] == ITEMS
