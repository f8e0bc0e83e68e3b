"""Output files are as readable as the user's umask allows: colleagues sharing a results folder
read run.json and summary.json like attempts.jsonl (mkstemp alone would make them 0600)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from lsrb_testing import SHARED_DATA, TACTIC_SUITE

from pytest_lsrb.output.files import current_umask, write_json_atomic

UMASK = 0o027  # group may read, others nothing: distinct from both 0600 and the usual 0644


def with_umask(mask: int) -> None:
    os.umask(mask)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="POSIX file modes")
def test_every_file_of_a_run_and_an_import_gets_0666_less_the_umask(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider",
           "--lsrb-max-items=3", f"--lsrb-output-dir={out}", f"--lsrb-baseline={out}"]  # fmt: skip
    first = subprocess.run(cmd[:-1], capture_output=True, text=True, cwd=tmp_path, env=env,
                           preexec_fn=lambda: with_umask(UMASK), timeout=300)  # fmt: skip
    assert first.returncode == 0, first.stdout[-2000:]
    base = tmp_path / "base"
    out.rename(base)
    cmd[-1] = f"--lsrb-baseline={base}"
    gated = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env,
                           preexec_fn=lambda: with_umask(UMASK), timeout=300)  # fmt: skip
    assert gated.returncode == 0, gated.stdout[-2000:]
    files = ["run.json", "attempts.jsonl", "summary.json", "gate.json"]
    assert {name: oct(mode(out / name)) for name in files} == {name: oct(0o640) for name in files}
    if (SHARED_DATA / "sorrydb").is_dir():
        index = tmp_path / "index.jsonl"
        imported = subprocess.run(
            [sys.executable, "-m", "pytest_lsrb", "import", "sorrydb",
             str(SHARED_DATA / "sorrydb" / "SorryDB_2601_sample.json"), "-o", str(index)],
            capture_output=True, text=True, preexec_fn=lambda: with_umask(UMASK), timeout=300,
        )  # fmt: skip
        assert imported.returncode == 0, imported.stderr
        assert mode(index) == 0o640


def test_current_umask_reads_the_umask_without_changing_it(tmp_path: Path) -> None:
    old = os.umask(0o007)
    try:
        assert current_umask() == 0o007 and current_umask() == 0o007
        write_json_atomic(tmp_path / "x.json", {"a": "\ud800"})  # a surrogate is escaped, not a crash
        if hasattr(os, "fchmod"):
            assert mode(tmp_path / "x.json") == 0o660
    finally:
        os.umask(old)
    text = (tmp_path / "x.json").read_bytes().decode("utf-8")  # valid UTF-8
    assert text == '{\n  "a": "\\ud800"\n}\n' and json.loads(text) == {"a": "\ud800"}
