"""An adapter from outside the package (issue #49): `examples/lsrb-anthropic` speaks Anthropic's
Messages API on pytest-lsrb's public `HttpAdapter`, found by its entry point, against a local
server that speaks that API (`fakes.anthropic_server`). Its key goes in `x-api-key` (not as a
Bearer token), is registered for redaction by the helper (a server echoing it gets it stored
nowhere: before, an x-api-key adapter's echo was in 10/10 records unless the undocumented
`register_key` was called), the system prompt is the API's `system`, and its usage, stop reason
and served model reach the records through the harness's count."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropic
from lsrb_testing import REPO, SUITES, install_example

from pytest_lsrb import api
from pytest_lsrb.tools.plugins import listing

KEY = "sk-ant-api03-" + "Zq7" * 12  # (made up)
TACTIC = SUITES / "goal_to_tactic_proposal_v1"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # the adapter's own variable: no --lsrb-api-key-env
    fake = FakeAnthropic(KEY, script=["overloaded_529", "echo_key", "echo_key"])
    yield fake
    fake.close()


def run_dir_text(where: Path) -> str:
    return "".join(p.read_text("utf-8", errors="replace") for p in where.rglob("*") if p.is_file())


def test_the_example_adapter_runs_a_suite_against_the_messages_api(
    server: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_example("lsrb-anthropic", tmp_path / "site", monkeypatch)
    rows = [" ".join(line.split()) for line in listing().splitlines()]
    assert "anthropic entry point (lsrb-anthropic 0.1.0) lsrb_anthropic:AnthropicAdapter" in rows
    result = api.run(
        TACTIC, adapter="anthropic", model="claude-test", base_url=server.url, max_items=3,
        output_dir=tmp_path / "o", pytest_args=["-q"],
    )  # fmt: skip
    assert result.exit_code == 0 and len(result.records) == 3 and result.summary is not None
    sent = server.requests
    assert {r["headers"].get("x-api-key") for r in sent} == {KEY}
    assert all("authorization" not in r["headers"] for r in sent)  # not a Bearer token
    assert all(r["headers"]["anthropic-version"] == "2023-06-01" for r in sent)
    body = sent[-1]["body"]
    assert (
        body["model"] == "claude-test"
        and body["system"]
        and [m["role"] for m in body["messages"]] == ["user"]
    )
    assert body["max_tokens"] == result.summary["config"]["max_tokens"]
    # the 529 was retried: two requests sent for one call, counted by the harness
    assert sorted(r["model_calls"] for r in result.records) == [1, 1, 2] and len(sent) == 4
    for record in result.records:
        assert record["finish_reason"] == "end_turn" and (record["completion_tokens"] or 0) >= 1
        assert record["prompt_tokens"] and str(record["served_model"]).endswith("-served")
    # the two answers that echoed the key: kept, with the key nowhere in the run's files
    assert any("your key is" in str(r["raw_output"]) for r in result.records)
    assert KEY not in run_dir_text(tmp_path / "o")
    assert KEY[-12:] not in run_dir_text(tmp_path / "o")


@pytest.mark.slow
def test_the_example_adapter_installs_with_pip_and_runs_from_the_command_line(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    cmd += ["--no-index", "--target", str(site), str(REPO / "examples" / "lsrb-anthropic")]
    installed = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    suite = shutil.copytree(TACTIC, tmp_path / "tactic")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    env["LSRB_TEST_ANTHROPIC_KEY"] = KEY  # named by --lsrb-api-key-env this time
    run = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "--lsrb-max-items=2"]
    run += ["--lsrb-adapter=anthropic", "--lsrb-model=claude-test", f"--lsrb-base-url={server.url}"]
    run += ["--lsrb-api-key-env=LSRB_TEST_ANTHROPIC_KEY", "--lsrb-output-dir=o"]
    proc = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert "2 passed" in proc.stdout and KEY not in proc.stdout + proc.stderr
    assert KEY not in run_dir_text(tmp_path / "o")
