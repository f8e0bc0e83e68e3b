"""`direct-expression`: a data-blind baseline that is not the reference's. The model sees the
problem's description and variables (never the data), through the suite's prompt templates
(`prompt.md`, `system.md`), and answers with a one-line expression; `--lsrb-sr-budget` proposals
(default 4) are fitted on the training data and the best training fit is kept; no fallback (a run
whose proposals all fail reports no equation). The reference's Direct is `direct`
(`methods.direct`): LLM-SR's prompt, 5 samples, the linear skeleton as fallback.

Answers may be a one-line expression (`y = c0*x + c1*np.sin(v)`, any unknown names are
parameters) or an LLM-SR-style Python function with a `params` array; both are read with the
safe equation parser, never executed.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, Message, SamplingConfig
from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.engine.suite import render
from pytest_lsrb.engine.watch import note_best
from pytest_lsrb.equations import EquationError, Program, parse_equation
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.fitting.fit import fit_cap_hit, fit_program
from pytest_lsrb.srbench.limits import out_of_tokens, run_limits
from pytest_lsrb.srbench.methods.base import (
    TASK_NAME,
    AnswerLog,
    DiscoveryMethod,
    DiscoveryResult,
    TracePoint,
)
from pytest_lsrb.srbench.methods.skeleton import Spec, read_skeleton

METHOD_NAME: Final = "direct-expression"
DEFAULT_BUDGET: Final = 4

SYSTEM_PROMPT: Final = (
    "You are a scientist who proposes equations that explain observations. Answer with one "
    "equation in Python/numpy syntax."
)
_FENCE = re.compile(r"```[ \t]*[a-zA-Z]*[ \t]*\n(.*?)(?:```|\Z)", re.S)


def prompt_fields(problem: Problem) -> dict[str, str]:
    """What the suite's prompt templates may use: {{desc}}, {{output}}, {{output_desc}},
    {{inputs}} (names with descriptions), {{input_names}}, {{name}}."""
    ctx = problem.context()
    pairs = zip(ctx["inputs"], ctx["input_descs"], strict=True)
    return {
        "desc": ctx["desc"] or "Find the equation behind a scientific relationship.",
        "output": ctx["output"],
        "output_desc": ctx["output_desc"],
        "inputs": ", ".join(f"{name} ({desc})" for name, desc in pairs),
        "input_names": ", ".join(ctx["inputs"]),
        "name": ctx["name"],
    }


def build_messages(problem: Problem, options: Mapping[str, Any]) -> tuple[Message, ...]:
    """The suite's templates when the run has them (`prompt_template`/`system_template`
    options), else the built-in prompt."""
    fields = prompt_fields(problem)
    template = options.get("prompt_template")
    user = render(str(template), fields) if template else build_prompt(problem)
    system = options.get("system_template")
    system_text = render(str(system), fields) if system else (None if template else SYSTEM_PROMPT)
    msgs = [Message("user", user)]
    if system_text:
        msgs.insert(0, Message("system", system_text.strip()))
    return tuple(msgs)


def build_prompt(problem: Problem) -> str:
    ctx = problem.context()
    fields = prompt_fields(problem)
    inputs = fields["inputs"]
    lines = [
        fields["desc"],
        "",
        f"Output: {ctx['output']} ({ctx['output_desc']}).",
        f"Inputs: {inputs}.",
        "",
        "Propose the equation for the output as a function of the inputs. Write unknown constants "
        "as c0, c1, ... (at most 10); their values will be fitted to measurements. Use numpy "
        "functions such as np.exp, np.log, np.sin, np.sqrt and ** for powers.",
        f"Answer with a single line of the form: {ctx['output']} = <expression>",
    ]
    return "\n".join(lines)


def read_equation(text: str, problem: Problem) -> Program:
    """The equation in a model's answer: a function (LLM-SR style) or a one-line expression."""
    if re.search(r"^\s*def\s", text, re.M):
        return read_skeleton(text, Spec.from_context(problem.context())).program
    blocks = _FENCE.findall(text)
    body = blocks[0] if blocks else text
    lines = [ln.strip().strip("`").strip() for ln in body.splitlines()]
    lines = [ln.rstrip(".;,") for ln in lines if ln]
    if not lines:
        raise EquationError("parse_error", "empty answer")
    lhs = re.compile(rf"^(?:{re.escape(problem.output)}|y|f)\s*(?:\(.*?\))?\s*=\s*(.+)$")
    preferred = [m.group(1) for m in (lhs.match(ln) for ln in lines) if m]
    candidates = preferred + [ln for ln in reversed(lines) if ln not in preferred]
    error: EquationError | None = None
    for cand in candidates:
        try:
            return parse_equation(cand, problem.inputs, free_params=True)
        except EquationError as exc:
            error = error or exc
    assert error is not None
    raise error


