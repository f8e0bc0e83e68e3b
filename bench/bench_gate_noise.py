"""How often the CI recipe's gate speaks on an unchanged model, and how often it catches a real drop.

An unchanged model sampled twice (a provider that does not honour the seed, or a temperature the
seed does not pin) gives two runs that differ by sampling noise alone. Each item has its own
chance of success (a model solves some items always, some never, some now and then: drawn from
Beta(0.5, 0.5), the U shape of real per-item pass rates); two independent runs of the same model
are drawn from those chances and gated as `lsrb compare BASELINE CURRENT --max-drop pass_at_1=X`
would gate them (`tools.gate.compare_metric` and `sensitivity_lines`, the same functions). A
"changed" model is the same chances less `DROP` on every item. Printed per threshold:

    warned   share of unchanged pairs whose gate output holds a WARNING line
    failed   share of unchanged pairs the gate fails (false alarms: the job goes red for nothing)
    caught   share of changed pairs the gate fails (power)

    python bench/bench_gate_noise.py            # 81 items (the tactic suite), 1 and 3 samples
    python bench/bench_gate_noise.py 300 2000   # ITEMS PAIRS
"""

from __future__ import annotations

import random
import sys
from typing import Any

from pytest_lsrb.engine.metric import resolve_metric
from pytest_lsrb.tools.gate import GateResult, Threshold, compare_metric, sensitivity_lines

DROP = 0.15  # a real regression: every item's chance of success down by this much


def run(chances: list[float], samples: int, rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """One run's records by item: each sample succeeds with its item's chance."""
    return {
        f"i{i:04d}": [
            {"item_id": f"i{i:04d}", "sample_index": k, "valid": rng.random() < p, "nonempty": True}
            for k in range(samples)
        ]
        for i, p in enumerate(chances)
    }


def verdict(limit: float, alpha: float, base: Any, cur: Any, samples: int) -> tuple[bool, bool]:
    """(failed, warned) of the gate `--max-drop pass_at_1=<limit> --alpha <alpha>`."""
    threshold = Threshold(resolve_metric("pass_at_1"), "max_drop", limit)
    check = compare_metric(threshold, base, cur, alpha, (samples, samples))
    result = GateResult(None, "current", alpha, [check], 0, 0, check.items, 0, 0, True)
    warned = any(line.startswith("WARNING") for line in sensitivity_lines(result, False))
    return check.regressed, warned


def main(items: int = 81, pairs: int = 1000) -> None:
    settings = [(0.02, 0.05), (0.0, 0.05), (0.0, 0.01), (0.05, 0.05), (0.1, 0.05)]
    print(f"{items} items, {pairs} pairs of runs per row; a changed model: every chance -{DROP}")
    print(f"{'samples':>7}  {'max-drop':>8}  {'alpha':>5}  {'warned':>7}  {'failed':>7}  {'caught':>7}")
    for samples in (1, 3):
        for limit, alpha in settings:
            rng = random.Random(20260)
            warned = failed = caught = 0
            for _ in range(pairs):
                chances = [rng.betavariate(0.5, 0.5) for _ in range(items)]
                base = run(chances, samples, rng)
                same = run(chances, samples, rng)
                worse = run([max(0.0, p - DROP) for p in chances], samples, rng)
                f, w = verdict(limit, alpha, base, same, samples)
                failed += f
                warned += w
                caught += verdict(limit, alpha, base, worse, samples)[0]
            print(
                f"{samples:>7}  {limit:>8g}  {alpha:>5g}  {warned / pairs:>7.1%}  {failed / pairs:>7.1%}  "
                f"{caught / pairs:>7.1%}"
            )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
