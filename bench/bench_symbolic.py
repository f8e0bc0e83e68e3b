"""Time per symbolic-accuracy check: this checkout against a baseline checkout, same pairs, one run.

    python bench/bench_symbolic.py --baseline /path/to/other/checkout [--pairs dev adversarial]
        [--every 3]

The baseline is any other checkout of the project (e.g. `git archive <commit> | tar -x -C DIR`
of the commit before a change). Each checkout's `symbolic_match` runs in its own worker process
(PYTHONPATH = that checkout, the same interpreter), called directly (no fork host: the checker's
own time); the pairs of each set (this checkout's judge_pairs files, every `--every`-th one) are
fed to the two workers alternately, pair by pair, so load on a shared machine falls on both
alike. A pair's rows are built here the way `judge-agreement` builds them (300 rows, seed 0, a
`line` applied), so both checkers see the same data. Prints per set: median, p90 and total
seconds per check for each side, the ratios (this / baseline), and how many verdicts differ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO / "pytest_lsrb" / "srbench" / "scoring" / "judge_pairs"
POINTS = 300


def _columns(row: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    cols = {k: rng.uniform(lo, hi, POINTS) for k, (lo, hi) in row["ranges"].items()}
    for k, (other, a, b) in row.get("line", {}).items():
        cols[k] = a + b * cols[other]
    return cols


def worker() -> None:
    """Read pairs (JSON lines) on stdin, write {seconds, match} lines: this PYTHONPATH's checker."""
    from pytest_lsrb.equations import EquationError, parse_expression
    from pytest_lsrb.srbench.scoring.symbolic import symbolic_match

    for line in sys.stdin:
        row = json.loads(line)
        names = list(row["ranges"])
        cols = _columns(row)
        started = time.perf_counter()
        try:
            truth = parse_expression(row["truth"], names, free_params=True)
            proposal = parse_expression(row["proposal"], names, free_params=True)
            match = symbolic_match(proposal, truth, cols).match
        except EquationError:
            match = None
        print(json.dumps({"seconds": time.perf_counter() - started, "match": match}), flush=True)


def _start(checkout: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=checkout,
    )


def _ask(proc: subprocess.Popen[str], row: dict[str, Any]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(row) + "\n")
    proc.stdin.flush()
    out: dict[str, Any] = json.loads(proc.stdout.readline())
    return out


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, type=Path, help="another checkout of the project")
    parser.add_argument("--pairs", nargs="+", default=["dev", "adversarial"])
    parser.add_argument("--every", type=int, default=3, help="time every n-th pair of each set")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ours, base = _start(REPO), _start(args.baseline.resolve())
    print(f"this checkout: {REPO}\nbaseline:      {args.baseline.resolve()}")
    head = ("median s", "p90 s", "total s")
    print(f"{'pairs':<14} {'n':>4} " + " ".join(f"{h:>17}" for h in head) + f" {'ratio':>12} {'differ':>6}")
    sides = " ".join(f"{'this':>8} {'base':>8}" for _ in head)
    print(f"{'':<14} {'':>4} {sides} {'med':>5} {'tot':>6}")
    for name in args.pairs:
        rows = [json.loads(x) for x in (PAIRS / f"{name}.jsonl").read_text().splitlines() if x.strip()]
        rows = rows[:: args.every]
        mine: list[float] = []
        theirs: list[float] = []
        differ = 0
        for i, row in enumerate(rows):
            first, second = (ours, base) if i % 2 == 0 else (base, ours)
            a, b = _ask(first, row), _ask(second, row)
            got, ref = (a, b) if first is ours else (b, a)
            mine.append(got["seconds"])
            theirs.append(ref["seconds"])
            differ += got["match"] is not ref["match"]
        med = statistics.median(mine) / statistics.median(theirs)
        tot = sum(mine) / sum(theirs)
        print(
            f"{name:<14} {len(rows):>4} {statistics.median(mine):8.3f} {statistics.median(theirs):8.3f} "
            f"{_p90(mine):8.3f} {_p90(theirs):8.3f} {sum(mine):8.1f} {sum(theirs):8.1f} "
            f"{med:5.2f} {tot:6.2f} {differ:>6}"
        )
    for proc in (ours, base):
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker()
    else:
        main()
