"""LLM-SR (Shojaee et al., 2024): evolve equation skeletons with a model, fit their parameters.

One run (`LLMSRRun`) is one discovery attempt, seeded by the attempt seed:

1. the starting skeleton (linear in every input plus a constant) is fitted and put on every
   island of the experience buffer (`srbench.methods.buffer`);
2. until the budget of model calls is spent: draw a prompt from the buffer (one island, the best
   earlier skeletons worst to best, `srbench.methods.skeleton`), ask the model `samples_per_prompt`
   times, read each answer's skeleton with the safe parser (never executed), fit its parameters
   on the training data (`srbench.fitting.fit`), and register valid ones in the prompt's island;
3. before each prompt, stop when the best training MSE is exactly zero (the reference's test on
   its score), at the run's wall-clock cap, or when the endpoint refused for good (auth/quota).

The best skeleton is the first with the highest score (-training MSE), the starting one included,
so a search that finds nothing better reports the linear fit, as the reference does. The
reference's configs: `llmsr` 10 islands, 4 samples per prompt, 1000 samples; `direct`
(`methods.direct`) is the same search with 1 island, 5 samples per prompt and 5 samples. Like the
reference, no temperature is sent (the provider's default) and max_tokens is 1024.

Every counter, buffer and random generator belongs to the run object (the reference's
class-level sample counter made two runs in one process share a budget), so runs can proceed in
parallel threads. The budget counts model calls, as the paper does (1000 there).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, GenerationResult, Message, SamplingConfig
from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS
from pytest_lsrb.core.excerpts import RECORD_TEXT, excerpt
from pytest_lsrb.core.metrics import finite_float
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.engine.watch import note_best
from pytest_lsrb.equations import EquationError, Program
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.fitting.fit import FitLimits, FitResult, fit_cap_hit, fit_program
from pytest_lsrb.srbench.limits import out_of_tokens, run_limits
from pytest_lsrb.srbench.methods.base import (
    TASK_NAME,
    AnswerLog,
    DiscoveryMethod,
    DiscoveryResult,
    TracePoint,
)
from pytest_lsrb.srbench.methods.buffer import BufferConfig, ExperienceBuffer
from pytest_lsrb.srbench.methods.skeleton import INSTRUCTION, Skeleton, Spec, read_skeleton
from pytest_lsrb.srbench.options import SrOptions
from pytest_lsrb.srbench.records import SrbenchFields

METHOD_NAME: Final = "llmsr"
DEFAULT_BUDGET: Final = 1000  # model calls, as in the paper
REFERENCE_MAX_TOKENS: Final = 1024  # what the reference's sampler asks for


@dataclass(frozen=True)
class LLMSRConfig:
    budget: int = 1000  # model calls (the paper: 1000)
    samples_per_prompt: int = 4  # the reference's samples per prompt
    time_limit_s: float | None = None  # the whole run's wall clock (None: no cap)
    token_budget: int | None = None  # the whole run's reported tokens (None: no cap)
    buffer: BufferConfig = field(default_factory=BufferConfig)
    fit: FitLimits = field(default_factory=FitLimits)
    method: str = METHOD_NAME  # what the records and the mock adapter call this search


@dataclass
class Candidate:
    """A scored skeleton (what the buffer stores)."""

    body: str
    program: Program
    fit: FitResult
    call: int  # the model call that proposed it; 0 for the starting skeleton
    raw_output: str = ""


@dataclass
class LLMSRResult:
    best: Candidate
    spec: Spec
    model_calls: int
    hypotheses: int  # skeletons scored, the starting one included (the search trace length)
    stop_reason: str  # budget | early_stop | time_limit | token_limit | fatal_error
    seconds: float
    generation_latency_ms: float
    candidate_errors: Counter[str] = field(default_factory=Counter)  # parse kinds, nonfinite
    generation_errors: Counter[str] = field(default_factory=Counter)
    fatal: GenerationResult | None = None
    model_valid: int = 0  # model-proposed skeletons with a finite fit
    progress: list[tuple[int, float]] = field(default_factory=list)  # (call, best train NMSE)
    trace: list[TracePoint] = field(default_factory=list)  # each new best (srbench.scoring.progress)
    buffer_resets: int = 0
    fit_cap_hits: int = 0  # fits that reached --lsrb-sr-fit-time-limit
    method: str = METHOD_NAME
    tally: CallTally = field(default_factory=CallTally)  # tokens, finish reasons, served model
    answers: AnswerLog = field(default_factory=AnswerLog)  # what the model wrote (bounded)

    def extra_fields(self) -> SrbenchFields:
        """llmsr's own record fields, besides DiscoveryResult's common ones."""
        return {
            "sr_method": self.method,
            "best_from_model": self.best.call > 0,
            "best_found_at_call": self.best.call,
            "fit_status": self.best.fit.status,
            "fit_method": self.best.fit.method,
            "model_valid_candidates": self.model_valid,
            "candidate_errors": dict(sorted(self.candidate_errors.items())),
            "generation_errors": dict(sorted(self.generation_errors.items())),
            "stop_reason": self.stop_reason,
            "wall_time_s": round(self.seconds, 3),  # a timing field (records.TIMING_FIELDS)
            "best_nmse_by_call": [[c, finite_float(v)] for c, v in self.progress],
            "buffer_resets": self.buffer_resets,
            "fit_time_limit_hits": self.fit_cap_hits,
            **self.answers.record_fields(self.best.call if self.best.call > 0 else None),
            # The result is the starting skeleton (linear in every input) when no answer of the
            # model fitted better: then it says nothing about the model.
            "result_is_starting_skeleton": self.best.call == 0,
        }

    def discovery_result(self) -> DiscoveryResult:
        best = self.best
        error = self.fatal
        result = DiscoveryResult(
            program=best.program,
            params=best.fit.params,
            proposal=self.spec.function(best.body),
            raw_output=best.raw_output,
            train_mse=best.fit.mse,
            train_nmse=best.fit.nmse,
            model_calls=self.model_calls,
            trace_length=self.hypotheses,
            latency_ms=self.generation_latency_ms,
            proposal_error_kind=(
                self.candidate_errors.most_common(1)[0][0]
                if self.model_valid == 0 and self.candidate_errors
                else None
            ),
            extra=self.extra_fields(),
            trace=list(self.trace),
            fallback=best.call == 0,
        )
        fatal = (error.error_kind, error.error_message) if error is not None else None
        result.note_generation_failure(fatal, self.model_calls, self.generation_errors)
        return result

    def record_fields(self) -> SrbenchFields:
        """The attempt-record fields of this run (the task adds the test/OOD metrics)."""
        result = self.discovery_result()
        fields = result.record_fields()
        if result.generation_error_kind is not None:
            fields["generation_error_kind"] = result.generation_error_kind
            fields["generation_error_message"] = result.generation_error_message
        return fields


class LLMSRRun:
    """One LLM-SR discovery run on one problem."""

    def __init__(
        self,
        problem: Problem,
        adapter: Adapter,
        sampling: SamplingConfig,
        seed: int,
        config: LLMSRConfig | None = None,
        task_name: str = "",
    ) -> None:
        self.problem = problem
        self.adapter = adapter
        self.sampling = sampling
        self.seed = int(seed)
        self.config = config or LLMSRConfig()
        self.task_name = task_name
        self.spec = Spec.from_context(problem.context())
        self.rng = np.random.default_rng([self.seed, 0x11A5])
        self.buffer: ExperienceBuffer[Candidate] = ExperienceBuffer(self.config.buffer)
        X, y = problem.columns("train")
        self.X, self.y = X, y
        self._fits: dict[str, FitResult] = {}
        self.calls = 0
        self.hypotheses = 0
        self.model_valid = 0
        self.candidate_errors: Counter[str] = Counter()
        self.generation_errors: Counter[str] = Counter()
        self.latency_ms = 0.0
        self.tally = CallTally()
        self.answers = AnswerLog()
        self.progress: list[tuple[int, float]] = []
        self.trace: list[TracePoint] = []
        self.best: Candidate | None = None
        self.deadline: float | None = None
        self.fit_cap_hits = 0  # fits that reached their own time cap (`fit_cap_hit`)

    # -- the search -----------------------------------------------------------------------------

    def run(self) -> LLMSRResult:
        start = time.perf_counter()
        if self.config.time_limit_s is not None:
            self.deadline = start + self.config.time_limit_s
        initial = read_skeleton(self.spec.function(self.spec.initial_body()), self.spec)
        first = self._score(initial, call=0, raw="")
        self._offer(first)
        if first.fit.valid:
            self.buffer.register(
                first, first.fit.score, self.spec.program_length(initial.body), None, self.rng
            )
        stop, fatal = "budget", None
        while self.calls < self.config.budget:
            # The reference tests its stop rules before each prompt; a prompt's samples all count.
            if self._early_stop():
                stop = "early_stop"
                break
            if self._out_of_time():
                stop = "time_limit"
                break
            if out_of_tokens(self.config.token_budget, self.tally):
                stop = "token_limit"
                break
            island_id, shown = self.buffer.prompt(self.rng)
            request = self._request([c.body for c in shown])
            for _ in range(self.config.samples_per_prompt):
                if self.calls >= self.config.budget or self._out_of_time():
                    break
                if out_of_tokens(self.config.token_budget, self.tally):
                    break
                fatal = self._sample(request, island_id)
                if fatal is not None:
                    break
            if fatal is not None:
                stop = "fatal_error"
                break
        else:
            if self._early_stop():
                stop = "early_stop"
        assert self.best is not None
        return LLMSRResult(
            best=self.best,
            spec=self.spec,
            model_calls=self.calls,
            hypotheses=self.hypotheses,
            stop_reason=stop,
            seconds=time.perf_counter() - start,
            generation_latency_ms=self.latency_ms,
            candidate_errors=self.candidate_errors,
            generation_errors=self.generation_errors,
            fatal=fatal,
            model_valid=self.model_valid,
            progress=self.progress,
            trace=self.trace,
            buffer_resets=self.buffer.resets,
            fit_cap_hits=self.fit_cap_hits,
            method=self.config.method,
            tally=self.tally,
            answers=self.answers,
        )

    def _sample(self, base: GenerationRequest, island_id: int) -> GenerationResult | None:
        """One model call and its candidate; the result when the endpoint refused for good."""
        self.calls += 1
        seed = stable_hash(self.config.method, self.seed, self.calls) & ((1 << SEED_BITS) - 1)
        request = GenerationRequest(
            messages=base.messages, seed=seed, sampling=base.sampling, task=base.task, context=base.context
        )
        result = self.adapter.generate(request)
        self.tally.add(result)
        self.latency_ms += result.latency_ms
        if not result.ok:
            self.generation_errors[str(result.error_kind)] += 1
            self.answers.add(
                self.calls, f"error:{result.error_kind}", result.error_message or "", request.messages
            )
            return result if result.error_kind in FATAL_GENERATION_KINDS else None
        try:
            skeleton = read_skeleton(result.text, self.spec)
        except EquationError as err:
            self.candidate_errors[err.kind] += 1
            self.answers.add(self.calls, err.kind, result.text, request.messages)
            return None
        candidate = self._score(skeleton, call=self.calls, raw=result.text)
        if candidate.fit.valid:
            self.model_valid += 1
            length = self.spec.program_length(skeleton.body)
            self.buffer.register(candidate, candidate.fit.score, length, island_id, self.rng)
            self._offer(candidate)
        else:
            self.candidate_errors[candidate.fit.status] += 1
        status = "valid" if candidate.fit.valid else candidate.fit.status
        self.answers.add(self.calls, status, result.text, request.messages, keep=self.best is candidate)
        return None

    def _score(self, skeleton: Skeleton, call: int, raw: str) -> Candidate:
        """Fit (once per distinct skeleton: a repeated one gets the same parameters and score)."""
        key = skeleton.program.to_expression()
        fit = self._fits.get(key)
        if fit is None:
            fit = fit_program(
                skeleton.program,
                self.X,
                self.y,
                seed=self.seed,
                limits=self.config.fit,
                deadline=self.deadline,
            )
            if fit.status != "time_limit":
                self._fits[key] = fit
            self.fit_cap_hits += fit_cap_hit(fit.status, fit.seconds, self.config.fit.time_limit_s)
        self.hypotheses += 1
        raw = excerpt(raw, RECORD_TEXT)  # every candidate in the buffer keeps its answer
        return Candidate(body=skeleton.body, program=skeleton.program, fit=fit, call=call, raw_output=raw)

    def _offer(self, candidate: Candidate) -> None:
        best = self.best
        if best is None or _better(candidate, best):
            self.best = candidate
            self.progress.append((candidate.call, candidate.fit.nmse))
            note_best("train NMSE", candidate.fit.nmse)  # (the progress line and `lsrb view`)
            self.trace.append(TracePoint(candidate.call, candidate.program, candidate.fit.params))

    def _request(self, bodies: list[str]) -> GenerationRequest:
        prompt = INSTRUCTION + "\n\n" + self.spec.prompt(bodies)
        context: Mapping[str, Any] = {**self.problem.context(), "method": self.config.method}
        return GenerationRequest(
            messages=(Message("user", prompt),),
            seed=self.seed,
            sampling=self.sampling,
            task=self.task_name,
            context=context,
        )

    def _early_stop(self) -> bool:
        """The reference's rule: the best score (-training MSE) is exactly zero."""
        return self.best is not None and self.best.fit.mse == 0.0

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline


