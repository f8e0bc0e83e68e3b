"""Matching a problem set's complexity distribution to its source's.

The measure is the ground truth's expression-tree size (`Program.node_count`: every number,
variable, operator and function call is one node). The source's sizes (the AI-Feynman
equations as written) are cut at their quartiles into four bins; a candidate set keeps, in each
bin, the source's share of the largest total every bin can supply: N = min over bins of
candidates(bin) / share(bin), then round(N · share(bin)) per bin. Within a bin the candidates
are taken one per source equation in turn (the equations in seeded order), so no equation
crowds out the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_lsrb.core.seeds import stable_hash

QUANTILES = (0.25, 0.5, 0.75)


@dataclass(frozen=True)
class ComplexityBins:
    edges: tuple[int, ...]  # bin i holds sizes <= edges[i] (and > edges[i-1]); the last is open
    shares: tuple[float, ...]  # the source's fraction in each bin

    def bin_of(self, size: int) -> int:
        return int(np.searchsorted(np.asarray(self.edges), size, side="left"))

    def describe(self) -> list[str]:
        lows = [None, *self.edges]
        highs = [*self.edges, None]
        out = []
        for lo, hi in zip(lows, highs, strict=True):
            out.append(f"<= {hi}" if lo is None else f"> {lo}" if hi is None else f"{lo + 1}..{hi}")
        return out


def source_bins(sizes: Sequence[int]) -> ComplexityBins:
    """Quartile bins of the source's sizes (duplicate edges merged) and its share in each."""
    arr = np.asarray(sizes)
    edges = tuple(sorted({int(np.quantile(arr, q, method="lower")) for q in QUANTILES}))
    counts = np.bincount(np.searchsorted(np.asarray(edges), arr, side="left"), minlength=len(edges) + 1)
    return ComplexityBins(edges, tuple(float(c) / arr.size for c in counts))


def match_distribution(
    sizes: Sequence[int], groups: Sequence[str], bins: ComplexityBins, seed: int
) -> list[int]:
    """Indices of the candidates kept (ascending): `sizes[i]` is candidate i's size, `groups[i]`
    its source equation."""
    by_bin: dict[int, list[int]] = {}
    for i, size in enumerate(sizes):
        by_bin.setdefault(bins.bin_of(size), []).append(i)
    supply = [len(by_bin.get(b, [])) / share for b, share in enumerate(bins.shares) if share > 0]
    total = min(supply) if supply else 0.0
    kept: list[int] = []
    for b, share in enumerate(bins.shares):
        members = by_bin.get(b, [])
        want = min(len(members), round(total * share))
        kept += _spread(members, groups, want, seed)
    return sorted(kept)


def _spread(members: list[int], groups: Sequence[str], want: int, seed: int) -> list[int]:
    """`want` of `members`, one per group in turn, groups in seeded order."""
    queues: dict[str, list[int]] = {}
    for i in members:
        queues.setdefault(groups[i], []).append(i)
    order = sorted(queues, key=lambda g: stable_hash("complexity", seed, g))
    out: list[int] = []
    while len(out) < want:
        for g in order:
            if queues[g] and len(out) < want:
                out.append(queues[g].pop(0))
    return out
