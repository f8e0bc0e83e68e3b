"""SGA (Ma et al. 2024, "LLM and simulation as bilevel optimizers"), as LLM-SRBench runs it.

Outer loop, the model: each iteration shows, in one multi-turn conversation, the best hypotheses
so far (at most `batch_size`, worst to best) — each as an assistant turn with its plan and code,
followed by a user turn with its fitted parameters and loss curve (or its error) — and asks for
a better one; `num_exploit` samples at temperature 0.5 and `num_explore` at 1.0. Inner loop,
the data: each hypothesis's parameters are fitted by Adam (`srbench.fitting.adam`, exact gradients).
The first hypothesis is SGA's primitive: linear in every input plus a constant, parameters at 1.

SGA asks for a PyTorch module, code we must not run: here the code template is a numpy function
of the inputs and a `params` array plus an `INITIAL_PARAMS` list (SGA's parameter defaults,
which the model is told to update from earlier fits). The code is read with `ast` and the safe
equation parser; nothing is executed. Prompts otherwise follow SGA's `prompts/sr` and `base`
texts (system, context, task, format, iteration, feedback, error).

Reference settings (SGA's `BaseLLMConfig`, used unchanged by LLM-SRBench): 5 iterations, batch
size 5, 4 exploit samples at T=0.5 and 12 explore samples at T=1.0 — 80 model calls, the default
budget here. The budget counts model calls (each sample is one call; SGA asks OpenAI for n=4 in
one request).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, Message, SamplingConfig
from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS
from pytest_lsrb.core.excerpts import PROMPT_TEXT, RECORD_TEXT, excerpt
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.engine.watch import note_best
from pytest_lsrb.equations import (
    EquationError,
    Program,
    alias_keywords,
    keyword_aliases,
    parse_function,
    parse_python,
)
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.fitting.adam import AdamFit, fit_adam
from pytest_lsrb.srbench.fitting.objective import FIT_TIME_LIMIT_S, fit_cap_hit
from pytest_lsrb.srbench.limits import out_of_tokens, run_limits
from pytest_lsrb.srbench.methods.base import TASK_NAME, DiscoveryMethod, DiscoveryResult, TracePoint
from pytest_lsrb.srbench.methods.baselines import mock_sga_answer

METHOD_NAME: Final = "sga"
MAX_PARAMS: Final = 10

SYSTEM: Final = (
    "You are an intelligent AI assistant for coding and scientific equation discovery.\n"
    "You are tasked with discovering mathematical function structures for scientific systems. \n"
    "Follow the user's requirements carefully and make sure you understand them.\n"
    "Keep your answers short and to the point.\n"
    "Do not provide any information that is not requested.\n"
    "Always document your code as comments to explain the reason behind them.\n"
    "Use Markdown to format your solution.\n"
    "You are very familiar with Python and NumPy.\n"
    "Do not use any external libraries other than the libraries used in the examples."
)
CONTEXT: Final = (
    "### Context\n\nThe objective is to construct a mathematical expression that accurately maps input "
    "variables to a target output based on a provided dataset. The task involves filling in a code "
    "block to define a symbolic expression or model that minimizes the difference between predicted "
    "and ground-truth outputs. The code block defines trainable parameters with their initial values "
    "and a function for the symbolic structure of the expression. Feedback is provided in the form of "
    "metrics measuring the error between the model’s predictions and the ground-truth values, as well "
    "as guidance on structural improvements to the symbolic expression.\n\n{input_output}"
)
TASK: Final = (
    "### Task\n\nLook at the following iterations as examples, analyze them, and generate a better "
    "solution upon them."
)
FORMAT: Final = (
    "### Code Requirements\n\n"
    "1. The programming language is always python.\n"
    "2. The only library allowed is NumPy (`np.exp`, `np.cos`, `np.sqrt`, ...). Write one function and "
    "one list; no classes, loops or other statements.\n"
    "3. Separate the code into parameters that can be tuned with differentiable optimization and the "
    "symbolic expression: `INITIAL_PARAMS` lists the initial values of `params[0]`, `params[1]`, ... "
    f"(at most {MAX_PARAMS}), and the function computes the output from the inputs and `params`.\n"
    "4. The proposed code must strictly follow the structure and function signatures below:\n\n"
    "```python\n{code}\n```\n\n"
    "### Solution Requirements\n\n"
    "1. Analyze step-by-step what the potential problem is in the previous iterations based on the "
    "feedback. Think about why the results from previous iterations mismatched with the ground truth. "
    "Do not give advice about how to optimize. Focus on the formulation of the scientific equation. "
    'Start this section with "### Analysis". Analyze all iterations individually, and start the '
    'subsection for each iteration with "#### Iteration N", where N stands for the index. Remember to '
    "analyze every iteration in the history.\n"
    "2. Think step-by-step what you need to do in this iteration. Think about what is needed to improve "
    "performance. If the analysis suggests specific functional forms or constraints, think about how "
    "these will be incorporated into the symbolic equation. Think about how to separate your algorithm "
    "into a continuous parameter part and a symbolic expression model part. Describe your plan in "
    "pseudo-code, written out in great detail. Remember to update the default values of the trainable "
    'parameters based on previous optimizations. Start this section with "### Step-by-Step Plan".\n'
    '3. Output the code in a single code block "```python ... ```" with detailed comments in the code '
    "block. Do not add any trailing comments before or after the code block. Start this section with "
    '"### Code".'
)
_SECTIONS: Final = re.compile(
    r"^[\s\S]*?(### Analysis\n[\s\S]*?)\n(### Step-by-Step Plan\n[\s\S]*?)\n(### Code\n[\s\S]*?)$"
)
_PYTHON: Final = re.compile(r"```python\n([\s\S]*?\n)```")
NO_CODE: Final = "No code generated or generated solution violated format requirements."


@dataclass(frozen=True)
class SGAConfig:
    budget: int = 80
    batch_size: int = 5
    num_exploit: int = 4
    num_explore: int = 12
    temperature_exploit: float = 0.5
    temperature_explore: float = 1.0
    time_limit_s: float | None = None
    token_budget: int | None = None  # reported tokens of the run's calls (None: no cap)
    fit_time_limit_s: float = FIT_TIME_LIMIT_S


@dataclass
class Hypothesis:
    content: str  # what the conversation replays as the assistant turn (at most PROMPT_TEXT)
    feedback: str  # the user turn after it (feedback or error, at most PROMPT_TEXT)
    fitness: float = math.inf  # lowest logged training MSE
    program: Program | None = None
    params: tuple[float, ...] = ()
    call: int = 0
    code: str = ""


def function_code(problem: Problem, body: str, initial: list[float]) -> str:
    """SGA's code template in the safe language: INITIAL_PARAMS and `def equation(...)`."""
    args = ", ".join(f"{v}: np.ndarray" for v in problem.inputs)
    docs = "\n".join(
        f"        {n}: {d}." for n, d in zip(problem.inputs, problem.symbol_descs[1:], strict=True)
    )
    values = ", ".join(repr(float(v)) for v in initial)
    return (
        "import numpy as np\n\n"
        "# Trainable parameters: params[i] starts at INITIAL_PARAMS[i].\n"
        f"INITIAL_PARAMS = [{values}]\n\n\n"
        f"def equation({args}, params: np.ndarray) -> np.ndarray:\n"
        f'    """ Mathematical function for {problem.symbol_descs[0]}\n\n'
        f"    Args:\n{docs}\n        params: the trainable parameters.\n\n"
        f"    Return:\n        {problem.output}: {problem.symbol_descs[0]}.\n"
        f'    """\n{body}'
    )


