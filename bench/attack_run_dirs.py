"""Issue #38's attacks on a run directory (items 4-7), rerun against any checkout: each prints one
JSON line of what happened, counted at a local stand-in server (`tests/fakes/ollama_server.py`,
0.25 s per answer) and in the run's files.

  twice         the same `pytest ... --lsrb-resume-or-start` on one run dir twice at once:
                exit codes, records, duplicated attempts, requests paid
  dellock       the same, with `.lsrb-lock` deleted (a dot-file cleanup) before the second starts
                (issue #46 item 6): exit codes, records, duplicated attempts, requests paid
  killparent    SIGKILL of `lsrb run` with two models, KILL_AFTER s in: requests sent after the
                kill, processes left
  killxdist     SIGKILL of a `-n 2` controller, KILL_AFTER s in: the same
  symlink       attempts.jsonl / .lsrb-budget.json symlinked to a file outside, then resumed:
                is the file outside changed
  ctrlc_models  SIGINT (STOP_SIGNAL=SIGTERM: SIGTERM) to `lsrb run` with two models, CTRLC_AFTER
  ctrlc_single  s in (ctrlc_xdist: `-n 2`): exit code, a traceback, the resume line(s)
  crashed       an `-n 2` worker killed (os._exit) in a test's setup, before its record: the
                terminal's counts, JUnit, exit code; then --lsrb-resume

Usage: python bench/attack_run_dirs.py CHECKOUT ATTACK   (CHECKOUT: the code that runs, e.g. a
       worktree of the commit before the fix, a65b839, and one of main)
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

TREE = Path(sys.argv[1]).resolve() if len(sys.argv) > 2 else Path(__file__).resolve().parents[1]
SUITE = str(TREE / "suites" / "goal_to_tactic_proposal_v1")
ENV = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"} | {"PYTHONPATH": str(TREE)}
PY = sys.executable


def chats(url: str) -> int:
    with urllib.request.urlopen(url + "/_stats") as answer:
        return int(json.load(answer)["chats"])


def records(run_dir: Path) -> tuple[int, int]:
    """(records in attempts.jsonl, attempts recorded more than once)."""
    path = run_dir / "attempts.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    keys = collections.Counter((r["item_id"], r["sample_index"]) for r in map(json.loads, lines))
    return len(lines), sum(n - 1 for n in keys.values())


def options(url: str) -> list[str]:
    return [
        "--lsrb-adapter=openai", f"--lsrb-base-url={url}/v1", "--lsrb-allow-model-alias",
        "--lsrb-max-items=40", "--lsrb-samples=2", "--lsrb-outcome=record", "-q", "-p", "no:cacheprovider",
        "--lsrb-concurrency=2",
    ]  # fmt: skip


def one_model(url: str, run_dir: Path, *extra: str) -> list[str]:
    return [
        PY,
        "-m",
        "pytest",
        SUITE,
        *options(url),
        "--lsrb-model=smollm2:135m",
        f"--lsrb-output-dir={run_dir}",
        *extra,
    ]


def two_models(url: str, group: Path) -> list[str]:
    models = ["--lsrb-model=smollm2:135m", "--lsrb-model=qwen2.5:7b"]
    return [PY, "-m", "pytest_lsrb", "run", SUITE, *models, *options(url), f"--lsrb-output-dir={group}"]


def twice(url: str, work: Path) -> dict[str, Any]:
    run_dir = work / "run"
    command = one_model(url, run_dir, "--lsrb-resume-or-start")
    first = subprocess.Popen(
        command, cwd=work, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    time.sleep(1.5)
    second = subprocess.run(command, cwd=work, env=ENV, capture_output=True, text=True)
    first_out = first.communicate()[0]
    n, duplicated = records(run_dir)
    last = [
        first_out.strip().splitlines()[-1][:200],
        (second.stdout + second.stderr).strip().splitlines()[-1][:300],
    ]
    return {"exit": [first.returncode, second.returncode], "records": n, "duplicated": duplicated,
            "paid": chats(url), "last": last}  # fmt: skip


def dellock(url: str, work: Path) -> dict[str, Any]:
    run_dir = work / "run"
    command = one_model(url, run_dir, "--lsrb-resume-or-start")
    first = subprocess.Popen(
        command, cwd=work, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    while first.poll() is None and records(run_dir)[0] < 2:  # the first run is under way
        time.sleep(0.05)
    (run_dir / ".lsrb-lock").unlink(missing_ok=True)  # `git clean -fdx`, `rsync --delete`, ...
    second = subprocess.run(command, cwd=work, env=ENV, capture_output=True, text=True)
    first_out = first.communicate()[0]
    n, duplicated = records(run_dir)
    said = [line[:200] for line in first_out.splitlines() if "lsrb-lock was" in line]
    last = (second.stdout + second.stderr).strip().splitlines()[-1:]
    return {"exit": [first.returncode, second.returncode], "records": n, "duplicated": duplicated,
            "paid": chats(url), "first_said": said[:1], "second_last": [x[:200] for x in last]}  # fmt: skip


def killed(url: str, work: Path, command: list[str]) -> dict[str, Any]:
    proc = subprocess.Popen(command, cwd=work, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(float(os.environ.get("KILL_AFTER", "6")))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    at_kill = chats(url)
    time.sleep(8)
    left = subprocess.run(["pgrep", "-f", str(work)], capture_output=True, text=True).stdout.split()
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)
    return {"chats_at_kill": at_kill, "sent_after_kill": chats(url) - at_kill, "processes_left": len(left)}


def symlink(url: str, work: Path) -> dict[str, Any]:
    found = {}
    for name in ("attempts.jsonl", ".lsrb-budget.json"):
        run_dir = work / name.strip(".")
        subprocess.run(one_model(url, run_dir, "--lsrb-max-items=1"), cwd=work, env=ENV, capture_output=True)
        victim = work / f"outside-{name}"
        kept = (run_dir / "attempts.jsonl").read_text().splitlines(keepends=True)[0]
        if name == "attempts.jsonl":
            (run_dir / name).unlink()
            victim.write_text(kept)  # one record of two: the resume appends the other
        else:
            victim.write_text("precious\n")
            (run_dir / "attempts.jsonl").write_text(kept)
        before = victim.read_text()
        (run_dir / name).unlink(missing_ok=True)
        (run_dir / name).symlink_to(victim)
        resumed = one_model(
            url, run_dir, "--lsrb-max-items=1", "--lsrb-resume", "--lsrb-max-total-tokens=100000"
        )
        done = subprocess.run(resumed, cwd=work, env=ENV, capture_output=True, text=True)
        last = (done.stdout + done.stderr).strip().splitlines()[-1:]
        found[name] = {
            "exit": done.returncode,
            "outside_file_changed": victim.read_text() != before,
            "last": last,
        }
    return found


def stopped(url: str, work: Path, command: list[str]) -> dict[str, Any]:
    # a terminal's Ctrl-C: the signal to the foreground process group
    proc = subprocess.Popen(
        command,
        cwd=work,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    time.sleep(float(os.environ.get("CTRLC_AFTER", "7")))
    os.killpg(proc.pid, getattr(signal, os.environ.get("STOP_SIGNAL", "SIGINT")))
    text = proc.communicate()[0]
    lines = [line[:200] for line in text.splitlines() if "to finish it" in line or "resume them all" in line]
    return {
        "exit": proc.returncode,
        "traceback": "Traceback (most recent call last)" in text,
        "resume_lines": lines,
    }


CRASH_CONFTEST = """
import os
from pathlib import Path

