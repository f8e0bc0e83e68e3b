"""`--lsrb-dry-run` (`lsrb run SUITE --dry-run`): what the selection would cost, before paying it.

The run is planned as usual (selection, `-k`, shards; nothing is written), then the first
selected attempt is started against the real endpoint and stopped as soon as its first model call
has come back: that call's time and tokens, with the task's calls per attempt (an llm_srbench
method's budget), give the estimate. Everything is an upper bound where the run may stop early
(a search that finds an exact fit, a budget) and an estimate where calls differ (LLM-SR's prompts
grow with the skeletons it shows; answers vary in length): said so in the lines printed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, GenerationResult, in_flight, served_slots
from pytest_lsrb.core.durations import duration, latency

if TYPE_CHECKING:
    from pytest_lsrb.core.selection import Case, SelectableRow
    from pytest_lsrb.engine.plan import SuiteRun


class FirstCallMade(BaseException):
    """Stops the attempt once its first call is back (a BaseException: a task's own `except
    Exception` around a call must not swallow it)."""


@dataclasses.dataclass(frozen=True)
class FirstCall:
    seconds: float
    prompt_tokens: int | None
    completion_tokens: int | None
    error: str | None  # the call's error kind and message, when it failed
    requests: int = 1  # HTTP requests it took (a retried call's time includes the failed tries)


class FirstCallOnly(Adapter):
    """Passes the attempt's first call to the real adapter, then stops the attempt."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.name, self.model = inner.name, inner.model
        self.default_concurrency = 1
        self.seen: FirstCall | None = None

    def generate(self, request: GenerationRequest) -> GenerationResult:
        started = time.perf_counter()
        result = self.inner.generate(request)
        usage = result.usage or {}
        self.seen = FirstCall(
            time.perf_counter() - started,
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            None if result.ok else f"{result.error_kind}: {result.error_message}",
            max(1, result.http_attempts),
        )
        raise FirstCallMade

    def identity(self) -> Mapping[str, Any]:
        return self.inner.identity()


def measure_first_call(run: SuiteRun, case: Case[SelectableRow], adapter: Adapter) -> FirstCall | None:
    """Start `case`'s attempt and stop it after its first call (None: it made no call)."""
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.engine.verifier import create_verifier

    probe = FirstCallOnly(adapter)
    verifier = create_verifier(run.verifier_config())
    try:
        runner = Runner(
            task=run.task,
            adapter=probe,
            verifier=verifier,
            config=run.config,
            config_hash=run.config_hash,
            concurrency=1,
            task_options=dict(run.config.values),
        )
        with contextlib.suppress(FirstCallMade):
            runner.build_record(case)
        runner.close()
    finally:
        verifier.close()
    return probe.seen


def estimate_lines(
    attempts: int,
    calls_each: int,
    first: FirstCall | None,
    parallel: int,
    max_tokens: int | None,
    where: str,
    timeout: float | None = None,
) -> list[str]:
    """What the selection costs at most, and about how long it takes, from one measured call."""
    calls = attempts * calls_each
    bound = "at most " if calls_each > 1 else ""
    lines = [
        f"lsrb: dry run: {attempts:,} attempts x {bound}{calls_each:,} model call(s) = {bound}{calls:,} "
        "model calls"
    ]
    if first is None:
        return [*lines, "lsrb: the first attempt made no model call: nothing to measure"]
    if first.error is not None:
        return [*lines, f"lsrb: the first call ({where}) failed: {first.error}"]
    p_tok, c_tok = first.prompt_tokens, first.completion_tokens
    said = f" and {p_tok:,} prompt + {c_tok:,} completion tokens" if p_tok is not None and c_tok else ""
    tries = f" ({first.requests} requests: it was retried)" if first.requests > 1 else ""
    lines.append(f"lsrb: the first call ({where}) took {latency(first.seconds * 1000)}{tries}{said}")
    if p_tok is not None and c_tok is not None:
        most = (
            f"; at most {calls * (p_tok + max_tokens):,} with every answer at --lsrb-max-tokens"
            if max_tokens
            else ""
        )
        lines.append(f"lsrb: tokens: ~{calls * (p_tok + c_tok):,} if every call is like the first{most}")
    else:
        lines.append("lsrb: tokens: the endpoint reported none")
    lines.append(
        f"lsrb: time: ~{duration(calls * first.seconds / parallel)} for {bound}{calls:,} calls like the "
        f"first, {parallel} at a time (calls of a long search may take longer as its prompts grow)"
    )
    if c_tok and max_tokens and timeout and first.seconds > 0:
        # an answer as long as --lsrb-max-tokens allows, at the first call's pace
        longest = max_tokens / (c_tok / first.seconds)
        if longest > timeout:
            lines.append(
                f"lsrb: WARNING: at {c_tok / first.seconds:.1f} tokens/s an answer of --lsrb-max-tokens "
                f"{max_tokens} takes ~{duration(longest)}, past --lsrb-timeout {timeout:g} s: such calls "
                "would time out (raise --lsrb-timeout, or lower --lsrb-max-tokens)"
            )
    lines.append("lsrb: nothing was run or written; the same command without the dry run runs it")
    return lines


@dataclasses.dataclass(frozen=True)
class DryRun:
    """What a dry run prints, and whether its one measured call failed (then the estimate says
    nothing and the exit status says so: a CI job's smoke test must not pass on a down server)."""

    lines: list[str]
    failed: bool = False


def dry_run(run: SuiteRun, selection: set[tuple[str, int]] | None, workers: int) -> DryRun:
    """Plan, measure the first selected attempt's first call, estimate."""
    from pytest_lsrb.adapters import create_adapter

    cases = [c for c in run.cases if selection is None or c.key in selection]
    if not cases:
        return DryRun(["lsrb: dry run: no attempt selected"])
    # No run folder: the server's outage state stays in this process (a failed call would
    # otherwise make the folder to note it in, and a dry run writes nothing).
    adapter = create_adapter(dataclasses.replace(run.adapter_config(), outage_dir=None))
    try:
        adapter.check()
        asked = in_flight(adapter, run.config.concurrency) * max(1, workers)
        slots = served_slots(adapter)
        parallel = max(1, min(asked, slots) if slots else asked)
        first = measure_first_call(run, cases[0], adapter)
    finally:
        adapter.close()
    calls_each = run.task.calls_per_attempt(run.config.values)
    where = f"{cases[0].item_id}#s{cases[0].sample_index}"
    timeout = run.config.values.get("timeout")
    lines = estimate_lines(
        len(cases),
        calls_each,
        first,
        parallel,
        run.config.max_tokens,
        where,
        float(timeout) if isinstance(timeout, (int, float)) else None,
    )
    return DryRun(lines, failed=first is not None and first.error is not None)
