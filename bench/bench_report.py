"""`lsrb report` at scale: 1,000 vs 10,000 attempts (and optionally more), in this one run.

For each size: the time to build the page (read the run, score, render HTML), the file size, and in
headless Chromium the page's own init time (JSON.parse + first table render, measured by the page)
and the whole load-and-dump wall time. Printed as ratios against the smallest size, so a
non-linear step shows up whatever the machine's speed. The DOM row count shows the table stays
virtual.

Usage: python bench/bench_report.py [--sizes 1000,10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "report"))

from synthetic_runs import tactic_run  # noqa: E402

from pytest_lsrb.report import write_report  # noqa: E402


def chromium_dump(url: str, profile: Path) -> tuple[float, dict[str, str]]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        return float("nan"), {}
    start = time.perf_counter()
    proc = subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--window-size=1280,2000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    seconds = time.perf_counter() - start
    tag = re.search(r"<body([^>]*)>", proc.stdout)
    return seconds, dict(re.findall(r'([\w-]+)="([^"]*)"', tag.group(1) if tag else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="attempt counts (4 samples per item)")
    parser.add_argument("--keep", default=None, help="keep the runs and pages in this folder")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="lsrb-bench-report-"))
    rows = []
    for n in sizes:
        run = tactic_run(root / f"run{n}", items=max(1, n // 4), samples=4, seed=n)
        start = time.perf_counter()
        page = write_report(run, root / f"report{n}.html")
        build = time.perf_counter() - start
        load, attrs = chromium_dump(page.as_uri(), root / f"profile{n}")
        init = float(attrs.get("data-lsrb-init-ms", "nan"))
        rows.append((n, build, page.stat().st_size / 1e6, load, init, attrs.get("data-lsrb-rows-dom", "?")))
    base = rows[0]
    print(
        f"{'attempts':>9} {'build s':>8} {'x':>6} {'MB':>7} {'x':>6} {'load s':>7} {'x':>6} "
        f"{'init ms':>8} {'x':>6} {'rows in DOM':>11}"
    )
    for n, build, mb, load, init, dom in rows:
        print(
            f"{n:>9} {build:>8.2f} {build / base[1]:>6.1f} {mb:>7.2f} {mb / base[2]:>6.1f} {load:>7.2f} "
            f"{load / base[3]:>6.1f} {init:>8.1f} {init / base[4]:>6.1f} {dom:>11}"
        )
    print(
        f"(x = ratio to {base[0]} attempts; linear scaling of build/size/init would be "
        f"{rows[-1][0] / base[0]:.0f}x; pages in {root})"
    )
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
