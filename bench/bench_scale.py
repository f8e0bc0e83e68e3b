"""Scale: does cost grow no faster than work?

From one run of this script (the machine is shared and noisy: only same-run ratios mean much):

1. Selection over an index of 10k, 100k and 1M rows (synthetic rows made from the built-in goals
   with fresh ids), keeping a seeded subset of 1,000 items (`--lsrb-max-items=1000`). Rows are
   validated one at a time and only the best 1,000 are held, so the marginal time per row should
   stay the same from size to size (linear growth) and peak memory should stay flat (ratio ~1;
   the duplicate-id check keeps 8 bytes per row).
   Measured twice: `prepare_suite_run` alone (the engine) and `pytest --collect-only` (the user's
   path: the plugin, collection of the 1,000 tests, no run).
2. Runs of 10k and 100k mock attempts (every row of the index, one sample each). Peak memory of
   the run minus peak memory of its own `--collect-only` is what running adds on top of holding
   the collected tests. pytest itself keeps every test's reports (a bare file of N no-op tests
   shows that growth), so the plugin's own share is the difference, per attempt: flat in N when
   written records are not kept. Time per attempt should stay flat too.

Usage: python bench/bench_scale.py [--select 10000 100000 1000000] [--run 10000 100000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _util import (
    REPO,
    TACTIC_SUITE,
    Measured,
    bare_test_file,
    pytest_cmd,
    run_measured,
    synthetic_index,
)

BENCH = Path(__file__).resolve().parent


SELECT_SCRIPT = """
import sys
from pathlib import Path
from pytest_lsrb.engine.option_table import dest
from pytest_lsrb.session.prepare import prepare_suite_run
values = {dest("index"): sys.argv[1], dest("max-items"): sys.argv[2]}
run = prepare_suite_run(Path(sys.argv[3]), values.get, Path(sys.argv[4]))
assert len(run.cases) == min(int(sys.argv[2]), int(sys.argv[5])), len(run.cases)
"""


def best(repeat: int, cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    runs = []
    for _ in range(repeat):
        m = run_measured(cmd, cwd, env)
        if m.returncode != 0:
            raise SystemExit(f"failed ({m.returncode}): {' '.join(cmd)}\n{m.stdout[-3000:]}")
        runs.append(m)
    return min(runs, key=lambda m: m.seconds)


def ratio_rows(label: str, sizes: list[int], results: dict[int, Measured], per: str) -> None:
    """Time and peak memory per size and their growth from the previous size, plus the marginal
    cost per row between consecutive sizes: (t2 - t1) / (n2 - n1). Fixed costs (interpreter,
    imports, pytest) cancel out of it, so linear growth shows as a marginal ratio near 1 (a
    quadratic step would show ~10). `bytes/row`: peak memory's growth per extra row (streaming
    selection: the duplicate-id check's 8 bytes, plus noise; holding every row would be ~1-2 kB)."""
    print(f"\n{label}")
    print(
        f"{'rows':>9} {'seconds':>8} {'peak MB':>8} {'x rows':>7} {'x time':>7} {'x MB':>6} "
        f"{'marginal us/' + per:>20} {'x marginal':>10} {'bytes/' + per:>11}"
    )
    prev: int | None = None
    prev_marginal: float | None = None
    for n in sizes:
        m = results[n]
        growth = ""
        if prev is not None:
            p = results[prev]
            marginal = (m.seconds - p.seconds) / (n - prev) * 1e6
            x_marginal = f"{marginal / prev_marginal:10.2f}" if prev_marginal else f"{'':>10}"
            grown = (m.peak_rss_mb - p.peak_rss_mb) * 2**20 / (n - prev)  # peak memory per extra row
            growth = (
                f"{n / prev:7.1f} {m.seconds / p.seconds:7.2f} {m.peak_rss_mb / p.peak_rss_mb:6.2f} "
                f"{marginal:20.1f} {x_marginal} {grown:11.1f}"
            )
            prev_marginal = marginal
        print(f"{n:>9} {m.seconds:8.2f} {m.peak_rss_mb:8.1f} {growth}")
        prev = n


SAMPLER = ("-p", "_rss_sampler")