class DirectExpressionMethod(DiscoveryMethod):
    name = METHOD_NAME
    default_budget = DEFAULT_BUDGET
    sampling_defaults: ClassVar[Mapping[str, Any]] = {}  # the suite's (temperature 0, its max_tokens)

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
        X, y = problem.columns("train")
        limits = run_limits(options or {})
        deadline = limits.deadline()
        messages = build_messages(problem, options or {})
        context = {**problem.context(), "method": METHOD_NAME}
        best = DiscoveryResult(program=None)
        trace: list[TracePoint] = []  # each new best (srbench.scoring.progress)
        calls = hypotheses = cap_hits = 0
        latency = 0.0
        errors: Counter[str] = Counter()
        fatal: tuple[str | None, str | None] | None = None
        proposal_error: str | None = None
        last_text = ""
        tally = CallTally()
        answers = AnswerLog()
        for i in range(max(1, budget)):
            if i and deadline is not None and time.perf_counter() >= deadline:
                break  # --lsrb-sr-time-limit: keep the best so far
            if out_of_tokens(limits.token_budget, tally):
                break  # --lsrb-sr-token-budget: likewise
            call_seed = stable_hash(METHOD_NAME, seed, i) & ((1 << SEED_BITS) - 1)
            request = GenerationRequest(
                messages=messages, seed=call_seed, sampling=sampling, task=TASK_NAME, context=context
            )
            result = adapter.generate(request)
            tally.add(result)
            calls += 1
            latency += result.latency_ms
            if not result.ok:
                errors[str(result.error_kind)] += 1
                answers.add(calls, f"error:{result.error_kind}", result.error_message or "", messages)
                if result.error_kind in FATAL_GENERATION_KINDS:
                    fatal = (result.error_kind, result.error_message)
                    break
                continue
            last_text = result.text
            try:
                program = read_equation(result.text, problem)
            except EquationError as exc:
                proposal_error = exc.kind
                answers.add(calls, exc.kind, result.text, messages)
                continue
            hypotheses += 1
            fit = fit_program(program, X, y, seed=call_seed, limits=limits.fit, deadline=deadline)
            cap_hits += fit_cap_hit(fit.status, fit.seconds, limits.fit.time_limit_s)
            answers.add(calls, "valid" if fit.valid else fit.status, result.text, messages)
            if fit.valid and (
                fit.mse < best.train_mse
                or (
                    fit.mse == best.train_mse
                    and best.program is not None
                    and program.node_count < best.program.node_count
                )
            ):
                best = DiscoveryResult(
                    program=program,
                    params=fit.params,
                    proposal=program.source.strip(),
                    raw_output=result.text,
                    train_mse=fit.mse,
                    train_nmse=fit.nmse,
                )
                trace.append(TracePoint(calls, program, fit.params))
                note_best("train NMSE", fit.nmse)  # (the progress line and `lsrb view`)
            elif best.program is None:
                proposal_error = fit.status  # parsed, but not finite on the training data
        best.model_calls = calls
        best.trace = trace
        best.trace_length = hypotheses
        best.latency_ms = latency
        best.proposal_error_kind = None if best.found else proposal_error
        if not best.found:
            best.raw_output = last_text
        best.note_generation_failure(fatal, calls, errors)
        best.extra = {
            "sr_method": METHOD_NAME,
            "fit_time_limit_hits": cap_hits,
            **answers.record_fields(None),
        }
        return best
