"""Issue #46 item 3: a crash then the printed `--lsrb-resume` must not overspend a budget.

Each try is a `-n 2` run of the tactic suite at `--lsrb-concurrency 16` against a 32-slot llama.cpp
stand-in (tests/fakes/llama_slots.py, 0.4 s an answer and every fifth 4 s, 150 prompt tokens and
80-119 completion tokens billed each), `--lsrb-max-total-tokens 12000`, SIGKILLed at a random
moment while requests are in flight (the controller, one worker, or the whole group), then
resumed at once (again while a session ends unfinished). Printed: per victim, how many tries
billed more than the budget and the most billed (tests/fakes/crash_runs.py does the runs).

Usage: python bench/attack_budget_crash.py CHECKOUT [--tries 10]   (CHECKOUT: the code that runs:
       a `git archive d5cc7e2` of main before #46, or this worktree)

Measured (2 shared cores under other jobs' load):
- before (d5cc7e2), 4 tries per victim: controller 1/4 over the budget (13,048 billed), worker
  0/4 (at most 11,375), group 2/4 (14,273 and 12,806);
- after (cb7e125), 6 tries per victim: controller 0/6 (at most 11,375), worker 0/6 (11,375),
  group 0/6 (10,906: a dead process's requests are counted at their worst case, so the resume
  stops sooner).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _util import REPO

sys.path.insert(0, str(REPO / "tests"))
from fakes.crash_runs import VICTIMS, crash_then_resume


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--victims", nargs="*", default=list(VICTIMS))
    args = parser.parse_args()
    tree = args.checkout.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        for victim in args.victims:
            outcomes = [crash_then_resume(tree, Path(tmp), victim, seed) for seed in range(args.tries)]
            over = [o for o in outcomes if o.over]
            print(
                f"{tree.name}: SIGKILL {victim}, then resume: {len(over)}/{len(outcomes)} tries billed "
                f"over the 12000 budget; most billed {max(o.billed for o in outcomes)}; "
                f"billed per try {[o.billed for o in outcomes]}",
                flush=True,
            )
            for o in over[:2]:
                print(f"    over: {o.billed} billed; sessions {o.sessions}", flush=True)


if __name__ == "__main__":
    main()
