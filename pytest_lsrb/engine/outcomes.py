"""THE judging rule: which attempts say something about the model, and whether each succeeded.

Every reader of attempt records (summary.json, the gate and `lsrb compare`, the HTML report,
`lsrb merge`, resume, the pytest outcome of each test) asks this module, and nothing else:

- an attempt is **infrastructure** when generation failed on the transport, the provider or the
  harness (`generation_error_domain` not a model domain), or verification failed on the
  environment or the harness (`verification_error_domain`): the model was never judged;
- an attempt is **skipped** when the checker has, by design, no verdict to give: a replay profile
  says its row is not verified (outcome `skipped`), or an equation is to be judged by a symbolic
  match that cannot be had (outcome `not_applicable`: no ground truth, the judge off, the check
  undecided). Counted and shown, never judged;
- every other attempt is **judged**: the model answered (or failed to, by its own fault) and the
  checker gave a verdict. `success` is that verdict: `verification_success` when the run checks
  answers (`verification_mode` other than `none`), else `valid`.

An attempt of several model calls (a discovery search) asks `unanswered_kind` whose failure it
is: when the model never answered — every call failed on the transport, the provider or the
harness — it is infrastructure, whatever result the search holds without the model (a starting
skeleton, PySR's own best); one answer, even an empty or unusable one, makes it the model's.

Rates over the model's answers (valid_rate, nonempty_rate) count **answered** attempts: all but
generation infrastructure errors. Rates over verdicts (pass@k, success rates) count judged ones.

A generation error kind on a record names one of two things, never both, and every reader says
them apart with the same words: a **generation error** (`generation_infrastructure`: no usable
answer came from the endpoint, a transport, provider or harness failure, infrastructure) or an
**unreadable answer** (`unreadable`: the endpoint answered, but nothing the task can use was in it,
an empty text or prose with no answer found: the model's own, counted against it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from pytest_lsrb.core.errors import MODEL_DOMAINS, generation_domain
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.task import PASS, Judgement

if TYPE_CHECKING:
    from pytest_lsrb.engine.task import Task

Record = AttemptRecord
Status = Literal["judged", "infrastructure", "skipped"]

JUDGED: Final = "judged"
INFRASTRUCTURE: Final = "infrastructure"
SKIPPED: Final = "skipped"
# Verification error domains that say nothing about the model.
UNJUDGED_VERIFICATION_DOMAINS: Final = frozenset({"environment", "harness"})
# The verification outcome of a row a replay profile marks `skip`.
SKIPPED_OUTCOME: Final = "skipped"
# Verification outcomes that say the checker has no verdict to give (llm_srbench: no symbolic
# verdict for --lsrb-sr-success=symbolic).
SKIPPED_OUTCOMES: Final = frozenset({SKIPPED_OUTCOME, "not_applicable"})


def subset_note(summary: Mapping[str, Any]) -> str:
    """What a rate over judged attempts leaves out when a verifier could not put some goals
    before Lean at all (synthetic mode: `verification_judged_subset`), as `; 440 not restatable
    or not reconstructible`; empty otherwise. One phrase for the terminal, summary.json and the
    report, so a synthetic rate is never read as a rate over every item."""
    subset = summary.get("verification_judged_subset")
    if not isinstance(subset, Mapping):
        return ""
    left = int(subset.get("not_restatable") or 0) + int(subset.get("not_reconstructible") or 0)
    return f"; {left} not restatable or not reconstructible" if left else ""


def unreadable_note(count: int, answered: Any) -> str:
    """`2 of 81 answered (2.5%): empty, or no answer found in the text; the model's own, not a
    generation error`: one phrase for the terminal and the report."""
    share = f" ({100 * count / answered:.1f}%)" if isinstance(answered, int) and answered > 0 else ""
    of_what = f" of {answered} answered" if isinstance(answered, int) else ""
    return (
        f"{count}{of_what}{share}: empty, or no answer found in the text; "
        "the model's own, not a generation error"
    )


def generation_infrastructure(record: Record) -> bool:
    """Generation failed for a reason outside the model (transport, provider, harness)."""
    return bool(record.get("generation_error_kind")) and (
        record.get("generation_error_domain") not in MODEL_DOMAINS
    )


def unreadable(record: Record) -> bool:
    """The model answered, but nothing usable could be read from it (an empty text, prose with no
    tactic or equation found): its own failure (`generation_error_domain` a model domain), never
    a generation error of the endpoint's."""
    return bool(record.get("generation_error_kind")) and (
        record.get("generation_error_domain") in MODEL_DOMAINS
    )