def read_code(text: str, problem: Problem) -> tuple[Program, list[float]]:
    """The equation and initial parameter values in a code block, read with `ast` (never run).
    Inputs named like Python keywords (`lambda`) are read under their aliases."""
    text = alias_keywords(text, keyword_aliases(problem.inputs))
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise EquationError("parse_error", f"the code does not parse: {type(err).__name__}") from None
    initial: list[float] = []
    func: ast.FunctionDef | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and func is None:
            func = stmt
        elif isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [
            "INITIAL_PARAMS"
        ]:
            initial = _numbers(stmt.value)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else [stmt.module or ""]
            if any(n.split(".")[0] not in ("numpy", "math") for n in names):
                raise EquationError("forbidden_construct", "only numpy and math may be imported")
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            raise EquationError("forbidden_construct", f"a top-level {type(stmt).__name__} statement")
    if func is None:
        raise EquationError("bad_signature", "no function definition found")
    source = ast.get_source_segment(text, func) or ""
    program = parse_function(source, problem.inputs, max_params=MAX_PARAMS)
    return program, initial


def _numbers(node: ast.expr) -> list[float]:
    if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) > MAX_PARAMS:
        raise EquationError("bad_constant", "INITIAL_PARAMS must be a list of at most 10 numbers")
    out = []
    for elt in node.elts:
        sign = 1.0
        if isinstance(elt, ast.UnaryOp) and isinstance(elt.op, (ast.USub, ast.UAdd)):
            sign = -1.0 if isinstance(elt.op, ast.USub) else 1.0
            elt = elt.operand
        if (
            not isinstance(elt, ast.Constant)
            or isinstance(elt.value, bool)
            or not isinstance(elt.value, (int, float))
        ):
            raise EquationError("bad_constant", "INITIAL_PARAMS must be a list of numbers")
        value = sign * float(elt.value)
        if not math.isfinite(value):
            raise EquationError("bad_constant", "INITIAL_PARAMS holds a non-finite number")
        out.append(value)
    return out


