"""The xdist glue: what the controller and its workers hand each other.

- controller -> worker (workerinput): the run directory the controller chose, so every process
  writes under one run, and whether the controller unpacks batched messages
  (`session.seams.transport`). After a worker crashed, a flag file in the run directory
  (`crash_flag`).
- worker -> controller: each worker appends its own records to the run's attempts.jsonl, which
  the controller follows (`output.rundir.RunOutput.follow`); nothing of a record travels on a
  report. At the end (workeroutput): a write the disk refused, so the controller stops too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_lsrb.output.owner import Holder, Owner

RUN_DIR_KEY = "lsrb_run_dir"  # workerinput: the run directory the controller chose
ADAPTER_KEY = "lsrb_adapter_identity"  # workerinput: the identity entries of a user's adapter
RESUME_KEY = "lsrb_resume"  # workerinput: whether the controller resumed it (--lsrb-resume-or-start)
OWNER_KEY = "lsrb_owner"  # workerinput: the controller's lock token, pid and host (`output.owner`)
WRITE_ERROR_KEY = "lsrb_write_error"  # workeroutput: the sentence for a write the disk refused


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def given_run_dir(config: pytest.Config) -> Path | None:
    """Worker: the run directory its controller chose (None in the controller or without xdist)."""
    workerinput = getattr(config, "workerinput", {})
    return Path(workerinput[RUN_DIR_KEY]) if RUN_DIR_KEY in workerinput else None


def given_resume(config: pytest.Config) -> bool | None:
    """Worker: whether its controller resumed the run (None in the controller or without xdist)."""
    workerinput = getattr(config, "workerinput", {})
    return bool(workerinput[RESUME_KEY]) if RESUME_KEY in workerinput else None


def given_adapter_identity(config: pytest.Config) -> dict[str, str] | None:
    """Worker: the identity entries its controller gave a user's own adapter (None in the
    controller or without xdist); workers never make that adapter before their tests."""
    workerinput = getattr(config, "workerinput", {})
    found = workerinput.get(ADAPTER_KEY)
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else None


def given_owner(config: pytest.Config) -> Owner | None:
    """Worker: the controller that owns its run, when it runs on this host (a worker on another
    host has another parent); None otherwise."""
    from pytest_lsrb.output.owner import Owner, this_host

    run_dir = given_run_dir(config)
    found = getattr(config, "workerinput", {}).get(OWNER_KEY)
    if run_dir is None or not isinstance(found, dict) or found.get("host") != this_host():
        return None
    lock = found.get("lock")
    identity = (int(lock[0]), int(lock[1])) if isinstance(lock, (list, tuple)) and len(lock) == 2 else None
    return Owner(run_dir, str(found.get("token")), int(found.get("pid") or 0), identity)


def worker_id(config: pytest.Config) -> str:
    """Worker: its xdist id (gw0, gw1, ...)."""
    return str(getattr(config, "workerinput", {}).get("workerid", "?"))


def node_id(node: Any) -> str:
    """Controller: the xdist id of a worker's node (the same as its `worker_id`)."""
    return str(getattr(getattr(node, "gateway", None), "id", "?"))


def give_run_dir(
    node: Any,
    run_dir: Path,
    resume: bool,
    adapter_identity: dict[str, str],
    owner: Holder | None = None,
    lock: tuple[int, int] | None = None,
) -> None:
    """Controller: tell a worker about to start where the run writes, whether it resumed, the
    identity entries of a user's own adapter (so each worker's config hash is the controller's),
    and who owns the run and by which lock file (the worker stops once its controller no longer
    does, or that file is gone)."""
    node.workerinput[RUN_DIR_KEY] = str(run_dir)
    if owner is not None:
        node.workerinput[OWNER_KEY] = {
            "token": owner.token,
            "pid": owner.pid,
            "host": owner.host,
            "lock": list(lock) if lock is not None else None,
        }
    node.workerinput[RESUME_KEY] = resume
    node.workerinput[ADAPTER_KEY] = adapter_identity


def crash_flag(run_dir: Path, n: int) -> Path:
    """The file the controller creates when the `n`th worker of this run has crashed.

    Batched reports of tests a crashed worker finished went down with it, so xdist sends those
    tests again, to any worker. Before each attempt a worker looks for the next flag (one
    access(2)); when it is there, it takes the attempts already in attempts.jsonl as done, so a
    test sent again is answered from its record, not asked of the model twice. The controller
    creates the flag before xdist sends the tests again."""
    return run_dir / f".lsrb-crash-{n}"


def clear_crash_files(run_dir: Path) -> None:
    """Controller, when a run opens and when it ends: remove the crash flags (`crash_flag`) and
    any running-test markers left (`session.seams.transport.running_marker`)."""
    for pattern in (".lsrb-crash-*", ".lsrb-running-*"):
        for stale in run_dir.glob(pattern):
            stale.unlink(missing_ok=True)


def drop_terminal(config: pytest.Config) -> None:
    """Worker: take pytest's terminal reporter out. xdist sends a worker's stdout to /dev/null, yet
    the reporter there writes and flushes a letter per test, keeps every report to the end, and
    at the end runs the terminal-summary hooks nobody sees (with hypothesis installed, its import:
    ~0.5 s per worker). What the user sees is the controller's reporter, unchanged. Kept where
    an option makes pytest ask for the terminal writer during tests (--setup-show/-only/-plan)."""
    option = config.option
    if getattr(option, "setupshow", False) or getattr(option, "setuponly", False):
        return
    if getattr(option, "setupplan", False):
        return
    if config.pluginmanager.get_plugin("terminalreporter") is not None:
        config.pluginmanager.unregister(name="terminalreporter")


def unpack_batches(node: Any, queue_depth: int) -> None:
    """Controller: unpack the batched messages of the worker `node` is about to start (which
    sends at once whenever it holds fewer than `queue_depth` scheduled tests)."""
    from pytest_lsrb.session.seams.transport import unpack_on

    unpack_on(node, queue_depth)


def send_write_error(config: pytest.Config, message: str) -> None:
    """Worker: hand the sentence for a refused write to the controller with its output."""
    config.workeroutput[WRITE_ERROR_KEY] = message  # type: ignore[attr-defined]


def write_error_of(node: Any) -> str | None:
    """Controller: the refused write a finished worker reported, if any."""
    message = getattr(node, "workeroutput", {}).get(WRITE_ERROR_KEY)
    return message if isinstance(message, str) else None
