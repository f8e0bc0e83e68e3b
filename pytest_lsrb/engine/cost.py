"""What a run's model calls cost: `--lsrb-price in=X,out=Y`, prices per million tokens.

The cost counts the tokens this run sent and received: answers served from the response cache
cost nothing again (their tokens are counted apart, as `cached_*_tokens`). The currency is the
price's; nothing here knows about money beyond multiplying.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError

PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Price:
    """Price per million prompt (`in`) and completion (`out`) tokens."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (self.prompt * prompt_tokens + self.completion * completion_tokens) / PER_TOKENS


def parse_price(text: str | None, option: str = "--lsrb-price") -> Price | None:
    """`in=2.5,out=10` -> Price(2.5, 10); None when not given; one sentence for a bad value."""
    if text is None or not str(text).strip():
        return None
    found: dict[str, float] = {}
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in ("in", "out"):
            raise LsrbUsageError(
                f"{option}: '{part}' should read in=PRICE or out=PRICE (per million tokens), "
                "e.g. in=2.5,out=10."
            )
        try:
            number = float(value)
        except ValueError:
            raise LsrbUsageError(f"{option}: '{value.strip()}' in '{part}' is not a number.") from None
        if not number >= 0 or number == float("inf"):
            raise LsrbUsageError(f"{option}: the price in '{part}' must be a finite number >= 0.")
        if name in found:
            raise LsrbUsageError(f"{option}: '{name}' is given twice.")
        found[name] = number
    if set(found) != {"in", "out"}:
        missing = " and ".join(n for n in ("in", "out") if n not in found)
        raise LsrbUsageError(f"{option}: give both prices, e.g. in=2.5,out=10 ({missing} is missing).")
    return Price(found["in"], found["out"])


def summary_cost(summary: Mapping[str, Any], price: Price) -> dict[str, Any]:
    """The summary fields for a priced run: the price itself and the cost of the uncached tokens."""
    spent_in = int(summary.get("prompt_tokens") or 0) - int(summary.get("cached_prompt_tokens") or 0)
    spent_out = int(summary.get("completion_tokens") or 0) - int(summary.get("cached_completion_tokens") or 0)
    return {
        "price_per_million_tokens": {"in": price.prompt, "out": price.completion},
        "cost": round(price.cost(spent_in, spent_out), 6),
    }
