"""The paper's LLM judge for symbolic accuracy: a fixed model, never the one under test.

The paper judges with GPT-4o; here the judge is `--lsrb-sr-judge-model` (with
`--lsrb-sr-judge-base-url` / `--lsrb-sr-judge-adapter` when it lives elsewhere than the model
under test, and `--lsrb-sr-judge-api-key-env` for its own key: the judge's server never gets the
model's key unless it is the model's own server, core.credentials). A real run refuses
`--lsrb-sr-judge=llm|both` without a judge model (the model under test would grade itself);
the mock adapter has its own shallow mock judge. As in the paper, the
two equations are compared after removing constants: the judge sees both as skeletons, every
number and fitted parameter written as a named constant (`c0*x**2 + c1`, the same placeholders
as the model-free rule, `symbolic.promote_constants`), is told the paper's description and that
a superset, a subset or an approximation is not the same form, and answers; the last `yes`/`no`
is the verdict. The request
is the same for the same (ground truth, skeleton) pair (seed included) at temperature 0, so the
response cache (`--lsrb-cache-dir`) answers repeats. With `--lsrb-sr-judge=both` the sympy
checker and the judge both run and the summary reports how often they agree.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any, Final, Protocol

from pytest_lsrb.adapters import create_adapter
from pytest_lsrb.adapters.base import (
    Adapter,
    AdapterConfig,
    GenerationRequest,
    Message,
    MockAnswers,
    SamplingConfig,
)
from pytest_lsrb.core.credentials import checked_key, same_origin
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.excerpts import RECORD_TEXT, cut_length, excerpt
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.equations import EquationError, Program, parse_expression
from pytest_lsrb.equations.ir import Op, dag_nodes
from pytest_lsrb.srbench.methods.base import TASK_NAME
from pytest_lsrb.srbench.options import SrOptions
from pytest_lsrb.srbench.records import SrbenchFields
from pytest_lsrb.srbench.scoring.symbolic import SymbolicVerdict, promote_constants

JUDGE_METHOD: Final = "judge"
PROMPT: Final = """You are judging a scientific equation discovery result, as LLM-SRBench measures symbolic
accuracy: the discovered hypothesis is compared with the ground truth after their parameters and
constants are removed, and it counts only if it has the ground truth's functional form.

Variables: {variables}
Output: {output}

Both equations are written with their numeric constants removed: c0, c1, ... stand for
constants of any value (the discovered equation's were fitted to data; the ground truth's may be
named physical parameters).

Ground-truth equation:
{output} = {truth}

Discovered equation:
{output} = {proposal}

