"""`--lsrb-sr-lasr-backend pysr`: LaSR's own engine, as LLM-SRBench's `LasrSearcher` runs it.

The searcher builds `pysr.PySRRegressor(..., llm_options=...)` from LaSR's PySR fork (the
`lasr-experiments` branch of trishullab/LibraryAugmentedSymbolicRegression.jl), which runs
SymbolicRegression.jl in Julia and calls the model itself over HTTP (an OpenAI-compatible
endpoint). This backend makes that same call with the settings of `EvolutionConfig` (one place:
`pysr_settings` reads them from there) and the run's `--lsrb-base-url` / `--lsrb-model` /
`--lsrb-api-key-env`; the answer (`model.sympy()`) is read back with the safe equation parser.

What it needs, checked before any model call (`check_pysr_backend`): the `pysr` package with
LaSR's `llm_options` (mainstream PySR has no model operators, so it would not be LaSR), Julia
(PySR installs it on first use; it cannot be installed where the tests run, so the test that
runs the engine skips with that reason), and a real OpenAI-compatible endpoint (the mock
adapter answers inside this process, where Julia cannot reach it). Model calls happen in Julia:
they are not cached, tallied or counted against `--lsrb-sr-budget` by this harness.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import random
import tempfile
import time
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from pytest_lsrb.adapters.base import Adapter
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.equations import EquationError, parse_expression
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.methods.base import DiscoveryResult
from pytest_lsrb.srbench.methods.evolution import EvolutionConfig, fitting_rows
from pytest_lsrb.srbench.methods.expression_tree import ARG_SIZE_CAPS, FORBIDDEN_NESTING, UNARY

# The searcher's loss (methods/lasr/searcher.py): 10^6 x the MSE, Inf where evaluation fails.
CUSTOM_LOSS: Final = """
function eval_loss(tree, dataset::Dataset{T,L}, options)::L where {T,L}
    prediction, flag = eval_tree_array(tree, dataset.X, options)
    if !flag
        return L(Inf)
    end
    return sum( (1000 .* (prediction .- dataset.y) ) .^ 2) / dataset.n
end
"""
_PYSR_OP_NAMES: Final = {"pow": "pow"}  # constraint keys as PySR spells them


def pysr_settings(config: EvolutionConfig) -> dict[str, Any]:
    """The searcher's `PySRRegressor` arguments, from our evolution settings."""
    return {
        "niterations": config.iterations,
        "ncyclesperiteration": config.cycles,
        "populations": config.populations,
        "population_size": config.population_size,
        "maxsize": config.maxsize,
        "binary_operators": ["+", "*", "-", "/", "^"],
        "unary_operators": list(UNARY),
        "loss_function": CUSTOM_LOSS,
        "weight_randomize": config.weights["randomize"],
        "should_simplify": config.should_simplify,
        "constraints": {
            _PYSR_OP_NAMES.get(op, op): caps[0] if len(caps) == 1 else tuple(caps)
            for op, caps in ARG_SIZE_CAPS.items()
        },
        "nested_constraints": {
            op: {inner: 0 for inner in sorted(banned)} for op, banned in FORBIDDEN_NESTING.items()
        },
    }


def llm_options(context: str, base_url: str, model: str, key: str | None, weight: float) -> dict[str, Any]:
    """The searcher's `llm_options` (its prompts directory and recorder are left to PySR's
    defaults here: no prompt log is written by this harness)."""
    return {
        "active": True,
        "weights": {"llm_mutate": weight, "llm_crossover": weight, "llm_gen_random": weight},
        "prompt_evol": True,
        "prompt_concepts": True,
        "num_pareto_context": 3,
        "api_key": key or "",
        "model": model,
        "api_kwargs": {"max_tokens": 1024, "url": base_url},
        "http_kwargs": {"retries": 5, "readtimeout": 360, "retry_delays": 30},
        "idea_threshold": 30,
        "is_parametric": False,
        "llm_context": context,
    }


def check_pysr_backend(values: Mapping[str, Any]) -> None:
    """One sentence, before any model call, when the pysr backend cannot run here."""
    if importlib.util.find_spec("pysr") is None:
        raise LsrbUsageError(
            "--lsrb-sr-lasr-backend pysr needs LaSR's PySR fork (the pysr package with llm_options, "
            "from trishullab/LibraryAugmentedSymbolicRegression.jl) and Julia; pysr is not installed."
        )
    if str(values.get("adapter") or "mock") == "mock" or not values.get("base_url"):
        raise LsrbUsageError(
            "--lsrb-sr-lasr-backend pysr calls the model from Julia: it needs --lsrb-adapter openai "
            "and an OpenAI-compatible --lsrb-base-url (the mock answers only inside this process)."
        )


def discover_with_pysr(
    problem: Problem,
    adapter: Adapter,
    seed: int,
    *,
    context: str,
    weight: float,
    base_url: str,
    api_key: str | None,
    config: EvolutionConfig | None = None,
) -> DiscoveryResult:  # pragma: no cover - needs Julia (tests/srbench/test_lasr_pysr.py skips)
    import pysr

    if "llm_options" not in inspect.signature(pysr.PySRRegressor.__init__).parameters:
        raise LsrbUsageError(
            "--lsrb-sr-lasr-backend pysr: the installed pysr has no llm_options (mainstream PySR, "
            "not LaSR's fork), so it cannot run LaSR."
        )
    cfg = config or EvolutionConfig()
    start = time.perf_counter()
    X, y = problem.columns("train")
    take = fitting_rows(len(y), cfg, random.Random(seed))
    rows = slice(None) if take is None else take
    table = np.column_stack([np.asarray(X[v], dtype=np.float64)[rows] for v in problem.inputs])
    target = np.asarray(y, dtype=np.float64)[rows]
    with tempfile.TemporaryDirectory(prefix="lsrb-pysr-") as tmp:
        model = pysr.PySRRegressor(
            **pysr_settings(cfg),
            llm_options=llm_options(context, base_url, adapter.model, api_key, weight),
            random_state=seed,
            tempdir=tmp,
            temp_equation_file=True,
            delete_tempfiles=True,
            progress=False,
            verbosity=0,
        )
        model.fit(table, target, variable_names=list(problem.inputs))
        text = str(model.sympy())
    try:
        program = parse_expression(text, list(problem.inputs))
    except EquationError as err:
        return DiscoveryResult(program=None, proposal=text, proposal_error_kind=err.kind)
    with np.errstate(all="ignore"):
        r = np.broadcast_to(program.evaluate(X), y.shape) - y
    mse = float(r @ r) / len(y)
    mse = mse if math.isfinite(mse) else math.inf
    var = float(np.var(y))
    return DiscoveryResult(
        program=program,
        proposal=text,
        train_mse=mse,
        train_nmse=mse / var if var > 0 and math.isfinite(mse) else math.inf,
        # Julia calls the model: which of its answers entered the search is not visible here, so
        # the record says "unknown" (null) rather than a fallback flag it cannot know
        fallback=None,
        extra={
            "sr_method": "lasr",
            "lasr_backend": "pysr",
            "wall_time_s": round(time.perf_counter() - start, 3),
        },
    )
