"""Plugin overhead: a mock run of N attempts vs a bare pytest file with N parametrized no-ops.

Prints, from one run of this script (the machine is noisy, so only same-run ratios mean much):
- wall time and peak RSS of both, and their ratio (target: wall ratio <= 1.3 at 10,000 attempts);
- memory: peak RSS of both, and how much each run adds over its own `--collect-only`: pytest
  itself keeps every test report, so compare lsrb's growth with bare pytest's; the plugin must not
  hold records it has already written, so the difference should not grow with N.

- issue #20's criteria: serial lsrb / bare (target <= 1.15), lsrb `-n 2` / lsrb serial (target
  < 1), and the plugin's memory growth per attempt (run minus collection, lsrb minus bare). Each
  ratio is given for wall time (what the criterion says, best of --repeat) and for CPU time (user
  + system, xdist workers included, best of --repeat): on a shared machine wall time moves with
  other people's load, CPU time less.
- the same `-n 2` / serial ratio for the bare file: xdist's own cost per test (six messages per
  test between worker and controller), which no plugin can go below.

Usage: python bench/bench_overhead.py [--sizes 1000 10000] [--repeat 3] [--no-xdist]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

from _util import TACTIC_SUITE, Measured, bare_test_file, pytest_cmd, run_measured, synthetic_index


def best_of(repeat: int, cmd: list[str], cwd: Path, cleanup: Path | None = None):
    runs = []
    for _ in range(repeat):
        if cleanup is not None and cleanup.exists():
            for f in cleanup.iterdir():
                f.unlink()
        m = run_measured(cmd, cwd)
        if m.returncode != 0:
            raise SystemExit(f"run failed ({m.returncode}):\n{m.stdout[-3000:]}")
        runs.append(m)
    # Best of each measure on its own: the fastest wall-clock run need not be the one that used
    # the least CPU when other people's jobs share the cores.
    best = min(runs, key=lambda m: m.seconds)
    return dataclasses.replace(best, cpu_seconds=min(m.cpu_seconds for m in runs))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--no-xdist",
        dest="xdist",
        action="store_false",
        help="skip the -n 2 measurements (by default both serial and -n 2 are measured)",
    )
    args = ap.parse_args()
    modes = [[]] + ([["-n", "2"]] if args.xdist else [])
    ratios: list[str] = []
    criteria: list[str] = []
    lsrb_by_mode: dict[tuple[int, str], Measured] = {}
    bare_by_mode: dict[tuple[int, str], Measured] = {}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        print(
            f"{'attempts':>9} {'mode':>6} {'bare s':>8} {'lsrb s':>8} {'ratio':>6} "
            f"{'bare MB':>8} {'lsrb MB':>8} {'extra MB':>8} {'lsrb run-coll':>15} {'bare run-coll':>15}"
        )
        for n in args.sizes:
            bare_file = bare_test_file(tmp / f"test_bare_{n}.py", n)
            index = synthetic_index(tmp / f"index_{n}.jsonl", n)
            out = tmp / f"out_{n}"
            for mode in modes:
                bare = best_of(args.repeat, pytest_cmd(str(bare_file), *mode), tmp)
                lsrb = best_of(
                    args.repeat,
                    pytest_cmd(
                        str(TACTIC_SUITE),
                        f"--lsrb-index={index}",
                        f"--lsrb-output-dir={out}",
                        "--lsrb-overwrite",
                        *mode,
                    ),
                    tmp,
                )
                # Memory the run adds on top of collection: flat in N when written records are
                # not kept (rows and pytest items are collection, not growth while running).
                bare_collect = run_measured(pytest_cmd(str(bare_file), "--collect-only", *mode), tmp)
                collect = run_measured(
                    pytest_cmd(
                        str(TACTIC_SUITE),
                        f"--lsrb-index={index}",
                        "--collect-only",
                        f"--lsrb-output-dir={tmp / 'collect'}",
                        "--lsrb-overwrite",
                        *mode,
                    ),
                    tmp,
                )
                label = "-n 2" if mode else "serial"
                lsrb_by_mode[(n, label)] = lsrb
                bare_by_mode[(n, label)] = bare
                ratios.append(
                    f"{n} {label}: {lsrb.seconds / bare.seconds:.2f}x "
                    f"(cpu {lsrb.cpu_seconds / bare.cpu_seconds:.2f}x)"
                )
                growth = (lsrb.peak_rss_mb - collect.peak_rss_mb) - (
                    bare.peak_rss_mb - bare_collect.peak_rss_mb
                )
                criteria.append(
                    f"{n} {label}: plugin's memory growth {growth * 1024 * 1024 / n:.0f} bytes/attempt "
                    f"(lsrb cpu {lsrb.cpu_seconds:.2f} s, bare cpu {bare.cpu_seconds:.2f} s)"
                )
                print(
                    f"{n:>9} {label:>6} {bare.seconds:8.2f} {lsrb.seconds:8.2f} "
                    f"{lsrb.seconds / bare.seconds:6.2f} {bare.peak_rss_mb:8.1f} "
                    f"{lsrb.peak_rss_mb:8.1f} {lsrb.peak_rss_mb - bare.peak_rss_mb:8.1f} "
                    f"{lsrb.peak_rss_mb - collect.peak_rss_mb:15.1f} "
                    f"{bare.peak_rss_mb - bare_collect.peak_rss_mb:15.1f}"
                )
        print("ratio, mock run / bare pytest (target <= 1.15 serial at 10,000): " + "; ".join(ratios))
        for n in args.sizes:
            serial, par = lsrb_by_mode.get((n, "serial")), lsrb_by_mode.get((n, "-n 2"))
            if serial is not None and par is not None:
                print(
                    f"{n} lsrb -n 2 / lsrb serial (target < 1): {par.seconds / serial.seconds:.2f}x wall, "
                    f"{par.cpu_seconds / serial.cpu_seconds:.2f}x cpu"
                )
            bare_serial, bare_par = bare_by_mode.get((n, "serial")), bare_by_mode.get((n, "-n 2"))
            if bare_serial is not None and bare_par is not None:
                # xdist's own floor: what -n 2 costs for tests that do nothing at all
                print(
                    f"{n} bare -n 2 / bare serial (xdist alone): "
                    f"{bare_par.seconds / bare_serial.seconds:.2f}x wall, "
                    f"{bare_par.cpu_seconds / bare_serial.cpu_seconds:.2f}x cpu"
                )
        for line in criteria:
            print(line)


if __name__ == "__main__":
    main()
