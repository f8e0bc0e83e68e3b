"""The paper's LLM judge for symbolic accuracy, through the configured adapter.

The model sees the ground truth and the discovered equation (its constants fitted to data) and
answers whether they are the same equation up to constants; the last `yes`/`no` in the answer
is the verdict. The call goes through the run's adapter like any other, so a response cache
applies to it too. With `--lsrb-sr-judge=both` the sympy checker and the judge both run and the
summary reports how often they agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, Message, SamplingConfig
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.equations import EquationError, parse_expression
from pytest_lsrb.equations.ir import Op, dag_nodes
from pytest_lsrb.srbench.methods.base import TASK_NAME
from pytest_lsrb.srbench.problem import Problem
from pytest_lsrb.srbench.symbolic import SymbolicVerdict

JUDGE_METHOD: Final = "judge"
PROMPT: Final = """You are judging a scientific equation discovery result.

Variables: {variables}
Output: {output}

Ground-truth equation:
{output} = {truth}

Discovered equation (its numeric constants were fitted to data, so they may be rounded or
written differently):
{output} = {proposal}

Are the two equations mathematically equivalent up to the values of their constants (the same
functional form, possibly rearranged or with constants combined)? Explain briefly, then answer
on the last line with exactly one word: yes or no."""

_VERDICT = re.compile(r"\b(yes|no)\b", re.I)


def judge_prompt(problem: Problem, equation: str) -> str:
    return PROMPT.format(
        variables=", ".join(problem.inputs),
        output=problem.output,
        truth=problem.expression,
        proposal=equation,
    )


def read_verdict(text: str) -> bool | None:
    """The last yes/no in the answer (None when there is none)."""
    found = _VERDICT.findall(text)
    return None if not found else found[-1].lower() == "yes"


def llm_judge(
    problem: Problem, equation: str, adapter: Adapter, sampling: SamplingConfig, seed: int
) -> tuple[SymbolicVerdict, dict[str, Any]]:
    """(verdict, record fields: the judge's raw answer, error and latency)."""
    request = GenerationRequest(
        messages=(Message("user", judge_prompt(problem, equation)),),
        seed=stable_hash(JUDGE_METHOD, seed) & ((1 << SEED_BITS) - 1),
        sampling=sampling,
        task=TASK_NAME,
        context={
            "method": JUDGE_METHOD,
            "inputs": problem.inputs,
            "truth": problem.expression,
            "proposal": equation,
        },
    )
    result = adapter.generate(request)
    fields: dict[str, Any] = {
        "judge_raw_output": result.text,
        "judge_latency_ms": round(result.latency_ms, 3),
        "judge_model_calls": result.http_attempts if not result.cached else 0,
        "judge_error_kind": result.error_kind,
    }
    if not result.ok:
        return SymbolicVerdict(match=None, method="llm_error", detail=result.error_message or ""), fields
    match = read_verdict(result.text)
    if match is None:
        return SymbolicVerdict(match=None, method="llm_unreadable", detail="no yes/no in the answer"), fields
    return SymbolicVerdict(match=match, method="llm"), fields


def _shape(text: str, inputs: list[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    try:
        prog = parse_expression(text, inputs, free_params=True)
    except EquationError:
        return None
    ops = frozenset(
        n.name
        for n in dag_nodes(prog.root)
        if isinstance(n, Op) and n.name not in ("add", "sub", "mul", "div", "neg")
    )
    return ops, prog.used_variables


def mock_judge_answer(context: Mapping[str, Any]) -> str:
    """The mock adapter's judge: a deliberately shallow one that compares which functions and
    variables the two equations use (so it disagrees with the sympy checker now and then)."""
    inputs = [str(v) for v in context.get("inputs", [])]
    truth = _shape(str(context.get("truth") or ""), inputs)
    proposal = _shape(str(context.get("proposal") or ""), inputs)
    same = truth is not None and truth == proposal
    reason = (
        "Both use the same functions of the same variables."
        if same
        else ("They use different functions or variables.")
    )
    return f"{reason}\n{'yes' if same else 'no'}"
