"""Metric functions with laws: pure, small, and tested with hypothesis."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


def finite_float(value: float) -> float | None:
    """`value` as a float, or None where it is NaN or infinite (a record's JSON has neither)."""
    return float(value) if math.isfinite(value) else None


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one item with `n` samples of which `c` passed (Chen et al., 2021).

    1 - C(n-c, k) / C(n, k), computed as a stable product. Requires 1 <= k <= n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


@dataclass(frozen=True)
class PassAtK:
    """pass@k for every k over ONE set of items: those with at least `min_samples` samples (the
    largest k asked), so the curve cannot fall as k grows. `items` is that set's size."""

    values: dict[int, float | None]
    items: int
    min_samples: int


def pass_at_k_curve(per_item: Mapping[str, tuple[int, int]], ks: Sequence[int]) -> PassAtK:
    """The unbiased estimator averaged over the items with n >= max(ks) (n, c per item)."""
    top = max(ks, default=1)
    eligible = [(n, c) for n, c in per_item.values() if n >= top]
    values: dict[int, float | None] = {
        k: sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible) if eligible else None for k in ks
    }
    return PassAtK(values, len(eligible), top)


def pass_at_k_ladder(samples_per_item: int) -> list[int]:
    """The k values reported: 1, 2, 4, ... and samples_per_item itself (never above it)."""
    ks = {samples_per_item}
    k = 1
    while k < samples_per_item:
        ks.add(k)
        k *= 2
    return sorted(ks)


def rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default) of already sorted values; q in [0, 100]."""
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac)


def latency_stats(values: Iterable[float], prefix: str) -> dict[str, float | None]:
    ordered = sorted(values)
    mean = sum(ordered) / len(ordered) if ordered else None
    return {
        f"{prefix}_mean": mean,
        f"{prefix}_p50": percentile(ordered, 50),
        f"{prefix}_p95": percentile(ordered, 95),
    }
