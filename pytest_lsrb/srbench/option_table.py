"""The run options of the llm_srbench family: the task's, and those of the discovery methods that
take their own (`lasr`, `llmsr`). Declared here, found by the engine through pytest-lsrb's entry
points `pytest_lsrb.options` (pyproject.toml), listed by `pytest --help` in groups of their own;
a run holds the task's when its suite's task is llm_srbench, and a method's only when
`--lsrb-sr-method` names that method (`SrbenchTask.option_owners`).

Light on purpose: `pytest --help` imports this module in every pytest session of the venv.
`srbench.options.SrOptions` reads the values, with these defaults.
"""

from __future__ import annotations

from typing import Final

from pytest_lsrb.engine.option_spec import (
    DAY_S,
    Bounds,
    Option,
    OptionSet,
    optional_integer,
    optional_number,
)

TASK_NAME: Final = "llm_srbench"
# The kind of part a task names whose options then apply (`Task.option_owners`).
METHOD: Final = "method"

OPTIONS: Final = OptionSet(
    kind="task",
    owners=(TASK_NAME,),
    title="llm_srbench: equation discovery, its scoring and judges",
    options=(
        Option(
            "sr-method",
            str,
            "direct",
            "llm_srbench discovery method: direct (the reference's Direct), llmsr (LLM-SR), "
            "direct-expression (a one-line-expression prompt from the suite's templates), an installed "
            'package\'s method (`lsrb list`) or a "package.module:Class" spec',
        ),
        Option(
            "sr-budget",
            optional_integer,
            None,
            "llm_srbench: model calls per discovery run (default: the method's; direct 5, llmsr 1000, "
            "direct-expression 4)",
            bounds=Bounds(1, 1_000_000),
        ),
        Option(
            "sr-time-limit",
            optional_number,
            None,
            "llm_srbench: wall-clock seconds per discovery run; the search stops there and keeps its "
            "best equation, and the symbolic check gets what is left (at least 1 s) (default: no limit)",
            bounds=Bounds(0, 7 * DAY_S, low_open=True, whole=False, unit="seconds"),
        ),
        Option(
            "sr-token-budget",
            optional_integer,
            None,
            "llm_srbench: prompt + completion tokens per discovery run, as the server reports them (the "
            "per-attempt cap of a run's --lsrb-max-total-tokens); the search stops there and keeps its best "
            "equation, like --lsrb-sr-time-limit (default: no cap)",
            bounds=Bounds(1, 10**12),
        ),
        Option(
            "sr-judge-time-limit",
            optional_number,
            60.0,
            "llm_srbench: wall-clock seconds for the sympy check of one answer (it runs in a child "
            "process with 2 GB of memory; beyond either its verdict is recorded as undecided)",
            identity=False,
            bounds=Bounds(0, DAY_S, low_open=True, whole=False, unit="seconds"),
        ),
        Option(
            "sr-fit-time-limit",
            optional_number,
            30.0,  # the reference's (LLM-SR's evaluate_timeout_seconds); srbench.fitting.objective
            "llm_srbench: wall-clock seconds for fitting one candidate's parameters (the reference's "
            "30; a fit that reaches it is an invalid candidate, as there, and is counted: "
            "fit_time_limit_hits)",
            bounds=Bounds(0, DAY_S, low_open=True, whole=False, unit="seconds"),
        ),
        Option(
            "sr-fit",
            str,
            "reference",
            "llm_srbench: how a candidate's parameters are fitted: reference (the reference's scipy "
            "BFGS from ten ones with its numerical gradient; a nan final loss is invalid), fast (the "
            "same BFGS with exact gradients and a closed form for linear skeletons: faster, another "
            "optimum on some nonconvex skeletons) or enhanced (least squares, normalised loss, stall "
            "stop, seeded restarts: scores differ from the reference's)",
            choices=("reference", "fast", "enhanced"),
        ),
        Option(
            "sr-metrics",
            str,
            "reference",
            "llm_srbench: which test points count: reference (points with a NaN prediction dropped, as "
            "the reference does) or strict (an equation not finite on every point is invalid)",
            choices=("reference", "strict"),
        ),
        Option(
            "sr-partial-release",
            bool,
            False,
            "llm_srbench: load an official release that lacks a split's metadata or a problem's data "
            "(a warning and Table 1's header name what is missing); off: such a release is refused",
            flag=True,
        ),
        Option(
            "sr-per-problem",
            str,
            "sample0",
            "llm_srbench Table 1: which result stands for a problem: sample0 (its first sample; the "
            "paper runs one search per problem) or best_train (of its --lsrb-samples runs, the one with "
            "the lowest training MSE: best-of-k chosen without test data)",
            choices=("sample0", "best_train"),
        ),
        Option(
            "sr-judge",
            str,
            "sympy",
            "llm_srbench symbolic accuracy: sympy (model-free checker), llm (the paper's judge through "
            "the adapter), both (reports their agreement) or none",
            choices=("sympy", "llm", "both", "none"),
        ),
        Option(
            "sr-sa-scale",
            str,
            "free",
            "llm_srbench symbolic accuracy (sympy judge), an open case of the paper's rule: free (an "
            "additive constant alone is a constant, removed like the others: x**2 + c matches x**2) or "
            "strict (an additive constant alone is a term of the form)",
            choices=("free", "strict"),
        ),
        Option(
            "sr-judge-model",
            str,
            None,
            "llm_srbench: the LLM judge's model (the paper: GPT-4o); required with --lsrb-sr-judge=llm|both "
            "on a real adapter, so the model under test never grades itself",
        ),
        Option(
            "sr-judge-base-url",
            str,
            None,
            "llm_srbench: the LLM judge's endpoint (default: --lsrb-base-url)",
        ),
        Option(
            "sr-judge-api-key-env",
            str,
            None,
            "llm_srbench: the environment variable holding the LLM judge's API key; without it the judge "
            "gets no key, unless it is served from --lsrb-base-url's own server (the model's key is never "
            "sent to another server)",
            identity=False,
        ),
        Option(
            "sr-judge-adapter",
            str,
            None,
            "llm_srbench: the LLM judge's adapter, mock|ollama|openai (default: --lsrb-adapter)",
        ),
        Option(
            "sr-success",
            str,
            "acc_0.1",
            "llm_srbench: what verification_success means: acc_0.1 (on the test data) or symbolic",
            choices=("acc_0.1", "symbolic"),
        ),
    ),
)

