"""Cost of `lsrb merge`, `lsrb compare` and `lsrb split` as runs grow.

Each is timed against a baseline measured in the same process on the same files: reading the
attempts once with `summarize_file` (what every run does at session end). A ratio that stays flat
as N grows means the command scales like reading its input.

    python bench/bench_gate_merge.py            # N = 2,000 / 20,000 / 100,000 attempts
    python bench/bench_gate_merge.py 5000 50000
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_lsrb.core.seeds import shard_of, stable_hash
from pytest_lsrb.engine.options import identity_hash
from pytest_lsrb.output.reader import summarize_file
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.task import TacticSummary
from pytest_lsrb.tools.gate import compare_dirs, gate_config
from pytest_lsrb.tools.merge import merge_shards
from pytest_lsrb.tools.splits import SplitConfig, make_split

SAMPLES = 4
SHARDS = 4


def record(item: str, sample: int, config_hash: str, salt: str) -> dict[str, Any]:
    ok = stable_hash(salt, item, sample) % 100 < 70
    return {
        "item_id": item,
        "sample_index": sample,
        "attempt_seed": sample,
        "suite": "goal_to_tactic_proposal_v1",
        "adapter": "mock",
        "model": "m",
        "config_hash": config_hash,
        "raw_output": "simp",
        "tactic": "simp",
        "valid": ok,
        "nonempty": True,
        "contains_sorry": False,
        "latency_ms": 1.0,
        "verification_mode": "none",
        "verification_attempted": False,
        "verification_success": None,
    }


def write_shards(root: Path, n_items: int, salt: str) -> list[Path]:
    config = {"samples": SAMPLES, "task": "goal_to_tactic_proposal_v1", "shard_count": SHARDS, "seed": 0}
    chash = identity_hash(config)
    dirs = []
    for s in range(SHARDS):
        d = root / f"{salt}-s{s}"
        d.mkdir(parents=True)
        items = [f"item{i:07d}" for i in range(n_items) if shard_of(f"item{i:07d}", SHARDS) == s]
        with (d / "attempts.jsonl").open("w") as fh:
            for item in items:
                for k in range(SAMPLES):
                    fh.write(json.dumps(record(item, k, chash, salt)) + "\n")
        (d / "run.json").write_text(
            json.dumps(
                {
                    "suite": "goal_to_tactic_proposal_v1",
                    "config": {**config, "shard_index": s},
                    "schema_version": 1,
                    "config_hash": chash,
                    "selected_rows_hash": "0" * 64,
                    "shard_count": SHARDS,
                    "shard_index": s,
                    "attempts_expected": len(items) * SAMPLES,
                    "selected_items": n_items,
                }
            )
        )
        dirs.append(d)
    return dirs


def timed(fn: Any, *args: Any, **kwargs: Any) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def tactic_rows(n_items: int) -> list[TacticRow]:
    return [
        TacticRow(
            item_id=f"item{i:07d}",
            repo_remote=f"https://github.com/o/r{i % 97}",
            repo_branch="main",
            repo_commit="0" * 40,
            repo_lean_version="v4.22.0",
            path="A.lean",
            start_line=1,
            start_column=0,
            end_line=1,
            end_column=5,
            goal_text=f"n : Nat\n⊢ n + {i % 500} = {i % 500} + n",
        )
        for i in range(n_items)
    ]


def measure(root: Path, n_attempts: int) -> tuple[float, float, float, float]:
    """(read seconds, merge/read, compare/read, split/read) for runs of `n_attempts` attempts."""
    n_items = n_attempts // SAMPLES
    base_shards = write_shards(root, n_items, "base")
    cur_shards = write_shards(root, n_items, "cur")
    merge_shards(base_shards, root / "base")
    attempts = root / "base" / "attempts.jsonl"
    read = min(timed(summarize_file, attempts, SAMPLES, TacticSummary()) for _ in range(2))
    merge = timed(merge_shards, cur_shards, root / "cur")
    gate = gate_config(str(root / "base"), "pass_at_1=0.01,pass_at_4=0.01,valid_rate=0.01", None, None)
    compare = timed(compare_dirs, gate, root / "cur")
    rows = tactic_rows(n_items)
    (root / "index.jsonl").write_text("stand-in")
    config = SplitConfig((("dev", 0.2), ("test", 0.8)), 0, "repo")
    split = timed(make_split, rows, config, source=root / "index.jsonl", suite="s", out_dir=root / "sp")
    return read, merge / read, compare / read, split / read


def main(sizes: list[int]) -> None:
    print(f"{'attempts':>9}  {'read (s)':>8}  {'merge/read':>10}  {'compare/read':>12}  {'split/read':>10}")
    for n_attempts in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            read, merge, compare, split = measure(Path(tmp), n_attempts)
        print(f"{n_attempts:>9}  {read:>8.3f}  {merge:>10.2f}  {compare:>12.2f}  {split:>10.2f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [2_000, 20_000, 100_000])
