"""The discovery-method plug point: one base class (`DiscoveryMethod`), one module per method, a registry.

A method runs one whole discovery attempt on one problem: it may call the model many times
(within `budget` model calls) and returns the best equation with its fitted parameters. The task
evaluates that equation on the test and OOD data; methods never see the test data.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from pytest_lsrb.adapters.base import Adapter, Message, SamplingConfig
from pytest_lsrb.core.errors import MODEL_DOMAINS, generation_domain
from pytest_lsrb.core.excerpts import RECORD_TEXT, cut_length, excerpt
from pytest_lsrb.core.metrics import finite_float
from pytest_lsrb.engine.outcomes import unanswered_kind
from pytest_lsrb.equations import Program
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.mock.baseline import mock_equation_answer
from pytest_lsrb.srbench.option_table import TASK_NAME as TASK_NAME  # what GenerationRequest.task says
from pytest_lsrb.srbench.records import SrbenchFields


@dataclass(frozen=True)
class TracePoint:
    """The search's best hypothesis changed: at model call `call` (0: before any call) it became
    `program` with `params`. The task scores each on the test data after the search
    (`srbench.scoring.progress`), so the method never sees test data."""

    call: int
    program: Program
    params: tuple[float, ...] = ()


@dataclass
class DiscoveryResult:
    """What one discovery run found. `program` is None when no proposal was usable."""

    program: Program | None
    params: tuple[float, ...] = ()
    proposal: str = ""  # the best equation as the model wrote it (expression or function)
    raw_output: str = ""  # the model output it came from
    train_mse: float = math.inf
    train_nmse: float = math.inf
    model_calls: int = 0
    trace_length: int = 0  # hypotheses scored during the search
    latency_ms: float = 0.0  # model time, summed over the run's calls
    generation_error_kind: str | None = None  # set when no call produced an answer
    generation_error_message: str | None = None
    proposal_error_kind: str | None = None  # why the last unusable proposal was refused
    extra: SrbenchFields = field(default_factory=SrbenchFields)  # the method's own record fields
    # The result owes nothing to the model's answers: the method's own fallback (LLM-SR's and
    # SGA's starting skeleton stood; LaSR: no answer of the model entered the search). It is
    # scored all the same, as the reference scores what a method returns (`fallback_result`).
    # None: the method cannot tell (LaSR's PySR backend calls the model from Julia, out of sight).
    fallback: bool | None = False
    trace: list[TracePoint] = field(default_factory=list)  # each new best, in call order

    @property
    def found(self) -> bool:
        return self.program is not None and math.isfinite(self.train_mse)

    @property
    def the_models(self) -> bool:
        """Whether the result is an equation the model gave: found, and not a search's starting
        skeleton left standing because the model proposed no valid candidate of its own (LLM-SR,
        LaSR, SGA count those in `model_valid_candidates`)."""
        return self.found and bool(self.extra.get("model_valid_candidates", 1))

    def equation(self) -> str:
        """The best equation with its fitted parameters written in."""
        if self.program is None:
            return ""
        return self.program.to_expression(self.params if self.program.n_params else None)

    def note_generation_failure(
        self, fatal: tuple[str | None, str | None] | None, calls: int, errors: Mapping[str, int]
    ) -> None:
        """Set the attempt's generation error from its `calls` model calls, `errors` the failed ones
        by kind. When the model never answered (`outcomes.unanswered_kind`) it is infrastructure,
        whatever fallback the search holds (the message is the `fatal` call's when the search
        stopped on one: quota, auth). Else only a result with nothing to score, every call failed,
        carries the model's own commonest kind (an empty answer); an attempt with some answers is
        scored on what the method returned."""
        kind = unanswered_kind(calls, errors)
        if kind is not None:
            self.generation_error_kind = kind
            self.generation_error_message = (
                fatal[1]
                if fatal is not None and fatal[0] == kind and fatal[1]
                else f"the model never answered: every one of {calls} model call(s) failed ({kind})"
            )
        elif not self.found and calls and calls <= sum(errors.values()):
            own = {k: n for k, n in errors.items() if generation_domain(k) in MODEL_DOMAINS}
            kind = max(own, key=lambda k: own[k])
            self.generation_error_kind = kind
            self.generation_error_message = f"every one of {calls} model call(s) failed ({kind})"

    def record_fields(self) -> SrbenchFields:
        # the model's own words, bounded (`core.excerpts`), with their whole lengths when cut
        fields: SrbenchFields = {"proposal": excerpt(self.proposal, RECORD_TEXT)}
        if (cut := cut_length(self.proposal)) is not None:
            fields["proposal_chars"] = cut
        fields["raw_output"] = excerpt(self.raw_output, RECORD_TEXT)
        if (cut := cut_length(self.raw_output)) is not None:
            fields["raw_output_chars"] = cut
        return {
            **fields,
            "equation": self.equation(),
            "skeleton": self.program.to_expression() if self.program is not None else "",
            "params": [float(p) for p in self.params],
            "train_mse": finite_float(self.train_mse),
            "train_nmse": finite_float(self.train_nmse),
            # (model calls, time and tokens are the harness's count: `engine.calls`)
            "search_trace_length": self.trace_length,
            "proposal_error_kind": self.proposal_error_kind,
            "fallback_result": None if self.fallback is None else self.fallback and self.found,
            **self.extra,
        }


class DiscoveryMethod(ABC):
    """An llm_srbench discovery method: subclass it, set `name` (and `default_budget`,
    `sampling_defaults` where the defaults do not fit) and write `discover`; `mock_answer` has a
    default here, so an editor lists them all. The engine calls members, never probes.

    `discover` is handed the attempt's adapter (`engine.calls`): the harness counts its calls,
    time and tokens for the record and refuses a call past `budget` (a failed result of kind
    `call_limit`), whatever the method counts itself."""

    name: ClassVar[str]
    default_budget: ClassVar[int] = 1  # model calls when --lsrb-sr-budget is not given
    # Run settings the method needs unless the command line gives them, e.g. the reference's
    # {"temperature": None, "max_tokens": 1024}: no temperature sent (the provider's default).
    sampling_defaults: ClassVar[Mapping[str, Any]] = {}

    @abstractmethod
    def discover(
        self,
        problem: Problem,
        adapter: Adapter,
        sampling: SamplingConfig,
        seed: int,
        budget: int,
        *,
        options: Mapping[str, Any] | None = None,
    ) -> DiscoveryResult:
        """One discovery run, deterministic in `seed` (given a deterministic adapter). Never
        raises for model failures: they come back as `generation_error_kind`."""

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """What `--lsrb-adapter mock` answers this method's calls (`context`: the request's,
        with the prompt under `prompt`): a deterministic local baseline, so a run without a model
        exercises the method end to end. By default the general one (`srbench.mock.baseline`):
        an expression or an LLM-SR function of the problem's variables, as the prompt asks."""
        return mock_equation_answer(context, seed)


