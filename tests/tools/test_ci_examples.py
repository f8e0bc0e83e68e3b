"""The CI recipes in examples/ run here as shipped, every step of them, on a machine without the
network (recipe_kit): each installs pytest-lsrb from what a user has (the checkout, or a wheel
built from it), runs its shards, and merges them.

The GitHub workflow runs job by job and step by step as GitHub runs it (`actions_runner`), over
the runs that make it safe: no baseline fails, a declared first run and a declared model change
become the baseline, an unchanged model passes quietly, a worse one fails.

The Kubernetes Job is retry-safe: one of its shards is stopped with SIGTERM mid-run (as an
eviction does), exits 143, and the same command run again (a retried pod) finishes it; the merged
shards then hold exactly the records of one uninterrupted run of the same options. The Slurm
script runs under a real Slurm cluster instead (test_slurm_array.py).
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from actions_runner import Runner
from fakes.ollama_server import FakeOllama
from recipe_kit import checkout, lines, outcomes, run_until_recorded, user_environ, user_venv

from pytest_lsrb.engine.option_sets import every_option
from pytest_lsrb.session.termination import EXIT_TERMINATED
from pytest_lsrb.tools.gate import EXIT_REGRESSION

OPTIONS = every_option()

yaml = pytest.importorskip("yaml")
pytest.importorskip("hatchling", reason="installing from the checkout builds it with hatchling (dev extra)")

pytestmark = pytest.mark.slow
for tool in ("git", "bash", "sh", "flock"):  # the recipes' and the checkout's own tools
    if shutil.which(tool) is None:
        pytest.skip(f"the recipe tests need {tool} on PATH", allow_module_level=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KNOWN = {f"--lsrb-{o.name}" for o in OPTIONS}
SHARDS = 4  # the Kubernetes Job's completions, the Slurm array's tasks
# A small selection, one answer at a time, so a shard is still running when it is stopped. Given
# through pytest's own variable, the recipes' commands stay as shipped.
SMALL = "--lsrb-max-items=16 --lsrb-concurrency=1"
MODEL = "smollm2:135m"  # one of the models the local server lists


def lsrb_options(text: str) -> set[str]:
    return set(re.findall(r"--lsrb-[a-z-]+[a-z]", text))


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeOllama(latency_s=0.3) as fake:
        yield fake


def reference_run(venv: Path, home: Path, base_url: str, out: Path) -> dict[tuple[str, int], Any]:
    """One uninterrupted, unsharded run of the options the shards ran with."""
    env = user_environ(venv, home, PYTEST_ADDOPTS=SMALL)
    argv = [
        str(venv / "bin" / "lsrb"),
        "run",
        "goal_to_tactic_proposal_v1",
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={base_url}",
        f"--lsrb-model={MODEL}",
        "--lsrb-outcome=record",
        f"--lsrb-output-dir={out}",
    ]
    proc = subprocess.run(argv, cwd=home, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return outcomes(out / "attempts.jsonl")


def test_the_github_workflow_cannot_pass_by_accident(tmp_path: Path) -> None:
    """The workflow's steps run in order as written (`actions_runner`), over five runs that share
    the repository's cache: the first push to main finds no baseline and fails (exit 2, with the
    way on); a dispatched run with `rebaseline` declares the first run and keeps it; a pull request
    on the unchanged model passes with no warning; a pushed model change that got worse fails
    (exit 6) and is not kept; the same change pushed with [lsrb rebaseline] passes and becomes the
    baseline. A shard job whose steps and inputs repeat an earlier run's is taken from it (the
    mock and the fake model answer the same every time: the shards are the same)."""
    workflow = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text("utf-8"))
    shard_job, gate_job = workflow["jobs"]["shard"], workflow["jobs"]["gate"]
    assert gate_job["needs"] == "shard"
    assert shard_job["strategy"]["matrix"]["shard"] == list(range(int(workflow["env"]["SHARDS"])))
    for job in (shard_job, gate_job):
        for step in job["steps"]:
            assert lsrb_options(step.get("run", "")) <= KNOWN, step
    venv = user_venv(tmp_path / "venv")
    env = user_environ(venv, tmp_path, PYTEST_ADDOPTS="--lsrb-max-items=12")  # a small selection
    machines = itertools.count()
    runner = Runner(
        workflow,
        machine=lambda: checkout(tmp_path / f"machine-{next(machines)}"),
        environ=env,
        root=tmp_path / "github",
        reuse=True,
    )
    main = "refs/heads/main"
    gate = "Gate (exit 6 on a significant regression fails the job)"

    first = runner.run("push", main, message="add the lsrb workflow")
    assert first.jobs == {"shard": "success", "gate": "failure"}, first.log()
    failed = first.step(gate)
    assert failed.returncode == 2, first.log()
    assert "there is no baseline run at baseline" in failed.output
    assert "run the workflow on main with rebaseline ticked" in failed.output
    assert first.step("Report").status == "success"  # the report is kept all the same
    assert first.step("actions/cache/save@v4").status == "skipped"  # nothing became a baseline

    declared = runner.run("workflow_dispatch", main, inputs={"rebaseline": True})
    assert declared.jobs["gate"] == "success", declared.log()
    said = declared.step(gate).output
    assert "re-baselining (declared)" in said and "lsrb gate: ok without a baseline" in said
    assert "Cache saved with key: lsrb-baseline-" in declared.step("actions/cache/save@v4").output

    pr = runner.run("pull_request", "refs/pull/7/merge")
    assert pr.jobs["gate"] == "success", pr.log()
    quiet = pr.step(gate).output
    assert "lsrb gate: ok against baseline baseline" in quiet and "WARNING" not in quiet, quiet
    assert pr.step("actions/cache/save@v4").status == "skipped"  # a pull request keeps nothing

    # A model change: the user's LSRB_MODEL_ARGS now name a model that answers in prose.
    with FakeOllama(reply="Sure! Try induction on n, then simplify.") as worse:
        changed = {
            "LSRB_MODEL_ARGS": f"--lsrb-adapter=openai --lsrb-base-url={worse.url}/v1 --lsrb-model={MODEL}"
        }
        regressed = runner.run("push", main, message="a cheaper model", env=changed)
        assert regressed.jobs["gate"] == "failure", regressed.log()
        assert regressed.step(gate).returncode == EXIT_REGRESSION, regressed.log()
        assert "lsrb gate: REGRESSION" in regressed.step(gate).output
        assert regressed.step("actions/cache/save@v4").status == "skipped"  # the baseline stays

        accepted = runner.run("push", main, message="a cheaper model [lsrb rebaseline]", env=changed)
    assert accepted.jobs["gate"] == "success", accepted.log()
    said = accepted.step(gate).output
    assert "lsrb gate: REGRESSION" in said and "exit status 6 accepted: this run is the new baseline" in said
    assert "Cache saved" in accepted.step("actions/cache/save@v4").output
    kept = sorted((tmp_path / "github" / "cache").iterdir(), key=lambda p: p.stat().st_mtime_ns)[-1]
    assert json.loads((kept / "summary.json").read_text("utf-8"))["config"]["adapter"] == "openai"


def test_the_kubernetes_job_survives_an_eviction(tmp_path: Path, server: FakeOllama) -> None:
    job = yaml.safe_load((EXAMPLES / "k8s-indexed-job.yaml").read_text("utf-8"))
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    assert spec["backoffLimitPerIndex"] >= 1 and "backoffLimit" not in spec
    rules = spec["podFailurePolicy"]["rules"]
    assert {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]} in rules
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["command"] == ["sh", "-c"]
    (script,) = container["args"]
    assert lsrb_options(script) <= KNOWN and "--lsrb-resume-or-start" in script
    assert "--lsrb-cache-dir=/runs/" in script and "exec lsrb run" in script
    declared = {e["name"]: e["value"] for e in container["env"]}
    assert int(declared["LSRB_SHARD_COUNT"]) == spec["completions"] == SHARDS
    # The volume claimed at /runs is a folder here; the wheel goes on it as the header says.
    volume = tmp_path / "volume"
    script = script.replace("/runs", str(volume))
    (volume / "wheels").mkdir(parents=True)
    header = (EXAMPLES / "k8s-indexed-job.yaml").read_text("utf-8")
    (build,) = [line.lstrip("# ").strip() for line in header.splitlines() if "pip wheel" in line]
    venv = user_venv(tmp_path / "image")
    build = build.replace("<the volume>", str(volume)).replace(
        "<pytest-lsrb checkout>", str(checkout(tmp_path / "src"))
    )
    built = bash(build, tmp_path, user_environ(venv, tmp_path))
    assert built.returncode == 0, built.stdout + built.stderr
    base_url = f"{server.url}/v1"

    def pod_env(index: int) -> dict[str, str]:
        # what the Job's spec sets in the pod (the server and model edited as a user does), and
        # Kubernetes' own JOB_COMPLETION_INDEX
        return user_environ(
            venv,
            tmp_path,
            **{**declared, "LSRB_BASE_URL": base_url, "LSRB_MODEL": MODEL},
            JOB_COMPLETION_INDEX=str(index),
            PYTEST_ADDOPTS=SMALL,
        )

    for index in range(SHARDS):
        argv = ["sh", "-c", script]
        if index == 1:  # this pod is evicted mid-run: SIGTERM to the container's first process
            shard = volume / f"shard-{index}"
            status = run_until_recorded(
                argv,
                tmp_path,
                pod_env(index),
                shard / "attempts.jsonl",
                tmp_path / "evicted.log",
                whole_group=False,
            )
            log = (tmp_path / "evicted.log").read_text()
            assert status == EXIT_TERMINATED, log
            assert "lsrb: the run was stopped before it finished; to finish it, run: lsrb run" in log
            kept = lines(shard / "attempts.jsonl")
        proc = subprocess.run(
            argv, cwd=tmp_path, env=pod_env(index), capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # the evicted pod had kept part of its shard; the retried pod did the rest
    assert 0 < kept < lines(volume / "shard-1" / "attempts.jsonl")
    (merge,) = [line.split("`")[1] for line in header.splitlines() if "lsrb merge" in line]
    merged = bash(merge.replace("/runs", str(volume)), tmp_path, pod_env(0))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    reference = reference_run(venv, tmp_path, base_url, tmp_path / "reference")
    assert len(reference) == 16
    assert outcomes(volume / "merged" / "attempts.jsonl") == reference
