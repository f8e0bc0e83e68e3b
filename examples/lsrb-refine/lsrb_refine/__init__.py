"""`--lsrb-sr-method refine`: propose an equation, see how it fits, propose a better one.

Each call shows the model the problem (its description, output and inputs, never the data) and,
after the first answer that fits, the best equation so far with its fitted constants and its
training NMSE, asking for one that fits better. An answer is read with pytest-lsrb's safe
equation parser (never run), its constants are fitted on the training data, and the best training
fit is the result. `--lsrb-sr-budget` calls in all (default 4): the harness refuses more, and
counts the calls, time and tokens for the record itself.

The method ships its own mock baseline (`mock_answer`, what `--lsrb-adapter mock` answers): the
n-th call proposes the n-th of a few shapes in the first input, so a run with no model
exercises the whole method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_lsrb import (
    Adapter,
    DiscoveryMethod,
    DiscoveryResult,
    EquationError,
    GenerationRequest,
    Message,
    Problem,
    SamplingConfig,
    fit_program,
    parse_equation,
)

SHAPES = ("c0*{x} + c1", "c0*{x}**2 + c1*{x} + c2", "c0*np.exp(c1*{x}) + c2", "c0*np.sin(c1*{x}) + c2*{x}")


class RefineMethod(DiscoveryMethod):
    name = "refine"
    default_budget = 4

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
        best = DiscoveryResult(program=None)
        for call in range(budget):
            context = {**problem.context(), "method": self.name, "call": call}
            request = GenerationRequest(prompt(problem, best), seed + call, sampling, context=context)
            answer = adapter.generate(request)
            if not answer.ok:
                continue  # (the harness records a model that never answered)
            try:
                program = parse_equation(last_equation(answer.text), problem.inputs, free_params=True)
            except EquationError as exc:
                best.proposal_error_kind = exc.kind
                continue
            fit = fit_program(program, X, y, seed=seed + call)
            if fit.valid and fit.mse < best.train_mse:
                best = DiscoveryResult(
                    program=program,
                    params=fit.params,
                    proposal=program.source,
                    raw_output=answer.text,
                    train_mse=fit.mse,
                    train_nmse=fit.nmse,
                )
        return best

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """The n-th call's shape, in the problem's first input."""
        shape = SHAPES[int(context.get("call", 0)) % len(SHAPES)]
        return f"{context['output']} = {shape.format(x=context['inputs'][0])}"


def prompt(problem: Problem, best: DiscoveryResult) -> tuple[Message, ...]:
    ctx = problem.context()
    inputs = ", ".join(f"{n} ({d})" for n, d in zip(ctx["inputs"], ctx["input_descs"], strict=True))
    lines = [
        ctx["desc"] or "Find the equation behind a scientific relationship.",
        f"Output: {ctx['output']} ({ctx['output_desc']}). Inputs: {inputs}.",
        "Write unknown constants as c0, c1, ...; they are fitted to measurements. Use np.exp, "
        "np.log, np.sin, np.sqrt and ** for powers.",
    ]
    if best.program is not None:
        lines.append(
            f"The best equation so far is {ctx['output']} = {best.equation()} "
            f"(training NMSE {best.train_nmse:.3g}). Propose one that fits better."
        )
    lines.append(f"Answer with one line: {ctx['output']} = <expression>")
    return (Message("user", "\n".join(lines)),)


def last_equation(text: str) -> str:
    """The answer's last line with an `=`, else its last line (without backticks)."""
    lines = [line.strip().strip("`") for line in text.strip().splitlines() if line.strip()]
    with_equals = [line for line in lines if "=" in line]
    return (with_equals or lines or [""])[-1]
