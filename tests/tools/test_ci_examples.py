"""The CI recipes in examples/ are real: the GitHub Actions workflow's own commands run here (3
shards, merge, gate, report), the Kubernetes Job and the Slurm script use options that exist."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.engine.option_table import OPTIONS

yaml = pytest.importorskip("yaml")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KNOWN = {f"--lsrb-{o.name}" for o in OPTIONS}


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


def test_the_github_workflow_runs_shards_merges_and_gates(tmp_path: Path) -> None:
    workflow = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text("utf-8"))
    shard_job, gate_job = workflow["jobs"]["shard"], workflow["jobs"]["gate"]
    assert gate_job["needs"] == "shard"
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == list(range(int(workflow["env"]["SHARDS"])))
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env.update({k: str(v) for k, v in workflow["env"].items()})
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # Each matrix job: the workflow's own command, with a small selection so the test stays quick.
    (shard_step,) = [s for s in steps(workflow, "shard") if "lsrb run" in s.get("run", "")]
    assert lsrb_options(shard_step["run"]) <= KNOWN
    for shard in shards:
        command = shard_step["run"].replace("${{ matrix.shard }}", str(shard)) + " --lsrb-max-items=12"
        proc = bash(command, tmp_path, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (tmp_path / "shards").mkdir(exist_ok=True)
        (tmp_path / "out" / f"shard-{shard}").rename(tmp_path / "shards" / f"shard-{shard}")
        assert (tmp_path / "shards" / f"shard-{shard}" / "junit.xml").is_file()
    # The gate job's scripts, in order: merge, then (with a baseline) compare and report.
    scripts = {s["name"]: s["run"] for s in steps(workflow, "gate") if "run" in s and "name" in s}
    merged = bash(scripts["Merge the shards"], tmp_path, env)
    assert merged.returncode == 0 and "merged 3 shards" in merged.stdout, merged.stdout + merged.stderr
    no_baseline = bash(scripts["Gate (exit 6 on a significant regression fails the job)"], tmp_path, env)
    assert no_baseline.returncode == 0 and "no baseline yet" in no_baseline.stdout
    subprocess.run(["cp", "-r", str(tmp_path / "merged"), str(tmp_path / "baseline")], check=True)
    gate = bash(scripts["Gate (exit 6 on a significant regression fails the job)"], tmp_path, env)
    assert gate.returncode == 0 and "lsrb gate: ok" in gate.stdout, gate.stdout + gate.stderr
    assert (tmp_path / "merged" / "gate.json").is_file()
    report = bash(scripts["Report"], tmp_path, env)
    assert report.returncode == 0 and (tmp_path / "merged" / "report.html").is_file(), report.stderr


def test_the_kubernetes_indexed_job_and_the_slurm_script_use_real_options() -> None:
    job = yaml.safe_load((EXAMPLES / "k8s-indexed-job.yaml").read_text("utf-8"))
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    count = {e["name"]: e["value"] for e in container["env"]}["LSRB_SHARD_COUNT"]
    assert int(count) == spec["completions"]
    command = " ".join(container["args"])
    assert "--lsrb-shard-index=auto" in command and lsrb_options(command) <= KNOWN
    slurm = (EXAMPLES / "slurm-array.sh").read_text("utf-8")
    assert "#SBATCH --array=" in slurm and "--lsrb-shard-index=auto" in slurm
    assert lsrb_options(slurm) <= KNOWN
    shlex.split(slurm.split("lsrb run", 1)[1].replace("\\\n", " "), comments=True)