def unanswered_kind(calls: int, failed: Mapping[str, int]) -> str | None:
    """THE rule for an attempt that made `calls` model calls, `failed` its failed calls by error
    kind: the generation error kind that makes it infrastructure, or None when it is the model's.

    The model never answered when every call failed and no failure is the model's own (an empty
    answer, `empty_output`, is an answer): then the attempt says nothing about the model, whatever
    fallback its search returns, and the commonest kind (the first seen on a tie) is recorded.
    Any answer makes the attempt count; so does one that made no call (nothing failed)."""
    if calls <= 0 or sum(failed.values()) < calls:
        return None
    if any(n and generation_domain(kind) in MODEL_DOMAINS for kind, n in failed.items()):
        return None
    return max(failed, key=lambda kind: failed[kind])


def status(record: Record) -> Status:
    if generation_infrastructure(record):
        return INFRASTRUCTURE
    if record.get("verification_error_domain") in UNJUDGED_VERIFICATION_DOMAINS:
        return INFRASTRUCTURE
    if record.get("verification_outcome") in SKIPPED_OUTCOMES:
        return SKIPPED
    return JUDGED


def answered(record: Record) -> bool:
    """The model answered (rightly or wrongly): the population of valid_rate and nonempty_rate."""
    return not generation_infrastructure(record)


def judged(record: Record) -> bool:
    """The model answered and the checker gave a verdict: the population of pass@k."""
    return status(record) == JUDGED


def verifying(record: Record) -> bool:
    """The run checks answers (a record without the mode field: one that carries a verdict)."""
    if record.get("verification_mode", "none") != "none":
        return True
    return bool(record.get("verification_attempted")) or record.get("verification_success") is not None


def success(record: Record) -> bool:
    """The verdict on a judged attempt: verified when the run checks answers, else valid."""
    return verdict(record)[1]


def verdict(record: Record) -> tuple[Status, bool]:
    """`(status(record), success(record))` from one reading of the record (a summary asks both
    of every record it counts)."""
    st = status(record)
    if st != JUDGED:
        return st, False
    if verifying(record):
        return st, record.get("verification_success") is True
    return st, bool(record.get("valid"))


def verified(record: Record) -> bool:
    """The checker actually ran and decided (not refused by the environment, not skipped)."""
    return bool(record.get("verification_attempted")) and judged(record)


def judgement(task: Task[Any] | None, record: Record) -> Judgement:
    """The pytest outcome of a finished attempt: infrastructure errors the test, a profile skip
    skips it, a generation error of the model's fails it; the rest is the task's call (`task`
    None: the generic verdict, for records of a task this version does not know)."""
    st = status(record)
    if st == INFRASTRUCTURE:
        kind = record.get("generation_error_kind")
        if kind:
            detail = record.get("generation_error_message") or record.get("generation_error_domain")
            return Judgement("error", f"generation failed: {kind} ({detail})")
        detail = record.get("verification_detail") or "no detail"
        outcome = record.get("verification_outcome")
        return Judgement("error", f"verification could not judge: {outcome} ({detail})")
    if st == SKIPPED:
        detail = record.get("verification_detail") or f"no verdict ({record.get('verification_outcome')})"
        return Judgement("skip", f"not verified: {detail}")
    kind = record.get("generation_error_kind")
    if kind:
        detail = record.get("generation_error_message") or record.get("generation_error_domain")
        return Judgement("fail", f"generation failed: {kind} ({detail})")
    if task is not None:
        return task.judge(record)
    if success(record):
        return PASS
    if verifying(record):
        return Judgement("fail", f"did not verify: {record.get('verification_outcome')}")
    return Judgement("fail", "no valid answer")


# -- per item ----------------------------------------------------------------------------------


def per_item_counts(records: Iterable[Record]) -> dict[str, tuple[int, int]]:
    """item_id -> (judged samples, successes), sorted by item (float sums then do not depend on
    the order attempts finished)."""
    counts: dict[str, list[int]] = {}
    for rec in records:
        if judged(rec):
            c = counts.setdefault(str(rec["item_id"]), [0, 0])
            c[0] += 1
            c[1] += success(rec)
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}


# -- items that got worse ------------------------------------------------------------------------


def item_direction(
    before: float, after: float, better: Literal["higher", "lower"] | None = "higher"
) -> Literal["regressed", "improved"] | None:
    """THE definition of a regressed item, for the gate's "items that got worse" and the report's
    "regressed": its score on the metric moved the wrong way (`better`: the metric's direction,
    `engine.metric`; pass@1, the default, fell). An item judged in one run only has no direction."""
    if after == before or better is None:
        return None
    worse = after < before if better == "higher" else after > before
    return "regressed" if worse else "improved"
