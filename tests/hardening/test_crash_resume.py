"""Crash safety: a run killed at any point and resumed ends exactly like an uninterrupted run.

Each case runs the tactic suite through a real HTTP adapter (`--lsrb-adapter=ollama`) against the
local fake Ollama server, which counts every chat request by its attempt seed. A tiny conftest in
the suite's copy kills the run right after the Nth record is written, in one of three ways:

- `kill`: SIGKILL to the whole process group (controller and xdist workers), like the OOM killer;
- `timer`: the same, from a thread D seconds later, so it lands wherever the run happens to be
  (requests in flight, a test half set up, a record half written);
- `torn`: the file-size limit is set a few bytes past the end of attempts.jsonl, so the kernel
  cuts the next record's write short and kills the writer with SIGXFSZ: a real torn last line
  (under -n the other worker is frozen first and the whole run killed at that write, so the
  torn line is the last one);
- `cut` (-n only): the same limit on one worker, nobody killed: the worker reports the write it
  could not finish as a full disk and the run stops; the other worker's record in flight is
  appended right after the cut-short one, on the same line.

Then `--lsrb-resume` finishes the run, and the test checks: the file before resuming reads back
(a torn last line is reported and skipped), no attempt is lost or duplicated, every record and
the summary equal the uninterrupted run's (timing fields aside), and no attempt that was already
in attempts.jsonl was sent to the model again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama

from pytest_lsrb.engine.records import strip_timing
from pytest_lsrb.engine.summary import SUMMARY_TIMING_KEYS
from pytest_lsrb.output.files import AttemptsReadReport, iter_attempts

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"
ITEMS, SAMPLES = 24, 2
ATTEMPTS = ITEMS * SAMPLES

KILL_CONFTEST = '''
"""Kill switch for tests/hardening/test_crash_resume.py (inert unless LSRB_KILL_AFTER is set).

It acts in the process that writes attempts.jsonl: the one process of a serial run, each xdist
worker under -n (the workers append their own records), once the file holds AFTER records."""
import os
import resource
import signal
import threading
import time

import pytest

AFTER = int(os.environ.get("LSRB_KILL_AFTER", "0"))
MODE = os.environ.get("LSRB_KILL_MODE", "kill")
DELAY = float(os.environ.get("LSRB_KILL_DELAY", "0"))
_config = None
_fired = False
_cut_at = None  # torn under -n: the size at which this worker's write was cut short


def pytest_configure(config):
    global _config
    _config = config


def _kill_group(*_):
    os.killpg(0, signal.SIGKILL)


def _stop_siblings(sig=signal.SIGSTOP):
    """Freeze (or, with SIGCONT, thaw) every other process of this run but the controller, so
    that no other worker writes before this one's cut-short write."""
    group, me, parent = os.getpgrp(), os.getpid(), os.getppid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (me, parent):
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:
            os.kill(int(name), sig)


def _has_next_test():
    """Whether this process runs another test (so writes another record). An xdist worker
    without one would freeze its sibling and then wait for it: the run would hang."""
    for plugin in _config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor":
            return isinstance(getattr(plugin, "nextitem_index", None), int)
    return True  # serial: the run writes until its last test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_logreport(report):
    global _fired, _cut_at
    try:
        return (yield)
    finally:
        if _cut_at is not None and _attempts().stat().st_size >= _cut_at:
            # the cut-short write is on disk
            if MODE == "torn":
                _kill_group()  # now the whole run dies
            else:
                _cut_at = None
                _stop_siblings(signal.SIGCONT)  # the others go on appending after it
        elif AFTER and not _fired and not _config.pluginmanager.has_plugin("dsession"):
            # (an xdist controller writes no records)
            _maybe_fire()


def _attempts():
    return _config.pluginmanager.get_plugin("lsrb-session").run.config.output_dir / "attempts.jsonl"