def feedback(problem: Problem, fit: AdamFit) -> str:
    """SGA's `get_perf_feedback`: the optimised parameters and the loss curve."""
    out = problem.output
    if fit.params:
        lines = ["#### Optimized Physical parameter", ""]
        lines += [f"- params[{i}]: (Best: {v:.2e})" for i, v in enumerate(fit.params)]
        lines += ["#### Loss training curves (versus iteration)", ""]
        curve = ", ".join(f"{v:.4e}" for v in fit.losses)
        lines.append(f"- {out} (Key loss): [{curve}] (Best: {fit.loss:.4e})")
    else:
        lines = ["#### Evaluation loss (since it is a non-parametric model)", ""]
        lines.append(f"- {out} (Key loss): [{fit.losses[-1]:.4e}]")
    return "\n".join(lines)


class SGARun:
    """One SGA discovery run on one problem."""

    def __init__(
        self, problem: Problem, adapter: Adapter, sampling: SamplingConfig, seed: int, config: SGAConfig
    ) -> None:
        self.problem, self.adapter, self.sampling = problem, adapter, sampling
        self.seed, self.config = int(seed), config
        self.X, self.y = problem.columns("train")
        self.population: list[Hypothesis] = []
        self.calls = 0
        self.latency_ms = 0.0
        self.tally = CallTally()  # tokens, finish reasons, served model
        self.candidate_errors: Counter[str] = Counter()
        self.generation_errors: Counter[str] = Counter()
        self.fatal: tuple[str, str] | None = None
        self.trace: list[TracePoint] = []
        self.best: Hypothesis | None = None
        self.deadline: float | None = None
        self.fit_cap_hits = 0  # fits that reached their own time cap (`fit_cap_hit`)
        descs = problem.symbol_descs
        given = descs[-1] if len(descs) <= 2 else ", ".join(descs[1:-1]) + ", and " + descs[-1]
        context = CONTEXT.format(
            input_output=f"The expression represents {descs[0]}, given data on {given}.\n"
        )
        self.prologue = f"## Problem Setup\n\n{context}\n\n\n\n{TASK}"
        template = function_code(problem, "    return " + problem.output, [1.0])
        self.epilogue = "## Format Requirements\n\n" + FORMAT.format(code=template)

    def _score(self, program: Program, initial: list[float]) -> AdamFit:
        start = time.perf_counter()
        stop = start + self.config.fit_time_limit_s
        if self.deadline is not None:
            stop = min(stop, self.deadline)
        fit = fit_adam(program, self.X, self.y, initial, deadline=stop)
        if fit_cap_hit(fit.status, time.perf_counter() - start, self.config.fit_time_limit_s):
            # one rule with LLM-SR's evaluator (`fitting.fit.capped_invalid`): a candidate whose fit
            # reached its own cap is invalid (SGA's reference has no such cap to follow)
            self.fit_cap_hits += 1
            return replace(fit, loss=math.inf)
        return fit

    def _add(self, hyp: Hypothesis) -> None:
        self.population.append(hyp)
        if hyp.program is not None and (self.best is None or hyp.fitness < self.best.fitness):
            self.best = hyp
            self.trace.append(TracePoint(hyp.call, hyp.program, hyp.params))
            note_best("train MSE", hyp.fitness)  # (the progress line and `lsrb view`)

    def primitive(self) -> Hypothesis:
        inputs = self.problem.inputs
        terms = " + ".join(f"params[{i + 1}] * {v}" for i, v in enumerate(inputs))
        body = f"    {self.problem.output} = params[0] + {terms}\n    return {self.problem.output}\n"
        code = function_code(self.problem, body, [1.0] * (len(inputs) + 1))
        program, initial = read_code(code, self.problem)
        fit = self._score(program, initial)
        return Hypothesis(
            content=f"### Code\n\n```python\n{code}```",
            feedback=feedback(self.problem, fit),
            fitness=fit.loss,
            program=program,
            params=fit.params,
            code=code,
        )

    def shown(self) -> list[Hypothesis]:
        """SGA's `Population.sample`: the best `batch_size` (all, with failures, when fewer succeeded)."""
        ok = [h for h in self.population if math.isfinite(h.fitness)]
        pool = ok if len(ok) >= self.config.batch_size else list(self.population)
        return sorted(pool, key=lambda h: h.fitness)[: self.config.batch_size]

    def messages(self, shown: list[Hypothesis]) -> tuple[Message, ...]:
        msgs = [Message("system", SYSTEM), Message("user", self.prologue)]
        for i, hyp in enumerate(reversed(shown)):
            msgs.append(Message("assistant", f"## Iteration {i + 1}\n\n{hyp.content}"))
            if math.isfinite(hyp.fitness):
                msgs.append(Message("user", f"### Feedback\n\n{hyp.feedback}"))
            else:
                msgs.append(
                    Message(
                        "user",
                        "The program was aborted due to an error or instability:\n\n"
                        f"{hyp.feedback}\n\nTry to fix it by analyzing the information above.",
                    )
                )
        msgs.append(Message("user", self.epilogue))
        msgs.append(Message("assistant", f"## Iteration {len(shown) + 1}"))
        return tuple(msgs)

    def sample(self, msgs: tuple[Message, ...], temperature: float, shown: list[Hypothesis]) -> None:
        self.calls += 1
        request = GenerationRequest(
            messages=msgs,
            seed=stable_hash(METHOD_NAME, self.seed, self.calls) & ((1 << SEED_BITS) - 1),
            sampling=dataclasses.replace(self.sampling, temperature=temperature),
            task=TASK_NAME,
            context={
                **self.problem.context(),
                "method": METHOD_NAME,
                "hypotheses": [
                    {"code": h.code, "params": list(h.params), "fitness": h.fitness} for h in reversed(shown)
                ],
                "temperature": temperature,
            },
        )
        result = self.adapter.generate(request)
        self.tally.add(result)
        self.latency_ms += result.latency_ms
        if not result.ok:
            self.generation_errors[str(result.error_kind)] += 1
            if result.error_kind in FATAL_GENERATION_KINDS:
                self.fatal = (str(result.error_kind), str(result.error_message))
            return
        self._add(self.offspring(result.text))

    def offspring(self, text: str) -> Hypothesis:
        """The answer as a hypothesis: read from the whole answer, kept (and replayed in later
        prompts) as excerpts (`core.excerpts`)."""
        hyp = self._read_offspring(text)
        hyp.content = excerpt(hyp.content, PROMPT_TEXT)
        hyp.feedback = excerpt(hyp.feedback, PROMPT_TEXT)
        hyp.code = excerpt(hyp.code, RECORD_TEXT)
        return hyp

    def _read_offspring(self, text: str) -> Hypothesis:
        found = _SECTIONS.findall(text)
        plan, code_raw = (found[0][1], found[0][2]) if found else ("", "")
        blocks = _PYTHON.findall(code_raw)
        if not blocks:
            self.candidate_errors["no_code"] += 1
            return Hypothesis(content=text, feedback=NO_CODE, call=self.calls)
        code = blocks[-1]
        content = f"{plan}\n\n{code_raw}"
        try:
            program, initial = read_code(code, self.problem)
        except EquationError as err:
            self.candidate_errors[err.kind] += 1
            return Hypothesis(content=content, feedback=f"{err.kind}: {err}", call=self.calls, code=code)
        fit = self._score(program, initial)
        if not fit.valid:
            self.candidate_errors["nonfinite"] += 1
            return Hypothesis(content=content, feedback="the loss is nan", call=self.calls, code=code)
        return Hypothesis(
            content, feedback(self.problem, fit), fit.loss, program, fit.params, self.calls, code
        )

    def run(self) -> DiscoveryResult:
        start = time.perf_counter()
        cfg = self.config
        if cfg.time_limit_s is not None:
            self.deadline = start + cfg.time_limit_s
        self._add(self.primitive())
        stop = "budget"
        while self.calls < cfg.budget and self.fatal is None:
            shown = self.shown()
            msgs = self.messages(shown)
            plan = [cfg.temperature_exploit] * cfg.num_exploit + [cfg.temperature_explore] * cfg.num_explore
            for temperature in plan:
                if self.calls >= cfg.budget or self.fatal is not None or self._out_of_time():
                    break
                if out_of_tokens(cfg.token_budget, self.tally):
                    break
                self.sample(msgs, temperature, shown)
            if self._out_of_time():
                stop = "time_limit"
                break
            if out_of_tokens(cfg.token_budget, self.tally):
                stop = "token_limit"
                break
        if self.fatal is not None:
            stop = "fatal_error"
        return self.result(stop, time.perf_counter() - start)

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def result(self, stop: str, seconds: float) -> DiscoveryResult:
        best = self.best
        assert best is not None and best.program is not None
        var = float(self.y.var())
        usable = sum(1 for h in self.population[1:] if h.program is not None)
        out = DiscoveryResult(
            program=best.program,
            params=best.params,
            proposal=best.code,
            raw_output=best.content,
            train_mse=best.fitness,
            train_nmse=best.fitness / var if var > 0 else math.inf,
            model_calls=self.calls,
            trace_length=len(self.population),
            latency_ms=self.latency_ms,
            proposal_error_kind=(
                self.candidate_errors.most_common(1)[0][0] if usable == 0 and self.candidate_errors else None
            ),
            trace=list(self.trace),
            fallback=best.call == 0,  # SGA's primitive stood
            extra={
                "sr_method": METHOD_NAME,
                "stop_reason": stop,
                "best_from_model": best.call > 0,
                "best_found_at_call": best.call,
                "model_valid_candidates": usable,
                "candidate_errors": dict(sorted(self.candidate_errors.items())),
                "generation_errors": dict(sorted(self.generation_errors.items())),
                "sga_temperatures": [self.config.temperature_exploit, self.config.temperature_explore],
                "fit_time_limit_hits": self.fit_cap_hits,
            },
        )
        out.extra["wall_time_s"] = round(seconds, 3)
        out.note_generation_failure(self.fatal, self.calls, self.generation_errors)
        return out


class SGAMethod(DiscoveryMethod):
    """`--lsrb-sr-method=sga`: SGA's bilevel search as a `DiscoveryMethod`."""

    name = METHOD_NAME
    default_budget = SGAConfig.budget
    # SGA sets its own temperatures per sample (0.5 exploit, 1.0 explore; recorded per attempt) and
    # asks for analysis, plan and code: 4096 tokens, its Anthropic setting (OpenAI: none sent).
    sampling_defaults: ClassVar[Mapping[str, Any]] = {"max_tokens": 4096}

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """SGA's own baseline: analysis, plan and a PyTorch-style module, as its prompt asks."""
        return mock_sga_answer(context, seed)

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
        limits = run_limits(options or {})
        config = SGAConfig(
            budget=max(0, int(budget)),
            time_limit_s=limits.time_limit_s,
            token_budget=limits.token_budget,
            fit_time_limit_s=limits.fit.time_limit_s,
        )
        return SGARun(problem, adapter, sampling, seed, config).run()
