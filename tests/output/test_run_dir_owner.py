"""One command owns a run directory at a time (`output.owner`), and no file in it is written
through a symbolic link (`core.nofollow`) — issue #38.

The staleness rule is a pure function with laws (hypothesis); the lock itself is the kernel's
`flock`, tried here by two holders in one process and by a holder whose process is really gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb import api
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.nofollow import create_nofollow, open_nofollow
from pytest_lsrb.core.processes import RUNNING_UNKNOWN_START, process_start
from pytest_lsrb.engine.budget import Ledger
from pytest_lsrb.output.files import AttemptsWriter, truncate_torn_tail
from pytest_lsrb.output.owner import (
    LOCK_FILE,
    Holder,
    Owner,
    RunDirLock,
    is_stale,
    owner_problem,
)

HERE = "node-a"
SUITE = "goal_to_tactic_proposal_v1"
holders = st.builds(
    Holder,
    pid=st.integers(1, 2**22),
    host=st.sampled_from([HERE, "node-b", ""]),
    started=st.just("2026-01-01T00:00:00+00:00"),
    token=st.text(min_size=1, max_size=8),
    since_boot=st.none() | st.integers(0, 10**9),
)
# a process table: pid -> its start (or RUNNING_UNKNOWN_START)
tables = st.dictionaries(st.integers(1, 2**22), st.integers(0, 10**9) | st.just(RUNNING_UNKNOWN_START))


@given(holders, tables)
def test_a_holder_on_another_host_is_never_stale(holder: Holder, table: dict[int, int]) -> None:
    if holder.host != HERE:
        assert not is_stale(holder, HERE, table.get)


@given(holders, tables)
def test_a_holder_whose_pid_has_no_process_here_is_stale(holder: Holder, table: dict[int, int]) -> None:
    table.pop(holder.pid, None)
    assert is_stale(holder, HERE, table.get) == (holder.host == HERE)


@given(holders, tables)
def test_a_running_holder_is_live_and_a_reused_pid_is_not(holder: Holder, table: dict[int, int]) -> None:
    start = holder.since_boot if holder.since_boot is not None else 7
    table[holder.pid] = start
    assert not is_stale(holder, HERE, table.get)  # the very process that took the lock
    if holder.host == HERE and holder.since_boot is not None:
        table[holder.pid] = start + 1  # the holder died and another process got its pid
        assert is_stale(holder, HERE, table.get)
        table[holder.pid] = RUNNING_UNKNOWN_START  # a process we cannot look into: believed
        assert not is_stale(holder, HERE, table.get)


@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_a_lock_file_naming_no_holder_is_stale_and_never_raises(text: str) -> None:
    holder = Holder.from_text(text)
    if holder is None:
        assert is_stale(None, HERE, {}.get)
    else:
        assert Holder.from_text(holder.to_text()) == holder


@given(holders)
def test_a_holder_survives_its_file(holder: Holder) -> None:
    assert Holder.from_text(holder.to_text()) == holder


def test_this_process_start_is_read_and_a_dead_pid_has_none() -> None:
    assert process_start(os.getpid()) not in (None, RUNNING_UNKNOWN_START) or sys.platform != "linux"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert process_start(dead.pid) is None


def test_a_second_holder_is_refused_in_one_sentence_naming_the_first(tmp_path: Path) -> None:
    first = RunDirLock.acquire(tmp_path)
    with pytest.raises(LsrbUsageError) as refused:
        RunDirLock.acquire(tmp_path)
    sentence = str(refused.value)
    assert f"pid {os.getpid()} on {first.holder.host}" in sentence and "\n" not in sentence
    assert str(tmp_path) in sentence
    first.release()
    again = RunDirLock.acquire(tmp_path)  # let go: the next command takes it
    assert (tmp_path / LOCK_FILE).read_text().startswith("{") and again.holder != first.holder
    again.release()
    assert (tmp_path / LOCK_FILE).read_text() == ""  # a released lock names nobody


@pytest.mark.parametrize("how", ["deleted", "replaced", "renamed away"])
def test_a_lock_file_deleted_or_replaced_under_its_run_is_said_and_no_second_command_gets_in(
    tmp_path: Path, how: str
) -> None:
    """Issue #46 item 6: a cleanup of dot-files under a running command. The run sees that its lock
    file is not the one it locked (one sentence), and the same command started again is refused:
    the folder itself is locked too."""
    lock = RunDirLock.acquire(tmp_path)
    assert lock.problem() is None
    path = tmp_path / LOCK_FILE
    if how == "deleted":
        path.unlink()
    elif how == "replaced":
        path.unlink()
        path.write_text("")
    else:
        path.rename(tmp_path / "elsewhere")
    problem = lock.problem()
    assert problem is not None and "\n" not in problem and str(path) in problem
    assert ("deleted" if how != "replaced" else "replaced by another file") in problem
    owner = Owner(tmp_path, lock.holder.token, os.getppid(), lock.identity)
    assert owner.lock_problem() == problem  # what a worker of the run sees
    with pytest.raises(LsrbUsageError, match="is in use by another lsrb command"):
        RunDirLock.acquire(tmp_path)  # the second command: refused, the file gone or not
    lock.release()
    again = RunDirLock.acquire(tmp_path)  # once the first has let go
    assert again.problem() is None
    again.release()


def test_a_lock_left_by_a_killed_command_is_taken_over(tmp_path: Path) -> None:
    code = (
        "import os, sys; from pathlib import Path; from pytest_lsrb.output.owner import RunDirLock;"
        "RunDirLock.acquire(Path(sys.argv[1])); os.kill(os.getpid(), 9)"
    )
    killed = subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    assert killed.returncode == -9
    left = Holder.from_text((tmp_path / LOCK_FILE).read_text())
    assert left is not None and left.pid != os.getpid()  # its holder is still written there
    taken = RunDirLock.acquire(tmp_path)
    assert taken.holder.pid == os.getpid()
    taken.release()


def test_a_process_whose_owner_lost_the_run_dir_is_told_in_one_sentence(tmp_path: Path) -> None:
    lock = RunDirLock.acquire(tmp_path)
    assert owner_problem(tmp_path, lock.holder.token) is None
    assert Owner(tmp_path, lock.holder.token, os.getppid()).problem() is None
    other = owner_problem(tmp_path, "someone-else")
    assert other is not None and f"pid {os.getpid()}" in other
    gone = Owner(tmp_path, lock.holder.token, os.getppid() + 1).problem()  # not its parent
    assert gone is not None and "has ended" in gone
    lock.release()
    assert owner_problem(tmp_path, lock.holder.token) is not None


# -- symbolic links ------------------------------------------------------------------------------


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "outside.txt"
    target.write_text("precious\n")
    return target


def test_no_writer_of_a_run_file_goes_through_a_link(tmp_path: Path, victim: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("attempts.jsonl", ".lsrb-budget.json", LOCK_FILE, "x.log"):
        (run_dir / name).symlink_to(victim)
    with pytest.raises(OSError, match="symbolic link"):
        AttemptsWriter(run_dir / "attempts.jsonl", repair_tail=False)
    with pytest.raises(OSError, match="symbolic link"):
        truncate_torn_tail(run_dir / "attempts.jsonl")
    with pytest.raises(OSError, match="symbolic link"):
        Ledger(run_dir).read()
    with pytest.raises(LsrbUsageError, match="symbolic link"):
        RunDirLock.acquire(run_dir)
    with pytest.raises(OSError, match="symbolic link"):
        create_nofollow(run_dir / "x.log", b"log")
    with pytest.raises(OSError, match="symbolic link"):
        open_nofollow(run_dir / "x.log", os.O_WRONLY | os.O_TRUNC)
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("name", ["attempts.jsonl", ".lsrb-budget.json", "summary.json"])
def test_a_run_dir_holding_a_link_is_refused_and_its_target_untouched(
    tmp_path: Path, victim: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    done = api.run(SUITE, max_items=2, output_dir=str(out), pytest_args=["-q"])
    assert done.finished
    text = (out / name).read_text() if (out / name).exists() else "{}"
    victim.write_text(text)
    (out / name).unlink(missing_ok=True)
    (out / name).symlink_to(victim)
    with pytest.raises(LsrbUsageError) as refused:
        api.run(SUITE, max_items=2, output_dir=str(out), resume=True, max_total_tokens=10**6)
    sentence = str(refused.value)
    assert f"({name})" in sentence and "never writes a run's file through a link" in sentence
    assert victim.read_text() == text
    assert json.loads((out / "run.json").read_text())["attempts_expected"] == 2


@pytest.mark.parametrize("name", [".lsrb-outage", ".lsrb-stop"])
def test_a_folder_where_lsrb_keeps_a_file_is_refused_in_one_sentence(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder planted under the name of a file lsrb writes or clears (`.lsrb-outage`,
    `.lsrb-stop`) ended the resume in an INTERNALERROR traceback (IsADirectoryError, exit 3)."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert api.run(SUITE, max_items=2, output_dir=str(out), pytest_args=["-q"]).finished
    (out / name).unlink(missing_ok=True)
    (out / name).mkdir()
    (out / name / "keep").write_text("precious\n")
    with pytest.raises(LsrbUsageError) as refused:
        api.run(SUITE, max_items=2, output_dir=str(out), resume=True)
    sentence = str(refused.value)
    assert f"({name})" in sentence and "a folder" in sentence, sentence
    assert (out / name / "keep").read_text() == "precious\n"


def test_a_child_whose_lsrb_run_no_longer_owns_the_group_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's run started by `lsrb run` (`LSRB_OWNER`) checks that its parent still owns the
    group folder before it writes anything; here another command took the group over."""
    from pytest_lsrb.output.owner import OWNER_ENV, owner_env

    monkeypatch.chdir(tmp_path)
    group = tmp_path / "group"
    other = RunDirLock.acquire(group)  # the command that owns the group now
    stale = Holder(os.getppid(), other.holder.host, other.holder.started, "the-parents-token")
    monkeypatch.setenv(OWNER_ENV, owner_env(group, stale)[OWNER_ENV])
    with pytest.raises(LsrbUsageError) as refused:
        api.run(SUITE, max_items=1, output_dir=str(group / "m"))
    assert "is no longer owned by the command that started this process" in str(refused.value)
    assert f"pid {os.getpid()}" in str(refused.value)
    assert not (group / "m" / "attempts.jsonl").exists() and not (group / "m" / "run.json").exists()
    assert OWNER_ENV not in os.environ  # taken: the child's own children do not inherit it
    other.release()