def _maybe_fire():
    global _fired, _cut_at
    path = _attempts()
    if path.read_bytes().count(b"\\n") < AFTER:
        return
    if MODE in ("torn", "cut") and not _has_next_test():
        return  # no record of this process would be cut short: leave it to another
    _fired = True
    try:  # only the first process to get here fires (each xdist worker runs this switch)
        os.close(os.open(path.parent.parent / "kill-fired", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return
    if MODE == "kill":
        _kill_group()
    elif MODE == "timer":
        threading.Thread(target=lambda: (time.sleep(DELAY), _kill_group()), daemon=True).start()
    elif MODE in ("torn", "cut"):
        worker = hasattr(_config, "workerinput")
        if worker:
            _stop_siblings()  # before the size is read: nobody else writes until the cut
        size = path.stat().st_size
        if worker:
            # A worker does not finish a write cut short (another worker's line could come
            # between); it reports it, and this kill switch then kills the whole run (`torn`)
            # or lets the other workers go on (`cut`).
            _cut_at = size + 40
        if MODE == "torn" and not worker:
            # serial: the writer finishes the cut-short write, and that second write gets
            # SIGXFSZ, which kills it.
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        elif MODE == "cut":
            # like a full disk, a write past the limit fails (EFBIG) and kills nobody; the
            # worker reports the write it could not finish and the run stops by itself.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, resource.RLIM_INFINITY))
'''

# (mode, N, delay, xdist): by default seven points, the `slow` set adds 22 more.
DEFAULT_POINTS = [
    ("kill", 1, 0.0, False),
    ("torn", 17, 0.0, False),
    ("timer", 30, 0.02, False),
    ("kill", 9, 0.0, True),
    ("torn", 25, 0.0, True),
    ("timer", 40, 0.01, True),
    ("cut", 9, 0.0, True),
]
SLOW_POINTS = [
    *[("kill", n, 0.0, False) for n in (3, 12, 21, 36, 47)],
    *[("torn", n, 0.0, False) for n in (2, 29, 44)],
    *[("timer", n, d, False) for n, d in ((5, 0.003), (14, 0.05), (23, 0.1))],
    *[("kill", n, 0.0, True) for n in (2, 16, 33, 46)],
    *[("torn", n, 0.0, True) for n in (6, 38)],
    *[("cut", n, 0.0, True) for n in (3, 30)],
    *[("timer", n, d, True) for n, d in ((4, 0.002), (19, 0.03), (28, 0.08))],
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(latency_s=0.005) as server:
        yield server


@pytest.fixture(scope="module")
def suite_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite") / SUITE.name
    shutil.copytree(SUITE, root, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (root / "conftest.py").write_text(KILL_CONFTEST, encoding="utf-8")
    return root


def run(
    suite: Path,
    fake: FakeOllama,
    out: Path,
    *extra: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(suite),
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}",
        f"--lsrb-max-items={ITEMS}",
        f"--lsrb-samples={SAMPLES}",
        "--lsrb-outcome=record",
        f"--lsrb-output-dir={out}",
        *extra,
    ]
    full_env = {
        k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS" and not k.startswith("LSRB_KILL")
    }
    full_env.update(env or {})
    proc = subprocess.Popen(
        cmd,
        cwd=out.parent,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        # whatever the kill left behind (xdist workers of a controller killed by SIGXFSZ)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


# `model_calls` counts HTTP requests, so a transient retry (a keep-alive race with the local
# server on a loaded machine) changes it in any run, killed or not: like timing, it is left out.
# That no finished attempt is asked again is checked on the server's own request log instead.
NOT_COMPARED = {"model_calls"}


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in SUMMARY_TIMING_KEYS | NOT_COMPARED}


def comparable_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in strip_timing(record).items() if k not in NOT_COMPARED}


def calls_by_seed(fake: FakeOllama) -> Counter[int]:
    # A request the kill cut off before its body arrived never reached the model.
    return Counter(int(r.body["options"]["seed"]) for r in fake.chat_requests() if isinstance(r.body, dict))


@pytest.fixture(scope="module")
def reference(suite_copy: Path, fake: FakeOllama, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The uninterrupted run: its records by attempt, its summary, and seed -> attempt."""
    out = tmp_path_factory.mktemp("reference") / "out"
    proc = run(suite_copy, fake, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == ATTEMPTS
    by_key = {(r["item_id"], r["sample_index"]): comparable_record(r) for r in records}
    seeds = {r["attempt_seed"]: (r["item_id"], r["sample_index"]) for r in records}
    assert len(seeds) == ATTEMPTS  # every attempt has its own seed: the server can tell them apart
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    return {"records": by_key, "seeds": seeds, "summary": comparable(summary)}


def kill_and_resume(
    mode: str,
    after: int,
    delay: float,
    xdist: bool,
    tmp_path: Path,
    suite_copy: Path,
    fake: FakeOllama,
    reference: dict[str, Any],
) -> None:
    out = tmp_path / "out"
    workers = ("-n", "2") if xdist else ()
    env = {"LSRB_KILL_AFTER": str(after), "LSRB_KILL_MODE": mode, "LSRB_KILL_DELAY": str(delay)}
    before_calls = calls_by_seed(fake)
    killed = run(suite_copy, fake, out, *workers, env=env)
    if mode == "cut":  # nobody was killed: the run stopped at the write the disk refused
        assert killed.returncode == 2, killed.stdout + killed.stderr
        assert "only 40 of" in killed.stdout, killed.stdout
    elif mode != "timer":  # a timer may fire after the run has ended; the other kills cannot miss
        assert killed.returncode in (-signal.SIGKILL, -signal.SIGXFSZ), killed.stdout + killed.stderr

    # What the crash left: every complete line reads back; a torn last line is reported, skipped.
    attempts = out / "attempts.jsonl"
    report = AttemptsReadReport()
    finished = {(r["item_id"], r["sample_index"]) for r in iter_attempts(attempts, report)}
    if mode == "torn":
        assert report.torn_tail_line == len(finished) + 1, report
        assert "last line is incomplete" in report.warnings[0]
    if mode == "cut":
        # the other worker went on: the cut-short record starts the line of its next record
        # (or, if it had none left, is the torn last line)
        assert len(report.glued_lines) + (report.torn_tail_line is not None) == 1, report
    if mode != "timer":
        assert len(finished) >= after
    calls_at_crash = calls_by_seed(fake)

    resumed = run(suite_copy, fake, out, *workers, "--lsrb-resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    for line in report.glued_lines:  # what the resume read past, it says
        assert f"attempts.jsonl:{line}: the line starts with a record cut short" in resumed.stdout

    after_resume = AttemptsReadReport()
    records = list(iter_attempts(attempts, after_resume))
    assert after_resume.torn_tail_line is None  # the resume cut the torn last line
    assert after_resume.glued_lines == report.glued_lines  # and wrote no new cut-short line
    keys = Counter((r["item_id"], r["sample_index"]) for r in records)
    assert set(keys) == set(reference["records"])  # no attempt lost
    assert max(keys.values()) == 1  # none duplicated
    assert {(r["item_id"], r["sample_index"]): comparable_record(r) for r in records} == reference["records"]
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert comparable(summary) == reference["summary"]
    # No model call repeated for an attempt that was already written before the crash.
    resume_calls = calls_by_seed(fake) - calls_at_crash
    seeds = reference["seeds"]
    assert not [seeds[s] for s in resume_calls if seeds[s] in finished]
    # ...and the resume asked for exactly the attempts the crash left unwritten.
    assert {seeds[s] for s in resume_calls} == set(reference["records"]) - finished
    assert sum((calls_at_crash - before_calls).values()) >= len(finished)


@pytest.mark.parametrize(
    ("mode", "after", "delay", "xdist"),
    # the first point is the feature's one end-to-end test in the default run
    [pytest.param(*DEFAULT_POINTS[0], marks=pytest.mark.smoke), *DEFAULT_POINTS[1:]],
    ids=[f"{m}-{n}{'-n2' if x else ''}" for m, n, _, x in DEFAULT_POINTS],
)
def test_a_killed_run_resumes_to_the_uninterrupted_result(
    mode: str,
    after: int,
    delay: float,
    xdist: bool,
    tmp_path: Path,
    suite_copy: Path,
    fake: FakeOllama,
    reference: dict[str, Any],
) -> None:
    kill_and_resume(mode, after, delay, xdist, tmp_path, suite_copy, fake, reference)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "after", "delay", "xdist"),
    SLOW_POINTS,
    ids=[f"{m}-{n}{'-n2' if x else ''}" for m, n, _, x in SLOW_POINTS],
)
def test_more_kill_points(
    mode: str,
    after: int,
    delay: float,
    xdist: bool,
    tmp_path: Path,
    suite_copy: Path,
    fake: FakeOllama,
    reference: dict[str, Any],
) -> None:
    kill_and_resume(mode, after, delay, xdist, tmp_path, suite_copy, fake, reference)