ANSWER_LOG_CALLS: Final = 8  # model answers kept per attempt (the first ones, plus the best's)
ANSWER_LOG_TEXT: Final = 2000  # characters kept of each


class AnswerLog:
    """A bounded record of what the model was asked and wrote during one discovery run.

    Keeps the first `ANSWER_LOG_CALLS` answers and, whenever it is later, the answer the result
    came from, each cut to `ANSWER_LOG_TEXT` characters, with the outcome of reading it (`valid`,
    a parse error kind, a fit status, or `error:<kind>` for a failed call), so the report can show
    what the model wrote even when the result is not one of its answers.
    """

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.prompts: dict[int, tuple[Message, ...]] = {}

    def add(
        self, call: int, status: str, text: str, messages: tuple[Message, ...], keep: bool = False
    ) -> None:
        if len(self.entries) >= ANSWER_LOG_CALLS and not keep:
            return
        if keep and len(self.entries) > ANSWER_LOG_CALLS:
            dropped = self.entries.pop()  # an earlier kept best: only the current one matters
            self.prompts.pop(int(dropped["call"]), None)
        self.entries.append({"call": call, "status": status, "answer": text[:ANSWER_LOG_TEXT]})
        self.prompts[call] = messages

    def record_fields(self, best_call: int | None) -> SrbenchFields:
        """`model_answers` and `prompt` (the best answer's prompt, else the first call's)."""
        if not self.entries:
            return {"model_answers": []}
        call = best_call if best_call in self.prompts else int(self.entries[0]["call"])
        prompt = [{"role": m.role, "content": excerpt(m.content, RECORD_TEXT)} for m in self.prompts[call]]
        return {"model_answers": list(self.entries), "prompt": prompt}