def pytest_runtest_setup(item):
    flag = Path(os.environ["LSRB_CRASH_FLAG"])
    if item.name == os.environ["LSRB_CRASH_TEST"] and os.environ.get("PYTEST_XDIST_WORKER"):
        try:
            os.close(os.open(flag, os.O_CREAT | os.O_EXCL))  # once
        except FileExistsError:
            return
        os._exit(3)
"""


def crashed(url: str, work: Path) -> dict[str, Any]:
    root = work / "suite"
    shutil.copytree(SUITE, root, ignore=shutil.ignore_patterns("__pycache__", "lean"))
    (root / "conftest.py").write_text(CRASH_CONFTEST)
    base = [
        PY,
        "-m",
        "pytest",
        str(root),
        "-q",
        "-p",
        "no:cacheprovider",
        "--lsrb-max-items=6",
        "--lsrb-samples=2",
    ]
    listed = subprocess.run([*base, "--co"], cwd=work, env=ENV, capture_output=True, text=True).stdout
    names = sorted(line.split("::")[-1] for line in listed.splitlines() if "::" in line)
    env = ENV | {"LSRB_CRASH_TEST": names[3], "LSRB_CRASH_FLAG": str(work / "crashed")}

    def go(*extra: str) -> dict[str, Any]:
        xml = work / "junit.xml"
        command = [*base, f"--lsrb-output-dir={work / 'run'}", f"--junitxml={xml}", "-n", "2", *extra]
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        junit = {
            case.get("name"): child.tag
            for case in ET.parse(xml).getroot().iter("testcase")
            for child in case
            if child.tag in ("failure", "error")
        }
        stats = [line for line in done.stdout.splitlines() if " in " in line and "passed" in line]
        return {"exit": done.returncode, "junit": junit, "stats": stats[-1:]}

    return {"crashed": go(), "resumed": go("--lsrb-resume")}


def main() -> None:
    attack = sys.argv[-1]
    work = Path(tempfile.mkdtemp(prefix=f"lsrb-attack-{attack}-"))
    server = subprocess.Popen([PY, "-m", "fakes.ollama_server", "--latency", "0.25"], cwd=TREE / "tests",
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)  # fmt: skip
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    attacks = {
        "twice": lambda: twice(url, work),
        "dellock": lambda: dellock(url, work),
        "killparent": lambda: killed(url, work, two_models(url, work / "group")),
        "killxdist": lambda: killed(url, work, one_model(url, work / "run", "-n", "2")),
        "symlink": lambda: symlink(url, work),
        "ctrlc_models": lambda: stopped(url, work, two_models(url, work / "group")),
        "ctrlc_single": lambda: stopped(url, work, one_model(url, work / "run")),
        "ctrlc_xdist": lambda: stopped(url, work, one_model(url, work / "run", "-n", "2")),
        "crashed": lambda: crashed(url, work),
    }
    try:
        print(json.dumps(attacks[attack]()))
    finally:
        server.stdin.close()
        server.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
