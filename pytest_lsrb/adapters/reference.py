"""Reference baselines that need no model: SorryDB's deterministic strategies, tactic for tactic.

SorryDB's leaderboard (README of SorryDB/SorryDB at 83bd197, the 1,000-sorry SorryDB_2601 split)
reports two rows with no model in them, "Trivial" (2.1 %) and "Tactics" (8.4 %). Their code:

- `sorrydb-tactics`: SorryDB's `multi_tactic` strategy (`sorrydb/cli/run_morphcloud_local.py`:
  `[SingleTacticStrategy(t) for t in DEFAULT_TACTICS]`), which its plotting scripts display as
  "Tactics" (`scripts/plot_pass_at_k.py`: `'multi_tactic': 'Tactics'`). Each tactic of
  `DEFAULT_TACTICS` replaces the sorry on its own and the sorry counts as proved when any one of
  them verifies; its run on the split (2026-01-21, SorryDB commit 71959ed, the list below)
  verified 84 of 1000, the row's 8.4 %. Here sample `i` of an item answers the `i`-th tactic, so
  with `--lsrb-samples 12` every tactic is tried once and the item's pass@12 is the
  row's number (pass@1 of that run is not: it is one tactic's share).
- `sorrydb-rfl`: SorryDB's `rfl` strategy (`sorrydb/strategies/rfl_strategy.py` `RflStrategy`:
  the proof is `rfl`), the demo strategy SorryDB's docs call its naive baseline, run on the same
  split. SorryDB's scripts name no code for the "Trivial" row; their recorded `rfl` run verified
  13 of 996 (2026-01-12), not the row's 2.1 %, so the row may be a later run or another strategy:
  compare with it as "SorryDB's rfl strategy", not as a reproduction of that row.

The answers are fixed text, so the reader, the guard and the acceptance rule judge them exactly as
a model's: a run with these adapters reproduces the strategies' method on any index, and `lsrb
compare` or the report puts a model's numbers next to them. The adapter's name is the protocol
and part of the run's identity.

Each strategy has its own number of samples per sorry (`samples_per_item`: 12 for multi_tactic,
one per tactic; 1 for rfl): a run takes it when `--lsrb-samples` is not given and refuses another
in one sentence (tactic/task.py), and its headline is pass@k at that k (`headline_k`): the share
of sorries one of the tactics proved, the figure the leaderboard's row reports.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final

from pytest_lsrb.adapters.base import Adapter, AdapterConfig, GenerationRequest, GenerationResult

SORRYDB_SOURCE: Final = "SorryDB/SorryDB"
# sorrydb/cli/run_morphcloud_local.py DEFAULT_TACTICS at 71959ed, the commit of the multi_tactic
# run on SorryDB_2601 (84/1000 verified); unchanged at 83bd197.
MULTI_TACTIC: Final = (
    *("rfl", "trivial", "simp", "simp_all", "exact?", "grind", "ring", "norm_num"),
    *("omega", "linarith", "nlinarith", "aesop"),
)
# sorrydb/strategies/rfl_strategy.py RflStrategy.prove_sorry.
RFL: Final = ("rfl",)


class ReferenceAdapter(Adapter):
    """Answers a fixed list of tactics, one per sample, in order (sample `i`: tactic `i mod n`)."""

    name = "reference"
    strategy = ""
    commit = ""
    tactics: tuple[str, ...] = ()
    row = ""  # the leaderboard row the strategy stands for, if any
    default_concurrency = 1  # answers in microseconds
    cacheable = False  # answering is cheaper than a cache lookup
    runs_ahead = 32

    def __init__(self, config: AdapterConfig) -> None:
        self.model = config.model or f"sorrydb/{self.strategy}@{self.commit}"

    def check(self) -> None:
        return None

    def generate(self, request: GenerationRequest) -> GenerationResult:
        start = time.perf_counter()
        index = int(request.context.get("sample_index", 0) or 0)
        text = self.tactics[index % len(self.tactics)]
        return GenerationResult(text=text, latency_ms=(time.perf_counter() - start) * 1000.0)

    def identity(self) -> Mapping[str, Any]:
        return {
            "adapter": self.name,
            "model": self.model,
            "protocol": f"{SORRYDB_SOURCE}:{self.strategy}@{self.commit}",
            "tactics": list(self.tactics),
        }

    def close(self) -> None:
        return None

    @classmethod
    def samples_per_item(cls) -> int:
        """Samples per sorry: one per tactic of the strategy, each tried once."""
        return len(cls.tactics)


class SorryDBTacticsAdapter(ReferenceAdapter):
    name = "sorrydb-tactics"
    strategy = "multi_tactic"
    commit = "71959ed"
    tactics = MULTI_TACTIC
    row = "Tactics"


class SorryDBRflAdapter(ReferenceAdapter):
    name = "sorrydb-rfl"
    strategy = "rfl"
    commit = "83bd197"
    tactics = RFL


# `--lsrb-adapter` name -> its class, for the run's options (tactic/task.py) without loading one.
REFERENCE_ADAPTERS: Final[dict[str, type[ReferenceAdapter]]] = {
    cls.name: cls for cls in (SorryDBTacticsAdapter, SorryDBRflAdapter)
}
