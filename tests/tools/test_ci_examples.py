"""The CI recipes in examples/ run here as shipped, every step of them, on a machine without the
network (recipe_kit): each installs pytest-lsrb from what a user has (the checkout, or a wheel
built from it), runs its shards, and merges them.

The Kubernetes Job is retry-safe: one of its shards is stopped with SIGTERM mid-run (as an
eviction does), exits 143, and the same command run again (a retried pod) finishes it; the merged
shards then hold exactly the records of one uninterrupted run of the same options. The Slurm
script runs under a real Slurm cluster instead (test_slurm_array.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from recipe_kit import checkout, lines, outcomes, run_until_recorded, user_environ, user_venv

from pytest_lsrb.engine.option_sets import every_option
from pytest_lsrb.session.termination import EXIT_TERMINATED

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


def steps(workflow: dict[str, Any], job: str) -> list[dict[str, Any]]:
    return list(workflow["jobs"][job]["steps"])


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


def test_the_github_workflow_runs_shards_merges_and_gates(tmp_path: Path) -> None:
    workflow = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text("utf-8"))
    shard_job, gate_job = workflow["jobs"]["shard"], workflow["jobs"]["gate"]
    assert gate_job["needs"] == "shard"
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == list(range(int(workflow["env"]["SHARDS"])))
    # actions/checkout and actions/setup-python: the repository's files, and a Python on PATH.
    workspace = checkout(tmp_path / "workspace")
    venv = user_venv(tmp_path / "venv")
    env = user_environ(venv, tmp_path, **{k: str(v) for k, v in workflow["env"].items()})
    env["PYTEST_ADDOPTS"] = "--lsrb-max-items=12"  # a small selection, the commands as shipped
    shard_runs = [s["run"] for s in steps(workflow, "shard") if "run" in s]
    assert any("pip install" in r for r in shard_runs) and any("lsrb run" in r for r in shard_runs)
    for shard in shards:
        for script in shard_runs:
            assert lsrb_options(script) <= KNOWN
            proc = bash(script.replace("${{ matrix.shard }}", str(shard)), workspace, env)
            assert proc.returncode == 0, script + "\n" + proc.stdout + proc.stderr
        # actions/upload-artifact, then download-artifact into shards/ in the gate job
        (workspace / "shards").mkdir(exist_ok=True)
        (workspace / "out" / f"shard-{shard}").rename(workspace / "shards" / f"shard-{shard}")
        assert (workspace / "shards" / f"shard-{shard}" / "junit.xml").is_file()
    installed = subprocess.run(
        ["python", "-c", "import pytest_lsrb; print(pytest_lsrb.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert str(venv) in installed.stdout, installed  # the shards ran the package pip installed
    gate_steps = steps(workflow, "gate")
    (install,) = [s["run"] for s in gate_steps if "pip install" in s.get("run", "")]
    assert bash(install, workspace, env).returncode == 0
    scripts = {s["name"]: s["run"] for s in gate_steps if "run" in s and "name" in s}
    merged = bash(scripts["Merge the shards"], workspace, env)
    assert merged.returncode == 0 and "merged 3 shards" in merged.stdout, merged.stdout + merged.stderr
    no_baseline = bash(scripts["Gate (exit 6 on a significant regression fails the job)"], workspace, env)
    assert no_baseline.returncode == 0 and "no baseline yet" in no_baseline.stdout
    subprocess.run(["cp", "-r", str(workspace / "merged"), str(workspace / "baseline")], check=True)
    gate = bash(scripts["Gate (exit 6 on a significant regression fails the job)"], workspace, env)
    assert gate.returncode == 0 and "lsrb gate: ok" in gate.stdout, gate.stdout + gate.stderr
    assert (workspace / "merged" / "gate.json").is_file()
    report = bash(scripts["Report"], workspace, env)
    assert report.returncode == 0 and (workspace / "merged" / "report.html").is_file(), report.stderr


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
