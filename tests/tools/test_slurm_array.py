"""examples/slurm-array.sh under a real Slurm: sbatch, a preemption by `scontrol requeue`, a second
array racing the first on the same output folder, then `lsrb merge` as the script's header says.

The cluster is a real one-node Slurm (slurmctld, slurmd, munge) that `.ci/slurm` starts; CI starts
it before the tests and exports SLURM_CONF (and LSRB_REQUIRE_SLURM=1, so this test never skips
there). Elsewhere the test starts one itself when it runs as root with Slurm's packages installed,
and skips with its reason when it cannot. The model is a local fake OpenAI-compatible server that
counts every request, so "no recorded attempt was sent twice" is read off the server, not the
records.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from lsrb_testing import REPO
from recipe_kit import checkout, lines, outcomes, user_environ, user_venv

from pytest_lsrb.engine.option_table import OPTIONS

SCRIPT = REPO / "examples" / "slurm-array.sh"
TASKS = 4  # the script's --array=0-3
ITEMS, SAMPLES = 20, 2
# One answer at a time and a slow model, so a task is still running when the second array is
# submitted and when it is preempted; given through pytest's own variable, so the script stays
# as shipped (sbatch passes the submitting shell's environment to the tasks).
SELECTION = f"--lsrb-max-items={ITEMS} --lsrb-samples={SAMPLES} --lsrb-concurrency=1"
MODEL = "smollm2:135m"
LATENCY_S = 2.5
PREEMPTED = 2  # the array task `scontrol requeue` preempts


def test_the_script_asks_slurm_for_what_it_relies_on() -> None:
    """What the real-cluster test below relies on, checked where no Slurm runs too."""
    text = SCRIPT.read_text("utf-8")
    directives = [line.split(None, 1)[1] for line in text.splitlines() if line.startswith("#SBATCH ")]
    # requeued on preemption, one log a task that a requeue appends to, one task a shard
    assert {"--requeue", "--open-mode=append", f"--array=0-{TASKS - 1}"} <= set(directives)
    assert any(d.startswith("--output=") and "%A_%a" in d for d in directives)
    command = text.split('lsrb" run', 1)[1].split("||")[0].replace("\\\n", " ")
    options = {word.split("=")[0] for word in shlex.split(command) if word.startswith("--lsrb-")}
    assert options <= {f"--lsrb-{o.name}" for o in OPTIONS}, options
    assert {"--lsrb-resume-or-start", "--lsrb-shard-index", "--lsrb-cache-dir"} <= options
    assert "flock" in text and "trap" in text  # one venv for every task; SIGTERM noted in the log


def _required() -> bool:
    return os.environ.get("LSRB_REQUIRE_SLURM") == "1"


def _unavailable(reason: str) -> None:
    if _required():
        pytest.fail(f"LSRB_REQUIRE_SLURM=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def slurm_conf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """SLURM_CONF of a running cluster: CI's (already started), or one started here for the test."""
    pytest.importorskip(
        "hatchling", reason="the script installs pytest-lsrb from the checkout with hatchling"
    )
    given = os.environ.get("SLURM_CONF")
    if given:
        yield given
        return
    if shutil.which("sbatch") is None or shutil.which("slurmctld") is None:
        _unavailable("Slurm is not installed (apt-get install slurmd slurmctld slurm-client munge)")
    if os.geteuid() != 0:
        _unavailable("starting a Slurm cluster here needs root (slurmd runs jobs as their user)")
    state = tmp_path_factory.mktemp("slurm")
    start = subprocess.run(
        ["bash", str(REPO / ".ci" / "slurm"), "start", str(state)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    if start.returncode != 0:
        _unavailable(f"the Slurm cluster did not start: {start.stderr.strip()[-500:]}")
    try:
        yield str(state / "slurm.conf")
    finally:
        subprocess.run(
            ["bash", str(REPO / ".ci" / "slurm"), "stop", str(state)], capture_output=True, timeout=120
        )


def slurm(conf: str, *argv: str) -> str:
    env = {**os.environ, "SLURM_CONF": conf}
    proc = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{' '.join(argv)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def job_fields(conf: str, job: str) -> dict[str, str]:
    """`scontrol show job` of one array task, as key=value pairs (what Slurm recorded for it)."""
    text = slurm(conf, "scontrol", "show", "job", "--oneliner", job)
    return dict(re.findall(r"(\w+)=(\S*)", text))


def pending_or_running(conf: str, job: str) -> list[str]:
    return slurm(conf, "squeue", "--noheader", "--array", "--jobs", job, "--format=%i %t").split("\n")[:-1]


def wait_for(what: str, check: Any, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def request_key(body: dict[str, Any]) -> str:
    """What identifies one attempt's request at the server: its messages and its seed."""
    return json.dumps([body.get("messages"), body.get("seed")], sort_keys=True)


def record_key(rec: dict[str, Any]) -> str:
    return json.dumps([rec["prompt"], rec["attempt_seed"]], sort_keys=True)


@pytest.mark.slow
def test_the_slurm_array_under_real_slurm(tmp_path: Path, slurm_conf: str) -> None:
    submit = checkout(tmp_path / "pytest-lsrb")  # sbatch is run from a checkout, as the header says
    home = tmp_path / "home"  # the cluster's shared home: the environment and the response cache
    venv = home / ".cache" / "lsrb-venv"  # where the script makes its environment
    venv.parent.mkdir(parents=True)
    user_venv(venv)  # its dependencies installed (offline); the script installs pytest-lsrb itself
    # The cluster's `python3`: the interpreter those dependencies were built for, noting each time
    # the script makes the environment (the venv lock must let exactly one task do it).
    cluster_bin = tmp_path / "cluster-bin"
    cluster_bin.mkdir()
    made = tmp_path / "venv-made.log"
    real_python = getattr(sys, "_base_executable", sys.executable)
    (cluster_bin / "python3").write_text(
        f'#!/bin/sh\ncase "$*" in *"-m venv"*) echo "$$ $*" >>"{made}";; esac\nexec "{real_python}" "$@"\n'
    )
    (cluster_bin / "python3").chmod(0o755)
    with FakeOllama(latency_s=LATENCY_S) as server:
        env = user_environ(
            None,
            home,
            SLURM_CONF=slurm_conf,
            LSRB_BASE_URL=f"{server.url}/v1",
            LSRB_MODEL=MODEL,
            PYTEST_ADDOPTS=SELECTION,
        )
        env["PATH"] = f"{cluster_bin}{os.pathsep}{env['PATH']}"

        def sbatch() -> str:
            # A 2-CPU node cannot give the script's 4 CPUs a task: the user asks 1 on the command
            # line, which overrides the #SBATCH line (docs/sharding.md).
            proc = subprocess.run(
                ["sbatch", "--parsable", "--cpus-per-task=1", "examples/slurm-array.sh"],
                cwd=submit,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            return proc.stdout.strip().split(";")[0]

        shards = submit / "lsrb-out" / "shards"
        first = sbatch()

        def every_shard_recording() -> bool:
            return all(lines(shards / f"shard-{t}" / "attempts.jsonl") >= 1 for t in range(TASKS))

        wait_for("every task of the array to record an attempt", every_shard_recording, 300)

        # A second array on the same output folder while the first runs: each task is refused
        # by its shard's owner lock, in one sentence of its own log, and sends nothing.
        sent_before_second = len(server.chat_requests())
        second = sbatch()
        wait_for("the second array to end", lambda: not pending_or_running(slurm_conf, second), 240)
        for task in range(TASKS):
            log = (submit / f"lsrb-{second}_{task}.log").read_text()
            refusals = [line for line in log.splitlines() if "is in use by another lsrb command" in line]
            assert len(refusals) == 1, log
            assert f"shard-{task}" in refusals[0], log
            fields = job_fields(slurm_conf, f"{second}_{task}")
            assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "2:0", fields

        # Preemption: `scontrol requeue` SIGTERMs every process of the task, Slurm requeues it and
        # runs the same script again after its requeue delay (SLURM_RESTART_COUNT=1).
        victim = f"{first}_{PREEMPTED}"
        victim_attempts = shards / f"shard-{PREEMPTED}" / "attempts.jsonl"
        assert job_fields(slurm_conf, victim)["JobState"] == "RUNNING"
        planned = re.search(r"(\d+) attempts planned", (submit / f"lsrb-{first}_{PREEMPTED}.log").read_text())
        assert planned, "the task's log does not say how many attempts its shard plans"
        assert lines(victim_attempts) < int(planned[1]), "the task finished before it could be preempted"
        slurm(slurm_conf, "scontrol", "requeue", victim)
        wait_for(
            "the preempted task to be requeued",
            lambda: job_fields(slurm_conf, victim)["JobState"] == "PENDING",
            120,
        )
        first_session = [json.loads(x) for x in victim_attempts.read_text().splitlines() if x.strip()]
        wait_for("the first array to end", lambda: not pending_or_running(slurm_conf, first), 600)

        # What Slurm recorded: every task completed, the preempted one after one restart.
        for task in range(TASKS):
            fields = job_fields(slurm_conf, f"{first}_{task}")
            assert fields["JobState"] == "COMPLETED" and fields["ExitCode"] == "0:0", fields
            assert fields["Restarts"] == ("1" if task == PREEMPTED else "0"), fields
        log = (submit / f"lsrb-{first}_{PREEMPTED}.log").read_text()
        stop = log.index("DUE TO JOB REQUEUE")
        assert "slurm-array: SIGTERM: the shard saves its run and stops" in log[stop:], log
        assert "the run was stopped before it finished; to finish it, run: lsrb run" in log, log
        resumed = log[log.index("slurm-array: SIGTERM") :]
        assert re.search(r"\d+ passed", resumed), log  # the requeued run finished the shard

        # The merge, as the script's header says.
        header_merge = (
            next(x for x in SCRIPT.read_text().splitlines() if "lsrb merge" in x).lstrip("# ").strip()
        )
        merged = subprocess.run(
            ["bash", "-c", f"{venv}/bin/{header_merge}"], cwd=submit, env=env, capture_output=True, text=True
        )
        assert merged.returncode == 0, merged.stdout + merged.stderr
        merged_dir = submit / "lsrb-out" / "merged"
        records = [
            json.loads(x) for x in (merged_dir / "attempts.jsonl").read_text().splitlines() if x.strip()
        ]

        # Every attempt exactly once.
        attempts = Counter((r["item_id"], r["sample_index"]) for r in records)
        assert len(attempts) == ITEMS * SAMPLES and set(attempts.values()) == {1}
        # No recorded attempt was sent twice: the requeued run answered the first session's
        # attempts from its records, and the second array sent nothing. Only the request in
        # flight at the SIGTERM (one at a time here) may have been sent again.
        sent = Counter(request_key(r.body) for r in server.chat_requests())
        assert len(server.chat_requests()) <= ITEMS * SAMPLES + 1
        assert all(sent[record_key(r)] == 1 for r in first_session), (first_session, sent)
        assert sum(n - 1 for n in sent.values()) <= 1
        assert all(sent[record_key(r)] >= 1 or r["cached"] for r in records)
        assert len(server.chat_requests()) >= sent_before_second

        # The merged run is the unsharded run of the same selection.
        server.latency_s = 0.0
        reference_dir = tmp_path / "reference"
        reference = subprocess.run(
            [
                str(venv / "bin" / "lsrb"),
                "run",
                "goal_to_tactic_proposal_v1",
                "--lsrb-adapter=openai",
                f"--lsrb-base-url={server.url}/v1",
                f"--lsrb-model={MODEL}",
                "--lsrb-outcome=record",
                f"--lsrb-output-dir={reference_dir}",
            ],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert reference.returncode == 0, reference.stdout + reference.stderr
    assert outcomes(merged_dir / "attempts.jsonl") == outcomes(reference_dir / "attempts.jsonl")
    ours, theirs = (json.loads((d / "summary.json").read_text()) for d in (merged_dir, reference_dir))
    compared = {
        k for k in theirs if re.search(r"pass_at|success_rate|selected_rows_hash|^attempts$|^items$", k)
    }
    assert "selected_rows_hash" in compared and any("pass_at" in k for k in compared), sorted(theirs)
    assert {k: ours.get(k) for k in compared} == {k: theirs[k] for k in compared}

    # Started at once, the tasks made the environment once and left the shared cache whole.
    assert len(made.read_text().splitlines()) == 1, made.read_text()
    caches = [
        p
        for p in (home / ".cache" / "lsrb").rglob("*")
        if p.is_file() and p.suffix in (".sqlite3", ".sqlite", ".db")
    ]
    assert caches, sorted((home / ".cache" / "lsrb").rglob("*"))
    for db in caches:
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
