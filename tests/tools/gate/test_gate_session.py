"""The gate inside real pytest sessions: a suite whose model really gets worse exits 6 with a
terminal section; an identical rerun and a rerun that only reshuffles failures pass.

The runs use the built-in tactic suite's files with one addition: a conftest.py overriding the
`lsrb_adapter` fixture (the documented plug point for one's own model) with a scripted model.
Its model name picks its quality: `v1` answers `sorry` (a wrong answer) on a fixed 20% of goals,
`v1b` on a different 20%, `v2` on 60% including all of v1's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from pytest_lsrb.cli import main as lsrb

REPO = Path(__file__).resolve().parents[3]
SCRIPTED_MODEL = """
import hashlib

import pytest

from pytest_lsrb.adapters.base import GenerationResult

QUALITY = {"v1": ("v1", 20), "v1b": ("v1b", 20), "v2": ("v1", 60)}


class ScriptedModel:
    name = "scripted"
    default_concurrency = 1

    def __init__(self, model):
        self.model = model
        self.salt, self.broken_percent = QUALITY[model]

    def check(self):
        return None

    def generate(self, request):
        goal = str(request.context.get("goal_text", ""))
        roll = int(hashlib.sha256(f"{self.salt}|{goal}".encode()).hexdigest()[:8], 16) % 100
        return GenerationResult(text="sorry" if roll < self.broken_percent else "simp", latency_ms=0.1)

    def identity(self):
        return {"adapter": self.name, "model": self.model}

    def close(self):
        return None


@pytest.fixture(scope="session")
def lsrb_adapter(lsrb_suite_run):
    yield ScriptedModel(lsrb_suite_run.config["model"])
"""
COMMON = ("--lsrb-max-items=50", "--lsrb-outcome=record")

# Plugins installed beside ours that these runs do not use; loading them costs ~2 s of CPU per
# process (each xdist worker too).
UNUSED_PLUGINS = ("-p", "no:benchmark", "-p", "no:hypothesispytest", "-p", "no:syrupy", "-p", "no:anyio")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scripted") / "scripted_suite"
    shutil.copytree(
        REPO / "suites" / "goal_to_tactic_proposal_v1",
        root,
        ignore=shutil.ignore_patterns("lean", "__pycache__"),
    )
    (root / "conftest.py").write_text(SCRIPTED_MODEL, "utf-8")
    return root


@pytest.fixture(scope="module")
def baseline(suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("baseline") / "v1"
    proc = _run(suite, out, "--lsrb-model=v1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _run(suite: Path, out: Path, *args: str) -> Any:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(suite),
        "-q",
        "-p",
        "no:cacheprovider",
        *UNUSED_PLUGINS,
        f"--lsrb-output-dir={out}",
        *COMMON,
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent, env=env, timeout=300)


def gate_case(junit: Path) -> ElementTree.Element:
    cases = [c for c in ElementTree.parse(junit).iter("testcase") if c.get("name") == "gate"]
    assert len(cases) == 1 and cases[0].get("classname") == "lsrb"
    return cases[0]


def valid_items(out: Path) -> set[str]:
    lines = (out / "attempts.jsonl").read_text("utf-8").splitlines()
    return {r["item_id"] for r in map(json.loads, lines) if r["valid"]}


def test_an_identical_rerun_passes_the_gate(suite: Path, baseline: Path, tmp_path: Path) -> None:
    proc = _run(
        suite,
        tmp_path / "again",
        "--lsrb-model=v1",
        f"--lsrb-baseline={baseline}",
        "--lsrb-max-drop=pass_at_1=0.0,valid_rate=0.0",
        f"--junitxml={tmp_path / 'junit.xml'}",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"lsrb gate: ok against baseline {baseline}" in proc.stdout
    case = gate_case(tmp_path / "junit.xml")
    assert case.find("failure") is None and case.find("error") is None
    gate = json.loads((tmp_path / "again" / "gate.json").read_text("utf-8"))
    assert not gate["regressed"] and [c["down"] for c in gate["checks"]] == [[], []]


def test_a_model_that_got_worse_exits_6_and_says_what_fell(
    suite: Path, baseline: Path, tmp_path: Path
) -> None:
    out = tmp_path / "v2"
    junit = tmp_path / "junit.xml"
    proc = _run(
        suite,
        out,
        "--lsrb-model=v2",
        f"--lsrb-baseline={baseline}",
        "--lsrb-max-drop=pass_at_1=0.02",
        f"--junitxml={junit}",
    )
    assert proc.returncode == 6, proc.stdout + proc.stderr
    # CI reads JUnit XML: the gate is a failing test case there, with its message.
    failure = gate_case(junit).find("failure")
    assert failure is not None and "REGRESSION" in str(failure.get("message"))
    assert "pass_at_1 fell by" in str(failure.text) and "smallest drop detectable on 50 items" in str(
        failure.text
    )
    tree = ElementTree.parse(junit)
    assert tree.getroot().find("testsuite").get("failures") == "1"  # type: ignore[union-attr]
    latencies = [p.get("value") for p in tree.iter("property") if p.get("name") == "lsrb_latency_ms"]
    assert len(latencies) == 50  # every attempt's model latency rides along as a property
    worse = sorted(valid_items(baseline) - valid_items(out))
    assert len(worse) >= 10 and not valid_items(out) - valid_items(baseline)
    text = proc.stdout
    assert f"lsrb gate: REGRESSION against baseline {baseline}" in text
    assert "pass_at_1 fell by" in text and "exact McNemar" in text
    assert f"items that got worse on pass_at_1 ({len(worse)}): {', '.join(worse[:10])}" in text
    assert "exit status 6: a model regression" in text
    assert json.loads((out / "gate.json").read_text("utf-8"))["checks"][0]["down"] == worse
    # The same check offline gives the same verdict and exit status.
    assert lsrb(["compare", str(baseline), str(out), "--max-drop", "pass_at_1=0.02"]) == 6


def test_a_rerun_that_only_reshuffles_failures_is_noise(suite: Path, baseline: Path, tmp_path: Path) -> None:
    out = tmp_path / "v1b"
    proc = _run(
        suite, out, "--lsrb-model=v1b", f"--lsrb-baseline={baseline}", "--lsrb-max-drop=pass_at_1=0.02"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (check,) = json.loads((out / "gate.json").read_text("utf-8"))["checks"]
    assert check["down"] and check["up"] and check["p_value"] >= 0.05 and not check["regressed"]


def test_a_floor_without_baseline_and_gate_mistakes_stop_before_any_call(suite: Path, tmp_path: Path) -> None:
    # Under the strict outcome policy wrong answers also fail their tests (status 1); 6 wins.
    floor = _run(
        suite, tmp_path / "floor", "--lsrb-model=v1", "--lsrb-min=valid_rate=0.95", "--lsrb-outcome=strict"
    )
    assert floor.returncode == 6 and " failed" in floor.stdout
    assert "valid_rate is 0." in floor.stdout and "below the minimum 0.95" in floor.stdout
    bad = _run(suite, tmp_path / "bad", "--lsrb-model=v1", "--lsrb-max-drop=pass_at_1=0.1")
    assert bad.returncode == 4 and "pass --lsrb-baseline too" in bad.stderr
    assert not (tmp_path / "bad" / "attempts.jsonl").exists()
