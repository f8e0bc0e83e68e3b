"""A suite's folder of runs: without `--lsrb-output-dir`, every run gets its own directory.

    lsrb-out/<suite>/<UTC start time>-<config hash>/   run.json, attempts.jsonl, summary.json
    lsrb-out/<suite>/latest                            -> the run started last

So running the same command twice keeps both runs (a history, like other evaluation tools keep),
`--lsrb-resume` continues the latest unfinished run of the same configuration, and every command
that reads a run accepts `lsrb-out/<suite>/latest`. An explicit `--lsrb-output-dir` is one
directory with the refuse/resume/overwrite rules of `rundir.RunOutput.open`. (The folder,
`RUNS_ROOT/<suite>` under the current directory, is decided with the other options.)
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.nofollow import create_nofollow
from pytest_lsrb.output.files import RUN_FILE, SUMMARY_FILE, read_json

LATEST: Final = "latest"
HASH_CHARS: Final = 12


def new_run_dir(folder: Path, config_hash: str, now: datetime | None = None) -> Path:
    """`folder/<UTC time>-<hash>`: a name no earlier run in `folder` holds (nothing is created)."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    suffix = config_hash[:HASH_CHARS]
    candidate = folder / f"{stamp}-{suffix}"
    n = 1
    while candidate.exists():  # two runs of one config in the same second
        n += 1
        candidate = folder / f"{stamp}.{n}-{suffix}"
    return candidate


def _finished(run_dir: Path) -> bool:
    try:
        summary: Any = read_json(run_dir / SUMMARY_FILE)
    except LsrbUsageError:  # absent or unreadable: the run did not finish
        return False
    return isinstance(summary, dict) and summary.get("complete") is True


def resumable_run_dir(folder: Path, config_hash: str, *, finished_too: bool = False) -> Path:
    """The latest run in `folder` with this configuration that has not finished (with
    `finished_too`, the latest of this configuration at all)."""
    suffix = f"-{config_hash[:HASH_CHARS]}"
    runs = (
        sorted(p for p in folder.iterdir() if p.name.endswith(suffix) and (p / RUN_FILE).is_file())
        if folder.is_dir()
        else []
    )
    for run_dir in reversed(runs):
        if finished_too or not _finished(run_dir):
            return run_dir
    what = "no run" if finished_too or not runs else "no unfinished run"
    raise LsrbUsageError(
        f"--lsrb-resume: {folder} holds {what} of this configuration (config hash "
        f"{config_hash[:HASH_CHARS]}); run without --lsrb-resume to start one, or name the run's "
        "directory with --lsrb-output-dir."
    )


def point_latest(run_dir: Path) -> None:
    """Make `<folder>/latest` name `run_dir`: a relative symlink, replaced atomically (a file
    holding the directory's name where symlinks are not allowed)."""
    link = run_dir.parent / LATEST
    tmp = run_dir.parent / f".{LATEST}.{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        os.symlink(run_dir.name, tmp, target_is_directory=True)
    except OSError:
        create_nofollow(tmp, (run_dir.name + "\n").encode("utf-8"))
    os.replace(tmp, link)


def follow_latest(path: Path) -> Path:
    """A run directory given as `.../latest`: the run it names now (so a run started later, which
    moves `latest`, does not change what was meant). Any other path is returned as it is."""
    if path.name != LATEST:
        return path
    try:
        if path.is_symlink():
            return path.parent / os.readlink(path)
        if path.is_file():
            return path.parent / path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise LsrbUsageError(f"{path}: cannot be read as the name of the latest run.") from None
    return path
