"""How fast `lsrb` refuses a mistake, and what `pytest --help` shows of the run options: this
checkout against a baseline commit, in one run of this script (issue #50 item 7: usage errors
took 4-8 s; 73 options in one 290-line group).

For each command, the baseline's tree (`git archive REF` into a temporary folder, put first on
PYTHONPATH, so `lsrb` and the pytest plugin load that code with this environment's packages) and
this checkout's run interleaved `--repeat` times each; the median wall time and the median CPU time
(user + system: it moves far less with other people's load) of each, and current / baseline.
Every command must fail with a usage error (exit 2) in both trees.

Then `pytest --help` in an empty folder with each tree: the lines of the pytest-lsrb part, its
groups, its options, and how many of them show a default.

Usage: python bench/bench_usage_errors.py [--baseline d5cc7e2] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from _util import REPO, Measured, run_measured

COMMANDS: list[list[str]] = [
    ["run", "--bogus"],
    ["list"],
    ["run", "goal_to_tactic_proposal_v1", "--lsrb-bogus"],
    ["run", "goal_to_tactic_proposal_v1", "--lsrb-temperature=abc"],
    ["run", "goal_to_tactic_proposal_v1", "--lsrb-samples=0"],
    ["run", "llm_srbench", "--lsrb-samples=0"],
    ["run", "llm_srbench", "--lsrb-sr-budget=0"],
]
EXPECTED = {"list": 0}  # `lsrb list` is no mistake: timed as the lightest real command


def tree_of(ref: str, into: Path) -> Path:
    """The package and suites at `ref`, unpacked under `into` (nothing else of the checkout)."""
    data = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref, "pytest_lsrb", "suites", "profiles"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def lsrb(args: list[str], tree: Path, cwd: Path) -> Measured:
    code = "import sys; from pytest_lsrb.cli import main; sys.exit(main())"
    env = {"PYTHONPATH": str(tree), "PYTEST_ADDOPTS": ""}
    return run_measured([sys.executable, "-c", code, *args], cwd, env)


def help_shape(tree: Path, cwd: Path) -> dict[str, int]:
    """The pytest-lsrb part of `pytest --help`: lines, groups, options, options showing a default."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTEST_ADDOPTS": ""}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("pytest-lsrb")]
    part: list[str] = []
    for start in starts:
        end = next(
            (j for j in range(start + 1, len(lines)) if lines[j] and not lines[j][0].isspace()), len(lines)
        )
        part += lines[start:end]
    options = [i for i, line in enumerate(part) if re.match(r"^  --lsrb-", line)]  # (not help text)
    shown = 0
    for k, i in enumerate(options):
        block = " ".join(part[i : options[k + 1] if k + 1 < len(options) else len(part)])
        shown += "default" in block
    return {"lines": len(part), "groups": len(starts), "options": len(options), "default shown": shown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="d5cc7e2", help="git ref to compare with (default: d5cc7e2)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = tree_of(args.baseline, Path(tmp) / "baseline")
        cwd = Path(tmp) / "cwd"
        cwd.mkdir()
        load = os.getloadavg()[0]
        print(
            f"baseline {args.baseline} vs this checkout; {args.repeat} interleaved runs each; load {load:.1f}"
        )
        head = f"{'command':<58} {'base wall':>9} {'wall':>6} {'ratio':>6}"
        print(f"{head}   {'base cpu':>8} {'cpu':>6} {'ratio':>6}")
        for command in COMMANDS:
            runs: dict[str, list[Measured]] = {"base": [], "cur": []}
            for _ in range(args.repeat):
                runs["base"].append(lsrb(command, base, cwd))
                runs["cur"].append(lsrb(command, REPO, cwd))
            want = EXPECTED.get(command[0], 2)
            for name, measured in runs.items():
                bad = [m for m in measured if m.returncode != want]
                if bad:
                    raise SystemExit(
                        f"{name}: lsrb {' '.join(command)} exited {bad[0].returncode}:\n{bad[0].stdout}"
                    )
            wall = {k: statistics.median(m.seconds for m in v) for k, v in runs.items()}
            cpu = {k: statistics.median(m.cpu_seconds for m in v) for k, v in runs.items()}
            shown = f"lsrb {' '.join(command):<53} {wall['base']:>8.2f}s {wall['cur']:>5.2f}s"
            print(
                f"{shown} {wall['cur'] / wall['base']:>6.2f}"
                f"   {cpu['base']:>7.2f}s {cpu['cur']:>5.2f}s {cpu['cur'] / cpu['base']:>6.2f}"
            )
        print(f"load after: {os.getloadavg()[0]:.1f}")
        print()
        for name, tree in (("baseline", base), ("current", REPO)):
            shape = help_shape(tree, cwd)
            print(f"pytest --help, {name:<8}: " + ", ".join(f"{v} {k}" for k, v in shape.items()))


if __name__ == "__main__":
    main()
