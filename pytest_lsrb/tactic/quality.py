"""Data-quality flags of a goal row, set when it is imported and usable as goal slices (`tag:X`).

- `pp_failed`: the goal holds `failed to pretty print` (Lean could not print part of it; the
  model sees a hole, and the goal cannot be restated);
- `elided`: the goal holds `⋯` (Lean elided a term: the model sees less than the goal);
- `sorry_in_goal`: the goal itself mentions `sorry` (an earlier sorry leaked into it);
- `stop_span`: the span covers several lines (SorryDB records a `stop` block as one sorry);
- `benchmark_source`: the repository or path names a published benchmark or problem collection
  (miniF2F, PutnamBench, ProofNet, compfiles, formal-conjectures, formal-imo, IMOLean, VERINA,
  ...), whose solutions may be in a model's training data.

`quality_counts` gives, over rows, how many are restatable (synthetic mode can check them),
spliceable by their span (a `sorry` token or a `stop` block: repo_replay can place a tactic
there, unless the syntax around it in the file refuses it), and flagged.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any, Final

from pytest_lsrb.tactic.lean.goal import Unrestatable, restate

QUALITY_TAGS: Final = ("pp_failed", "elided", "sorry_in_goal", "stop_span", "benchmark_source")
_SORRY: Final = re.compile(r"(?<![\w.'])sorry(?![\w'])")
_BENCHMARKS: Final = re.compile(
    r"mini-?f2f|putnam-?bench|proofnet|compfiles|formal-?conjectures|lean-?workbook|imo-?steps|"
    r"fate-?[mhx]\b|deepseek-?prover|mathlib-?bench|proverbench|"
    # competition problems with published solutions, and benchmarks with reference solutions
    r"formal-?imo|imo-?lean|verina|minictx|minif2f",
    re.I,
)


def is_benchmark_source(remote: str, path: str) -> bool:
    """Whether the repository or path names a published benchmark (see the module docstring)."""
    return _BENCHMARKS.search(f"{remote} {path}") is not None


def quality_tags(goal: str, span_lines: int, remote: str, path: str) -> list[str]:
    """The flags of one goal (see the module docstring), in QUALITY_TAGS order."""
    found = {
        "pp_failed": "failed to pretty print" in goal,
        "elided": "⋯" in goal,
        "sorry_in_goal": _SORRY.search(goal) is not None,
        "stop_span": span_lines > 1,
        "benchmark_source": is_benchmark_source(remote, path),
    }
    return [tag for tag in QUALITY_TAGS if found[tag]]


def quality_counts(rows: Iterable[Any]) -> dict[str, Any]:
    """Counts over index rows: total, restatable, spliceable by span, flagged, and per flag."""
    total = restatable = spliceable = flagged = 0
    per_tag: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for row in rows:
        total += 1
        tags = [t for t in row.tags if t in QUALITY_TAGS]
        per_tag.update(tags)
        flagged += bool(tags)
        restated = restate(str(row.goal_text))
        if isinstance(restated, Unrestatable):
            reasons[restated.reason.split(" (")[0]] += 1
        else:
            restatable += 1
        one_sorry = row.start_line == row.end_line and row.end_column - row.start_column == len("sorry")
        spliceable += one_sorry or "stop_span" in tags
    return {
        "rows": total,
        "restatable": restatable,
        "spliceable_by_span": spliceable,
        "flagged": flagged,
        "flags": {tag: per_tag[tag] for tag in QUALITY_TAGS},
        "unrestatable_reasons": dict(reasons.most_common()),
    }
