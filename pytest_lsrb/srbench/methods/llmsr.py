"""LLM-SR (Shojaee et al., 2024): evolve equation skeletons with a model, fit their parameters.

One run (`LLMSRRun`) is one discovery attempt, seeded by the attempt seed:

1. the starting skeleton (linear in every input plus a constant) is fitted and put on every
   island of the experience buffer (`srbench.buffer`);
2. until the budget of model calls is spent: draw a prompt from the buffer (one island, the best
   earlier skeletons worst to best, `srbench.skeleton`), ask the model `samples_per_prompt`
   times, read each answer's skeleton with the safe parser (never executed), fit its parameters
   on the training data by BFGS (`srbench.fit`), and register valid ones in the prompt's island;
3. stop early when the training NMSE is near zero, at the run's wall-clock cap, or when the
   endpoint refuses for good (auth/quota).

Every counter, buffer and random generator belongs to the run object (the reference's
class-level sample counter made two runs in one process share a budget), so runs can proceed in
parallel threads. The budget counts model calls, as the paper does (1000 there).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, GenerationResult, Message, SamplingConfig
from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.equations import EquationError, Program
from pytest_lsrb.srbench.buffer import BufferConfig, ExperienceBuffer
from pytest_lsrb.srbench.fit import FitLimits, FitResult, fit_program
from pytest_lsrb.srbench.limits import run_limits
from pytest_lsrb.srbench.methods.base import TASK_NAME, DiscoveryResult, TracePoint
from pytest_lsrb.srbench.problem import Problem
from pytest_lsrb.srbench.skeleton import INSTRUCTION, Skeleton, Spec, read_skeleton

METHOD_NAME: Final = "llmsr"
DEFAULT_BUDGET: Final = 1000  # model calls, as in the paper
# "Near-zero training error": the run stops once the best skeleton's training NMSE is below this.
EARLY_STOP_NMSE: Final = 1e-10


@dataclass(frozen=True)
class LLMSRConfig:
    budget: int = 1000  # model calls (the paper: 1000)
    samples_per_prompt: int = 4  # the reference's samples per prompt
    time_limit_s: float | None = None  # the whole run's wall clock (None: no cap)
    early_stop_nmse: float = EARLY_STOP_NMSE
    buffer: BufferConfig = field(default_factory=BufferConfig)
    fit: FitLimits = field(default_factory=FitLimits)


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
    stop_reason: str  # budget | early_stop | time_limit | fatal_error
    seconds: float
    generation_latency_ms: float
    candidate_errors: Counter[str] = field(default_factory=Counter)  # parse kinds, nonfinite
    generation_errors: Counter[str] = field(default_factory=Counter)
    fatal: GenerationResult | None = None
    model_valid: int = 0  # model-proposed skeletons with a finite fit
    progress: list[tuple[int, float]] = field(default_factory=list)  # (call, best train NMSE)
    trace: list[TracePoint] = field(default_factory=list)  # each new best (srbench.progress)
    buffer_resets: int = 0
    tally: CallTally = field(default_factory=CallTally)  # tokens, finish reasons, served model

    def extra_fields(self) -> dict[str, Any]:
        """llmsr's own record fields, besides DiscoveryResult's common ones."""
        return {
            "sr_method": METHOD_NAME,
            "best_from_model": self.best.call > 0,
            "best_found_at_call": self.best.call,
            "fit_status": self.best.fit.status,
            "fit_method": self.best.fit.method,
            "model_valid_candidates": self.model_valid,
            "candidate_errors": dict(sorted(self.candidate_errors.items())),
            "generation_errors": dict(sorted(self.generation_errors.items())),
            "stop_reason": self.stop_reason,
            "wall_time_s": round(self.seconds, 3),  # a timing field (records.TIMING_FIELDS)
            "best_nmse_by_call": [[c, _finite(v)] for c, v in self.progress],
            "buffer_resets": self.buffer_resets,
            **self.tally.record_fields(),
        }

    def discovery_result(self) -> DiscoveryResult:
        best = self.best
        answered = self.model_calls > sum(self.generation_errors.values())
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
        )
        if error is not None:
            result.generation_error_kind = error.error_kind
            result.generation_error_message = error.error_message
        elif self.model_calls and not answered:
            kind = self.generation_errors.most_common(1)[0][0]
            result.generation_error_kind = kind
            result.generation_error_message = f"every one of {self.model_calls} model call(s) failed ({kind})"
        return result

    def record_fields(self) -> dict[str, Any]:
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
        self.progress: list[tuple[int, float]] = []
        self.trace: list[TracePoint] = []
        self.best: Candidate | None = None
        self.deadline: float | None = None

    # -- the search -----------------------------------------------------------------------------

    def run(self) -> LLMSRResult:
        start = time.perf_counter()
        if self.config.time_limit_s is not None:
            self.deadline = start + self.config.time_limit_s
        initial = read_skeleton(self.spec.function(self.spec.initial_body()), self.spec)
        first = self._score(initial, call=0, raw="")
        self._offer(first)
        if first.fit.valid:
            self.buffer.register(first, first.fit.score, initial.length, None, self.rng)
        stop, fatal = "budget", None
        while self.calls < self.config.budget:
            if self._early_stop():
                stop = "early_stop"
                break
            if self._out_of_time():
                stop = "time_limit"
                break
            island_id, shown = self.buffer.prompt(self.rng)
            request = self._request([c.body for c in shown])
            for _ in range(self.config.samples_per_prompt):
                if self.calls >= self.config.budget or self._out_of_time():
                    break
                fatal = self._sample(request, island_id)
                if fatal is not None or self._early_stop():
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
            tally=self.tally,
        )

    def _sample(self, base: GenerationRequest, island_id: int) -> GenerationResult | None:
        """One model call and its candidate; the result when the endpoint refused for good."""
        self.calls += 1
        seed = stable_hash(METHOD_NAME, self.seed, self.calls) & ((1 << SEED_BITS) - 1)
        request = GenerationRequest(
            messages=base.messages, seed=seed, sampling=base.sampling, task=base.task, context=base.context
        )
        result = self.adapter.generate(request)
        self.tally.add(result)
        self.latency_ms += result.latency_ms
        if not result.ok:
            self.generation_errors[str(result.error_kind)] += 1
            return result if result.error_kind in FATAL_GENERATION_KINDS else None
        try:
            skeleton = read_skeleton(result.text, self.spec)
        except EquationError as err:
            self.candidate_errors[err.kind] += 1
            return None
        candidate = self._score(skeleton, call=self.calls, raw=result.text)
        if candidate.fit.valid:
            self.model_valid += 1
            self.buffer.register(candidate, candidate.fit.score, skeleton.length, island_id, self.rng)
            self._offer(candidate)
        else:
            self.candidate_errors[candidate.fit.status] += 1
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
        self.hypotheses += 1
        return Candidate(body=skeleton.body, program=skeleton.program, fit=fit, call=call, raw_output=raw)

    def _offer(self, candidate: Candidate) -> None:
        best = self.best
        if best is None or _better(candidate, best):
            self.best = candidate
            self.progress.append((candidate.call, candidate.fit.nmse))
            self.trace.append(TracePoint(candidate.call, candidate.program, candidate.fit.params))

    def _request(self, bodies: list[str]) -> GenerationRequest:
        prompt = INSTRUCTION + "\n\n" + self.spec.prompt(bodies)
        context: Mapping[str, Any] = {**self.problem.context(), "method": METHOD_NAME, "skeletons": bodies}
        return GenerationRequest(
            messages=(Message("user", prompt),),
            seed=self.seed,
            sampling=self.sampling,
            task=self.task_name,
            context=context,
        )

    def _early_stop(self) -> bool:
        return self.best is not None and self.best.fit.nmse <= self.config.early_stop_nmse

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline


def _better(a: Candidate, b: Candidate) -> bool:
    """Higher score; on a tie the shorter skeleton (the reference's preference)."""
    if a.fit.score != b.fit.score:
        return a.fit.score > b.fit.score
    return len(a.body) < len(b.body)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


class LLMSRMethod:
    """`--lsrb-sr-method=llmsr` behind the DiscoveryMethod Protocol."""

    name = METHOD_NAME
    default_budget = DEFAULT_BUDGET
    # The reference samples each prompt 4 times at the provider's default temperature (it sets
    # none); 0.8 is Ollama's and llama.cpp's default. At 0 the 4 samples would be identical.
    default_temperature = 0.8

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
        config = config_from_options(budget, options or {})
        run = LLMSRRun(problem, adapter, sampling, seed, config, task_name=TASK_NAME)
        return run.run().discovery_result()


def config_from_options(budget: int, options: Mapping[str, Any]) -> LLMSRConfig:
    """The run's settings from the run options (`sr_time_limit`, `sr_fit_time_limit`)."""
    limits = run_limits(options)
    return LLMSRConfig(budget=max(0, int(budget)), time_limit_s=limits.time_limit_s, fit=limits.fit)
