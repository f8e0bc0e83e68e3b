"""Controller memory against the number of tests (issue #27): does the process that holds the
terminal (the one process of a serial run, the controller under `-n 2`) keep anything per
finished test?

A mock run of N attempts (every row of a synthetic index, one sample each, `--lsrb-outcome=record`)
samples the controller's RSS every N/20 finished tests (`_rss_sampler`, /proc/self/statm). The
growth per test is the slope over the second half of the run (after warm-up, so collection and
imports are out of it). The same is measured for a bare pytest file of N no-op tests, in the same
mode, as the floor pytest itself sets (it keeps three reports per test). Target: lsrb under 1 KB
per test at 100,000 tests, serial and `-n 2` (issue #39; 512 B, issue #27's, took patching
`os.putenv`, which a plugin must not do: see bench/HISTORY.md).

Usage: python bench/bench_controller_memory.py [--tests 100000] [--modes serial n2]
       (PYTHONPATH=<another checkout> measures that code with the same script)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _util import TACTIC_SUITE, bare_test_file, pytest_cmd, run_measured, synthetic_index

BENCH = Path(__file__).resolve().parent
TARGET_BYTES = 1024
SAMPLES = 20
MODES = {"serial": (), "n2": ("-n", "2")}
# The dev extras' pytest plugins that are no part of a run: syrupy keeps every collected item on
# the controller, hypothesis's plugin reads every passed report at the end.
NOT_OURS = ("-p", "no:syrupy", "-p", "no:hypothesispytest")


def sampled(cmd: list[str], cwd: Path, out: Path, n: int) -> tuple[list[tuple[int, float]], float]:
    """(samples of (tests finished, RSS MB), seconds) of one run."""
    path = os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env = {
        "PYTHONPATH": path,
        "LSRB_BENCH_RSS_EVERY": str(max(1, n // SAMPLES)),
        "LSRB_BENCH_RSS_OUT": str(out),
    }
    m = run_measured([*cmd, "-p", "_rss_sampler"], cwd, env)
    if m.returncode != 0:
        raise SystemExit(f"failed ({m.returncode}): {' '.join(cmd)}\n{m.stdout[-3000:]}")
    rows = (line.split() for line in out.read_text(encoding="utf-8").splitlines())
    return [(int(done), float(mb)) for done, mb in rows], m.seconds


def slope(samples: list[tuple[int, float]]) -> float:
    """Bytes per test over the second half of the run."""
    (n0, m0), (n1, m1) = samples[len(samples) // 2 - 1], samples[-1]
    return (m1 - m0) * 2**20 / (n1 - n0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=100_000)
    ap.add_argument("--modes", nargs="*", default=list(MODES), choices=list(MODES))
    args = ap.parse_args()
    n = args.tests
    import pytest_lsrb

    print(
        f"pytest_lsrb from {Path(pytest_lsrb.__file__).parent}; {n} tests; CPU load {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        index = synthetic_index(tmp / "index.jsonl", n)
        bare = bare_test_file(tmp / "test_bare.py", n)
        results = {}
        for mode in args.modes:
            extra = MODES[mode]
            lsrb_cmd = pytest_cmd(
                str(TACTIC_SUITE), f"--lsrb-index={index}", f"--lsrb-output-dir={tmp / ('out_' + mode)}",
                "--lsrb-overwrite", "--lsrb-outcome=record", *extra,
            )  # fmt: skip
            results[mode] = (
                sampled(lsrb_cmd, tmp, tmp / f"rss_lsrb_{mode}.txt", n),
                sampled(pytest_cmd(str(bare), *extra), tmp, tmp / f"rss_bare_{mode}.txt", n),
            )
        for mode, ((lsrb, t_lsrb), (bare_s, t_bare)) in results.items():
            print(f"\n{mode}: controller RSS (MB) after each {n // SAMPLES} finished tests")
            print(f"{'finished':>9} {'lsrb MB':>8} {'bare MB':>8}")
            for (done, mb), (_, bare_mb) in zip(lsrb, bare_s, strict=False):
                print(f"{done:>9} {mb:8.1f} {bare_mb:8.1f}")
            s_lsrb, s_bare = slope(lsrb), slope(bare_s)
            verdict = "met" if s_lsrb < TARGET_BYTES else "NOT met"
            print(
                f"{mode}: growth per test over the second half: lsrb {s_lsrb:.0f} B, bare pytest "
                f"{s_bare:.0f} B (ratio {s_lsrb / s_bare if s_bare > 0 else float('nan'):.2f}); "
                f"target < {TARGET_BYTES} B: {verdict}; wall {t_lsrb:.1f} s vs bare {t_bare:.1f} s"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
