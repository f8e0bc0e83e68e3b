"""What counts as a pass when two runs are compared, and the metrics the gate can hold.

Per-attempt outcome (both suites): `verification_success` when verification ran or gave a verdict
(`verification_attempted`, or `verification_success` not null; for llm_srbench it is Acc_0.1),
else `valid`. Attempts that ended in an infrastructure error (a transport/provider/harness
generation error, or an environment/harness verification error) are not the model's answer
(`judged` is False): comparisons leave them out on both sides.

Metrics are computed per item from its judged samples (`Metric.item_score`), higher is better.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_lsrb.core.errors import MODEL_DOMAINS, LsrbUsageError
from pytest_lsrb.core.metrics import pass_at_k

Record = Mapping[str, Any]


def judged(record: Record) -> bool:
    """False for attempts an infrastructure error kept from being judged."""
    kind = record.get("generation_error_kind")
    if kind and record.get("generation_error_domain") not in MODEL_DOMAINS:
        return False
    return record.get("verification_error_domain") not in ("environment", "harness")


def outcome(record: Record) -> bool:
    """verification_success when verification ran (or recorded a verdict), else valid."""
    if record.get("verification_attempted") or record.get("verification_success") is not None:
        return bool(record.get("verification_success"))
    return bool(record.get("valid"))


@dataclass(frozen=True)
class Metric:
    name: str  # as the user spelled it, canonicalised (pass_at_1, valid_rate, field:x)
    summary_key: str | None
    per_record: Callable[[Record], bool]
    k: int | None = None  # pass@k

    def item_score(self, records: Sequence[Record]) -> float | None:
        """This item's score from its judged samples; None when it has too few."""
        n = len(records)
        if n == 0:
            return None
        c = sum(self.per_record(r) for r in records)
        if self.k is None:
            return c / n
        return pass_at_k(n, c, self.k) if n >= self.k else None


_FIELDS: dict[str, tuple[str, Callable[[Record], bool]]] = {
    "valid_rate": ("valid_rate", lambda r: bool(r.get("valid"))),
    "nonempty_rate": ("nonempty_rate", lambda r: bool(r.get("nonempty"))),
    "success_rate": (
        "verification_success_rate",
        lambda r: bool(r.get("verification_attempted")) and bool(r.get("verification_success")),
    ),
}
_FIELDS["verification_success_rate"] = _FIELDS["success_rate"]
_PASS_AT = re.compile(r"^(?:pass_at_|pass@|pass_at_k_|verification_pass_at_k_)(\d+)$")
KNOWN_METRICS = "pass_at_K, valid_rate, nonempty_rate, success_rate or field:NAME"


def resolve_metric(name: str) -> Metric:
    text = name.strip()
    m = _PASS_AT.match(text)
    if m:
        k = int(m.group(1))
        if k < 1:
            raise LsrbUsageError(f"metric '{name}': pass@k needs k >= 1.")
        return Metric(f"pass_at_{k}", f"verification_pass_at_k_{k}", outcome, k)
    if text in _FIELDS:
        key, fn = _FIELDS[text]
        return Metric(text if text != "verification_success_rate" else "success_rate", key, fn)
    if text.startswith("field:") and len(text) > 6:
        fname = text[6:]
        return Metric(text, None, lambda r: bool(r.get(fname)))
    raise LsrbUsageError(f"unknown metric '{name}' (expected {KNOWN_METRICS}).")