def _better(a: Candidate, b: Candidate) -> bool:
    """A strictly higher score (the reference's profiler: on a tie the earlier skeleton stays)."""
    return a.fit.score > b.fit.score


class LLMSRMethod(DiscoveryMethod):
    """`--lsrb-sr-method=llmsr` as a `DiscoveryMethod`: the reference's LLM-SR config
    (10 islands, 4 samples per prompt, 1000 samples)."""

    name = METHOD_NAME
    default_budget = DEFAULT_BUDGET
    samples_per_prompt = 4
    num_islands = 10
    # The reference sends no temperature (the provider's default: llama.cpp and Ollama 0.8,
    # OpenAI 1.0) and max_tokens 1024; the suite's temperature 0 would make a prompt's samples equal.
    sampling_defaults: ClassVar[Mapping[str, Any]] = {"temperature": None, "max_tokens": REFERENCE_MAX_TOKENS}

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
        config = config_from_options(budget, options or {}, self)
        run = LLMSRRun(problem, adapter, sampling, seed, config, task_name=TASK_NAME)
        return run.run().discovery_result()


class DirectMethod(LLMSRMethod):
    """`--lsrb-sr-method=direct`: the reference's Direct (DataBlind) baseline, its config
    `llmdirect_*.yaml`: the LLM-SR searcher with 1 island, 5 samples per prompt and 5 samples.
    The model sees LLM-SR's prompt (the linear starting skeleton as `equation_v0`), never the
    data; the best training MSE among the linear skeleton and the 5 proposals is kept."""

    name = "direct"
    default_budget = 5
    samples_per_prompt = 5
    num_islands = 1


def config_from_options(
    budget: int, options: Mapping[str, Any], method: LLMSRMethod | None = None
) -> LLMSRConfig:
    """The run's settings: the method's reference config plus the run options (`sr_time_limit`,
    `sr_fit_time_limit`, `sr_fit`, `sr_reset_every`)."""
    method = method or LLMSRMethod()
    sr = SrOptions.read(options)
    limits = run_limits(sr)
    return LLMSRConfig(
        budget=max(0, int(budget)),
        samples_per_prompt=method.samples_per_prompt,
        time_limit_s=limits.time_limit_s,
        token_budget=limits.token_budget,
        buffer=BufferConfig(num_islands=method.num_islands, reset_every=sr.reset_every),
        fit=limits.fit,
        method=method.name,
    )