def sampler_env(out: Path, n: int) -> dict[str, str]:
    """Environment for `_rss_sampler`: RSS after every tenth of the run's tests."""
    path = os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {"PYTHONPATH": path, "LSRB_BENCH_RSS_EVERY": str(max(1, n // 10)), "LSRB_BENCH_RSS_OUT": str(out)}


def read_samples(path: Path) -> list[tuple[int, float]]:
    if not path.exists():
        return []
    rows = (line.split() for line in path.read_text(encoding="utf-8").splitlines())
    return [(int(done), float(mb)) for done, mb in rows]


def print_rss_while_running(n: int, lsrb: list[tuple[int, float]], bare: list[tuple[int, float]]) -> None:
    """RSS as tests finish, and its slope over the second half of the run (after warm-up): the
    plugin keeps nothing per written record when its slope matches bare pytest's."""
    if len(lsrb) < 4 or len(bare) < 4:
        print("\n(no RSS samples: /proc/self/statm unavailable?)")
        return
    print(f"\nRSS while {n} attempts run (MB after every tenth; bare: {n} no-op tests)")
    print(f"{'finished':>9} {'lsrb MB':>8} {'bare MB':>8}")
    for (done, mb), (_, bare_mb) in zip(lsrb, bare, strict=False):
        print(f"{done:>9} {mb:8.1f} {bare_mb:8.1f}")

    def slope(samples: list[tuple[int, float]]) -> float:
        (n0, m0), (n1, m1) = samples[len(samples) // 2 - 1], samples[-1]
        return (m1 - m0) * 2**20 / (n1 - n0)

    s_lsrb, s_bare = slope(lsrb), slope(bare)
    print(
        f"growth over the second half, bytes per test: lsrb {s_lsrb:.0f}, bare pytest {s_bare:.0f}; "
        f"the plugin's own: {s_lsrb - s_bare:.0f} bytes per attempt written"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--select", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--run", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--max-items", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        indexes = {n: synthetic_index(tmp / f"index_{n}.jsonl", n) for n in sorted({*args.select, *args.run})}
        k = str(args.max_items)
        engine: dict[int, Measured] = {}
        collect: dict[int, Measured] = {}
        for n in args.select:
            engine[n] = best(
                args.repeat,
                [
                    sys.executable,
                    "-c",
                    SELECT_SCRIPT,
                    str(indexes[n]),
                    k,
                    str(TACTIC_SUITE),
                    str(REPO),
                    str(n),
                ],
                tmp,
            )
            collect[n] = best(
                args.repeat,
                pytest_cmd(
                    str(TACTIC_SUITE), "--collect-only", f"--lsrb-index={indexes[n]}", f"--lsrb-max-items={k}"
                ),
                tmp,
            )
        if args.select:
            print(f"selection of {k} items from indexes of {', '.join(map(str, args.select))} rows")
            ratio_rows(
                "engine: prepare_suite_run (validate, select, shard, expand)", args.select, engine, "row"
            )
            ratio_rows("plugin: pytest --collect-only", args.select, collect, "row")

        runs: dict[int, Measured] = {}
        collected: dict[int, Measured] = {}
        bare_run: dict[int, Measured] = {}
        bare_collected: dict[int, Measured] = {}
        for n in args.run:
            # pytest itself keeps every test's reports: a bare file of N no-op tests shows what
            # any N-test run grows by, so the plugin's own growth is the difference.
            bare_file = bare_test_file(tmp / f"test_bare_{n}.py", n)
            bare_run[n] = best(
                args.repeat,
                pytest_cmd(str(bare_file), *SAMPLER),
                tmp,
                sampler_env(tmp / f"rss_bare_{n}.txt", n),
            )
            bare_collected[n] = best(args.repeat, pytest_cmd(str(bare_file), "--collect-only"), tmp)
            out = tmp / f"out_{n}"
            runs[n] = best(
                args.repeat,
                pytest_cmd(
                    str(TACTIC_SUITE),
                    f"--lsrb-index={indexes[n]}",
                    f"--lsrb-output-dir={out}",
                    "--lsrb-overwrite",
                    "--lsrb-outcome=record",
                    *SAMPLER,
                ),
                tmp,
                sampler_env(tmp / f"rss_lsrb_{n}.txt", n),
            )
            collected[n] = best(
                args.repeat,
                pytest_cmd(str(TACTIC_SUITE), "--collect-only", f"--lsrb-index={indexes[n]}"),
                tmp,
            )
        if args.run:
            ratio_rows("mock runs (every row, 1 sample)", args.run, runs, "attempt")
            print("\nmemory a run adds over its own --collect-only (bare: N no-op tests)")
            print(
                f"{'attempts':>9} {'run MB':>8} {'collect MB':>10} {'run-collect':>11} "
                f"{'bare run-coll':>13} {'plugin bytes/attempt':>20}"
            )
            for n in args.run:
                grow = runs[n].peak_rss_mb - collected[n].peak_rss_mb
                bare_grow = bare_run[n].peak_rss_mb - bare_collected[n].peak_rss_mb
                print(
                    f"{n:>9} {runs[n].peak_rss_mb:8.1f} {collected[n].peak_rss_mb:10.1f} {grow:11.1f} "
                    f"{bare_grow:13.1f} {(grow - bare_grow) * 2**20 / n:20.0f}"
                )
            n = max(args.run)
            print_rss_while_running(
                n, read_samples(tmp / f"rss_lsrb_{n}.txt"), read_samples(tmp / f"rss_bare_{n}.txt")
            )


if __name__ == "__main__":
    main()