LASR_OPTIONS: Final = OptionSet(
    kind=METHOD,
    owners=("lasr",),
    title="llm_srbench method lasr (--lsrb-sr-method lasr)",
    options=(
        Option(
            "sr-lasr-backend",
            str,
            "python",
            "llm_srbench lasr: the search engine: python (srbench/methods/evolution.py, the reference's "
            "settings) or pysr (LaSR's PySR fork and Julia, calling --lsrb-base-url itself)",
            choices=("python", "pysr"),
        ),
        Option(
            "sr-lasr-rows",
            str,
            "first",
            "llm_srbench lasr: which 2000 training rows the search fits: first (the reference's "
            "task.samples[:2000]) or seeded (a seeded spread; for data stored in trajectory order, "
            "such as LLM-SR's CSVs, where the first rows are one stretch of the trajectory)",
            choices=("first", "seeded"),
        ),
    ),
)

LLMSR_OPTIONS: Final = OptionSet(
    kind=METHOD,
    owners=("llmsr",),
    title="llm_srbench method llmsr (--lsrb-sr-method llmsr)",
    options=(
        Option(
            "sr-reset-every",
            optional_integer,
            None,
            "llm_srbench llmsr: reset the weaker half of the islands every N registered skeletons "
            "(default: the reference's schedule, every 4 hours of wall clock)",
        ),
    ),
)

# Every option of the family, whichever part owns it: the defaults `SrOptions` fills in.
ALL: Final = (OPTIONS, LASR_OPTIONS, LLMSR_OPTIONS)


def choices_of(name: str) -> tuple[str, ...]:
    """The choices of `--lsrb-<name>` among the family's options: the one spelling of the list."""
    for option_set in ALL:
        if any(o.key == name.replace("-", "_") for o in option_set.options):
            return option_set.choices_of(name)
    raise KeyError(name)
