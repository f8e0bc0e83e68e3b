"""Paired significance tests for the regression gate: pure functions, tested for their laws.

Both are one-sided: they ask how likely a drop at least this large would be if the current run
were really as good as the baseline and the differences were noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Beyond this many discordant pairs, the exact binomial tail comes from scipy (same value, faster).
_EXACT_LIMIT = 5000


def mcnemar_exact_p(down: int, up: int) -> float:
    """Exact one-sided McNemar p-value that the current run is worse.

    `down` items passed in the baseline and fail now, `up` items the reverse. Under the null
    hypothesis each discordant item is equally likely to go either way, so the p-value is
    P(X >= down) for X ~ Binomial(down + up, 1/2). No discordant items: p = 1.
    """
    if down < 0 or up < 0:
        raise ValueError(f"counts must be non-negative, got down={down}, up={up}")
    n = down + up
    if n == 0 or down == 0:
        return 1.0
    if n > _EXACT_LIMIT:
        from scipy.stats import binom

        return float(min(1.0, binom.sf(down - 1, n, 0.5)))
    tail = sum(math.comb(n, k) for k in range(down, n + 1))
    return min(1.0, float(tail / 2**n))


def paired_bootstrap_p(diffs: Sequence[float], *, resamples: int = 10_000, seed: int = 0) -> float:
    """One-sided paired bootstrap p-value that the mean of `diffs` (current - baseline) is below 0.

    The differences are centred to mean 0 (the null hypothesis) and resampled with replacement
    (n draws from the n centred differences) `resamples` times with a seeded generator;
    p = (1 + #{resampled mean <= observed mean}) / (1 + resamples). Deterministic for a given input
    order and seed. No differences: p = 1.
    """
    import numpy as np  # here, not at import: every pytest process loads the plugin

    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    values = np.asarray(diffs, dtype=float)
    if values.size == 0:
        return 1.0
    observed = float(values.mean())
    centred = values - observed
    if not np.any(centred):
        return 1.0 if observed >= 0 else 1.0 / (1 + resamples)
    # Resampling n items with replacement = drawing how often each distinct value comes up
    # (multinomial), which costs O(distinct values) per resample instead of O(n): per-item scores
    # take few values (c/n, pass@k). Values keep their order of first appearance, so mirrored or
    # shifted inputs get the same draws.
    uniq, first, counts = np.unique(centred, return_index=True, return_counts=True)
    order = np.argsort(first)
    uniq, counts = uniq[order], counts[order]
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    block = max(1, 4_000_000 // uniq.size)  # memory stays small for large runs
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        draws = rng.multinomial(values.size, counts / values.size, size=stop - start)
        means[start:stop] = draws @ uniq / values.size
    # A hair of tolerance: the same draws reproduce the observed mean up to rounding.
    count = int(np.count_nonzero(means <= observed + 1e-12))
    return (1 + count) / (1 + resamples)


def mcnemar_min_detectable(items: int, alpha: float) -> int | None:
    """The fewest items that must get worse (and none better) for exact McNemar to reach p < alpha.

    With `down` items worse and none better, p = 0.5**down, so the answer is the smallest k with
    0.5**k < alpha. None when `items` is too few for any drop to be significant.
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    k = 0
    while 0.5**k >= alpha:
        k += 1
    return k if k <= items else None


def normal_min_detectable(diffs: Sequence[float], alpha: float, power: float = 0.8) -> float | None:
    """The mean drop a one-sided test at `alpha` detects with `power`, for these items' spread.

    The textbook minimum detectable effect (z_{1-alpha} + z_{power}) * sd / sqrt(n), with the
    sample standard deviation of the paired differences. None with fewer than two items or no
    spread at all (not estimable: 0 would claim any drop is detectable).
    """
    from statistics import NormalDist, stdev

    if len(diffs) < 2:
        return None
    spread = stdev(diffs)
    if spread == 0:  # identical differences (two identical runs): no spread to size a drop by
        return None
    z = NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(power)
    return z * spread / math.sqrt(len(diffs))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order.

    Sorted ascending, the i-th (0-based) of m gets max over j <= i of (m - j) * p_(j), capped at 1;
    rejecting where the adjusted value is < alpha is Holm's step-down procedure at level alpha.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def paired_bootstrap_ci(
    diffs: Sequence[float], *, level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of the mean of `diffs` (resampling items)."""
    import numpy as np

    values = np.asarray(diffs, dtype=float)
    if values.size == 0:
        return None
    uniq, first, counts = np.unique(values, return_index=True, return_counts=True)
    order = np.argsort(first)
    uniq, counts = uniq[order], counts[order]
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(values.size, counts / values.size, size=resamples)
    means = draws @ uniq / values.size
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def paired_bootstrap_quantile_p(
    baseline: Sequence[Sequence[float]],
    current: Sequence[Sequence[float]],
    q: float,
    sign: float = 1.0,
    *,
    resamples: int = 2_000,
    seed: int = 0,
) -> float:
    """One-sided paired bootstrap p-value that the current run's q-quantile is worse.

    `baseline[i]` and `current[i]` are item i's values in each run. Items are resampled with
    replacement, the same items in both runs; each resample's quantile of the pooled values gives
    a difference d = sign * (current - baseline) (sign -1 for a lower-is-better metric, so d < 0
    is always worse). p = (1 + #{d >= 0}) / (1 + resamples): how often the resampled runs show no
    worsening. Deterministic for a given input and seed. No items: p = 1.
    """
    import numpy as np

    n = len(baseline)
    if n == 0 or n != len(current):
        return 1.0
    b_items = [np.asarray(v, dtype=float) for v in baseline]
    c_items = [np.asarray(v, dtype=float) for v in current]
    rng = np.random.default_rng(seed)
    count = 0
    for _ in range(resamples):
        pick = rng.integers(0, n, n)
        b = np.concatenate([b_items[i] for i in pick])
        c = np.concatenate([c_items[i] for i in pick])
        if b.size == 0 or c.size == 0:
            count += 1
            continue
        d = sign * (float(np.quantile(c, q)) - float(np.quantile(b, q)))
        count += d >= 0
    return (1 + count) / (1 + resamples)