Are the two equations the same functional form up to the values of their constants? Constants
may be combined, moved (into a function's argument or out of it), have another value or sign,
or be an overall factor or an additive constant; the same function written another way (an
identity such as cos(2*x) = cos(x)**2 - sin(x)**2) is the same form. A form with an extra term
that holds a variable (a superset, even if its constant could be zero), a form missing such a
term, another exponent, function or variable, or an approximation of the ground truth (such as a
truncated series) is not the same form. Explain briefly, then answer on the last line with
exactly one word: yes or no."""
JUDGE_SAMPLING: Final = SamplingConfig(temperature=0.0, max_tokens=512)
_ADAPTERS: dict[tuple[Any, ...], Adapter] = {}
_ADAPTERS_LOCK = threading.Lock()

_VERDICT = re.compile(r"\b(yes|no)\b", re.I)


def skeleton(program: Program) -> str:
    """The equation with its constants removed: every parameter and non-structural number is a
    named constant c0, c1, ... (what the paper's judge compares)."""
    promoted, _ = promote_constants(program)
    return promoted.to_expression()


class JudgedProblem(Protocol):
    """What the judge reads of a problem (a `Problem`, or a labelled pair of
    `srbench.scoring.agreement`)."""

    @property
    def inputs(self) -> list[str]: ...
    @property
    def output(self) -> str: ...
    @property
    def expression(self) -> str | None: ...
    def ground_truth(self) -> Program | None: ...


def judge_prompt(problem: JudgedProblem, proposal: Program) -> str:
    truth = problem.ground_truth()
    assert truth is not None
    return PROMPT.format(
        variables=", ".join(problem.inputs),
        output=problem.output,
        truth=skeleton(truth),
        proposal=skeleton(proposal),
    )


def judge_options_given(sr: SrOptions) -> bool:
    return any((sr.judge_model, sr.judge_base_url, sr.judge_adapter, sr.judge_api_key_env))


def judge_key_env(sr: SrOptions, options: Mapping[str, Any]) -> str | None:
    """The variable holding the key the judge's server gets: `--lsrb-sr-judge-api-key-env`, else
    the model's own only when the judge is served by the model's server (same adapter, same
    origin); a judge elsewhere gets no key rather than the model's."""
    if sr.judge_api_key_env:
        return sr.judge_api_key_env
    model_adapter = str(options.get("adapter") or "mock")
    if (sr.judge_adapter or model_adapter) != model_adapter:
        return None
    model_url = options.get("base_url")
    judge_url = sr.judge_base_url or model_url
    if judge_url == model_url or (judge_url and model_url and same_origin(str(judge_url), str(model_url))):
        return options.get("api_key_env")
    return None


def check_judge_options(sr: SrOptions, options: Mapping[str, Any]) -> None:
    """The paper's judge is a fixed model: a real run must name one (not the model under test)."""
    real = str(options.get("adapter") or "mock") != "mock"
    checked_key(sr.judge_api_key_env, "--lsrb-sr-judge-api-key-env")  # before any model call
    if sr.llm_judge and real and not sr.judge_model:
        raise LsrbUsageError(
            f"--lsrb-sr-judge={sr.judge} needs --lsrb-sr-judge-model (and --lsrb-sr-judge-base-url when it "
            "is served elsewhere): the paper judges with a fixed model (GPT-4o), not the model under test."
        )


def judge_adapter(
    sr: SrOptions, options: Mapping[str, Any], run_adapter: Adapter, mock_answers: MockAnswers
) -> Adapter:
    """The judge's adapter: the run's own when no judge option is given (the mock's judge), else
    one built from the judge options (missing ones taken from the run's), once per process; a
    mock judge answers with `mock_answers` (the task's, as the run's mock does)."""
    if not judge_options_given(sr):
        return run_adapter
    retries, retry_time = options.get("max_retries"), options.get("retry_time")
    config = AdapterConfig(
        name=sr.judge_adapter or str(options.get("adapter") or "mock"),
        model=sr.judge_model or str(options.get("model") or ""),
        base_url=sr.judge_base_url or options.get("base_url"),
        api_key_env=judge_key_env(sr, options),
        timeout_s=float(options.get("timeout") or 120.0),
        max_retries=int(retries) if retries is not None else 100,
        retry_time_s=float(retry_time) if retry_time is not None else 120.0,
        cache_dir=options.get("cache_dir"),
        answers=mock_answers,
    )
    key = (config.name, config.model, config.base_url, config.api_key_env, config.cache_dir)
    with _ADAPTERS_LOCK:
        if key not in _ADAPTERS:
            _ADAPTERS[key] = create_adapter(config)
        return _ADAPTERS[key]


def read_verdict(text: str) -> bool | None:
    """The last yes/no in the answer (None when there is none)."""
    found = _VERDICT.findall(text)
    return None if not found else found[-1].lower() == "yes"


def llm_judge(
    problem: JudgedProblem, proposal: Program, adapter: Adapter
) -> tuple[SymbolicVerdict, SrbenchFields]:
    """(verdict, record fields: the judge's model, raw answer, error and latency)."""
    prompt = judge_prompt(problem, proposal)
    request = GenerationRequest(
        messages=(Message("user", prompt),),
        seed=stable_hash(JUDGE_METHOD, prompt) & ((1 << SEED_BITS) - 1),
        sampling=JUDGE_SAMPLING,
        task=TASK_NAME,
        context={
            "method": JUDGE_METHOD,
            "inputs": problem.inputs,
            "truth": problem.expression,
            "proposal": proposal.to_expression(),
        },
    )
    result = adapter.generate(request)
    fields: SrbenchFields = {
        "judge_model": str(adapter.identity().get("model") or ""),
        "judge_raw_output": excerpt(result.text, RECORD_TEXT),  # bounded, with its length when cut
    }
    if (cut := cut_length(result.text)) is not None:
        fields["judge_raw_output_chars"] = cut
    fields |= {
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
