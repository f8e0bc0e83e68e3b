"""The values of run options, checked before the run: one sentence per bad value, exit 4 under
pytest (2 from `lsrb`), never a traceback, a hang or an error in every test.

A numeric option must be finite and inside its bounds. An upper bound stands where a larger value
would hang the run before its first test (every item x sample is one test, created up front) or
let one call or retry loop run for days. Strings must be text (a command-line byte that is not
UTF-8 arrives as a lone surrogate), and the base URL must parse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import lone_surrogate

DAY_S: Final = 86_400.0


@dataclass(frozen=True)
class Bounds:
    low: float
    high: float
    low_open: bool = False  # the low end itself is refused (a timeout of 0 s)
    whole: bool = True  # a whole number
    unit: str = ""

    def describe(self) -> str:
        kind = "a whole number" if self.whole else "a finite number"
        unit = f" of {self.unit}" if self.unit else ""
        low = f"> {_number(self.low)}" if self.low_open else f">= {_number(self.low)}"
        return f"{kind}{unit} {low} and <= {_number(self.high)}"

    def holds(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# Keys are run-config keys (`--lsrb-<key with - for _>`); None values (an unset option) pass.
BOUNDS: Final[Mapping[str, Bounds]] = {
    "timeout": Bounds(0, DAY_S, low_open=True, whole=False, unit="seconds"),
    "max_retries": Bounds(0, 100),
    "retry_time": Bounds(0, DAY_S, whole=False, unit="seconds"),
    "concurrency": Bounds(1, 1024),
    "progress": Bounds(0, DAY_S, whole=False, unit="seconds"),
    "max_cost": Bounds(0, 1e12, low_open=True, whole=False),
    "max_total_tokens": Bounds(1, 10**15),
    "max_wall_time": Bounds(0, 365 * DAY_S, low_open=True, whole=False, unit="seconds"),
    "samples": Bounds(1, 10_000),
    "temperature": Bounds(0, 2, whole=False),  # the range OpenAI-compatible servers accept
    "max_tokens": Bounds(1, 10_000_000),
    "max_items": Bounds(1, 100_000_000),
    "shard_count": Bounds(1, 1_000_000),
    "sr_budget": Bounds(1, 1_000_000),
    "feedback_rounds": Bounds(0, 20),
    "context_lines": Bounds(0, 10_000_000),
    "sr_token_budget": Bounds(1, 10**12),
    "sr_time_limit": Bounds(0, 7 * DAY_S, low_open=True, whole=False, unit="seconds"),
    "sr_judge_time_limit": Bounds(0, DAY_S, low_open=True, whole=False, unit="seconds"),
    "sr_fit_time_limit": Bounds(0, DAY_S, low_open=True, whole=False, unit="seconds"),
}


def flag(key: str) -> str:
    return "--lsrb-" + key.replace("_", "-")


def check_values(values: Mapping[str, Any]) -> None:
    """Raise LsrbUsageError naming the first option whose value is out of bounds or not text."""
    for key, bounds in BOUNDS.items():
        value = values.get(key)
        if value is None or bounds.holds(float(value)):
            continue
        raise LsrbUsageError(f"{flag(key)}: expected {bounds.describe()} (got {value!r}).")
    for key, value in values.items():
        if isinstance(value, str):
            hit = lone_surrogate(value)
            if hit is not None:
                raise LsrbUsageError(
                    f"{flag(key)}: the value is not UTF-8 text (it holds {hit[1]}, a byte the "
                    "command line could not decode or a lone surrogate)."
                )
    check_base_url(values.get("base_url"))


def check_base_url(url: str | None) -> None:
    """An http(s) URL with a host. The value is not repeated in the message: it may hold a key."""
    if url is None:
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is what refuses 'http://host:99999'
    except ValueError as exc:
        raise LsrbUsageError(f"--lsrb-base-url: not a valid URL ({exc}).") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LsrbUsageError(
            "--lsrb-base-url: expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]."
        )
