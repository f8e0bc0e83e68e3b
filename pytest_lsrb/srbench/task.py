"""llm_srbench: scientific equation discovery (LLM-SRBench). One attempt is one discovery run.

A run uses the discovery method chosen by `--lsrb-sr-method` (direct, llmsr) with its budget of
model calls (`--lsrb-sr-budget`), then scores the best equation on the test and OOD data and
against the ground truth (when the problem has one). The summary adds the paper's Table 1:
per problem set and domain, symbolic accuracy, Acc_0.1 and median NMSE, in-domain and OOD.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_lsrb.core.errors import LsrbUsageError, generation_domain
from pytest_lsrb.engine.calls import within
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.suite import SuiteSpec
from pytest_lsrb.engine.task import PASS, AttemptContext, Judgement, Task, mock_answers
from pytest_lsrb.srbench.data.loaders import load_problems
from pytest_lsrb.srbench.data.problem import DOMAIN_ALIASES, Problem
from pytest_lsrb.srbench.limits import judge_budget
from pytest_lsrb.srbench.option_table import METHOD, OPTIONS
from pytest_lsrb.srbench.options import SrOptions
from pytest_lsrb.srbench.records import SrbenchAttemptRecord, SrbenchFields
from pytest_lsrb.srbench.scoring.evaluation import score, summary_message
from pytest_lsrb.srbench.scoring.progress import progress_fields
from pytest_lsrb.srbench.tables.table import SrbenchSummary, paper_table_lines, table_lines

if TYPE_CHECKING:
    from pytest_lsrb.engine.options import RunConfig

TASK_NAME = "llm_srbench"


class SrbenchTask(Task[Problem]):
    name = TASK_NAME
    answer_field = "equation"
    verification_modes = ("equation",)  # every discovery result is scored on the problem's data
    record_type = SrbenchAttemptRecord
    # The run's --lsrb-sr-* options, read once: every attempt of a run gets the same mapping.
    _read: tuple[Mapping[str, Any], SrOptions] | None = None

    def _options(self, options: Mapping[str, Any]) -> SrOptions:
        read = self._read
        if read is None or read[0] is not options:
            read = self._read = (options, SrOptions.read(options))
        return read[1]

    # --lsrb-sr-partial-release, as `check_options` read it (the run checks its options before
    # it loads rows, on the same task object).
    _partial_release = False
    # The run's method (--lsrb-sr-method, as read by `check_options` and each attempt): whose
    # baseline the mock adapter answers with (None outside a run: the request's own method).
    _method_name: str | None = None

    def load_rows(self, suite: SuiteSpec, index_path: Path) -> list[Problem]:
        return load_problems(index_path, partial_release=self._partial_release)

    def configure(self, config: RunConfig) -> RunConfig:
        """The method's own sampling settings where the command line gave none (direct and llmsr:
        the reference's, no temperature sent and max_tokens 1024); recorded in run.json like any
        option (a temperature of null means the provider's default)."""
        from pytest_lsrb.srbench.methods import get_method

        method = get_method(SrOptions.read(config.values).method)
        own = {k: v for k, v in method.sampling_defaults.items() if k not in config.from_command_line}
        if not own:
            return config
        return dataclasses.replace(config, values={**config.values, **own})

    def option_owners(self, values: Mapping[str, Any]) -> Mapping[str, str]:
        """The discovery method `--lsrb-sr-method` names: its own options (`srbench.option_table`,
        a plug-in method's `OptionSet` of kind `method`) apply to this run, no other method's."""
        return {METHOD: str(values.get("sr_method") or OPTIONS.defaults()["sr_method"])}

    def check_options(self, values: Mapping[str, Any]) -> None:
        """Fail before any model call on a bad method, budget, judge or success criterion."""
        from pytest_lsrb.srbench.methods import get_method

        sr = SrOptions.read(values)  # the limits, budget, judge, success and metrics options
        self._partial_release = sr.partial_release
        get_method(sr.method)
        self._method_name = sr.method
        from pytest_lsrb.srbench.scoring.judge import check_judge_options

        check_judge_options(sr, values)
        if sr.method == "lasr" and sr.lasr_backend == "pysr":
            from pytest_lsrb.srbench.methods.lasr_pysr import check_pysr_backend

            check_pysr_backend(values)
        if sr.success == "symbolic" and sr.judge == "none":
            raise LsrbUsageError("--lsrb-sr-success=symbolic needs a symbolic judge (--lsrb-sr-judge=sympy).")

    def slice_predicate(self, goal_slice: str) -> Callable[[Problem], bool]:
        return problem_slice_predicate(goal_slice)

    def calls_per_attempt(self, values: Mapping[str, Any]) -> int:
        """The most model calls one attempt may make: the method's budget, plus the LLM judge's."""
        from pytest_lsrb.srbench.methods import get_method

        sr = SrOptions.read(values)
        budget = sr.budget or get_method(sr.method).default_budget
        return budget + (1 if sr.llm_judge else 0)

    def run_attempt(self, ctx: AttemptContext[Problem]) -> SrbenchFields:
        from pytest_lsrb.srbench.methods import get_method

        started = time.perf_counter()  # --lsrb-sr-time-limit covers discovery and judging
        problem = ctx.case.row
        options = ctx.options
        sr = self._options(options)
        method = get_method(sr.method)
        self._method_name = sr.method
        budget = sr.budget or method.default_budget
        method_options = {
            **options,
            "prompt_template": ctx.suite.prompt_template,
            "system_template": ctx.suite.system_template,
        }
        # The harness holds the method to its budget: a call past it is refused, not sent.
        adapter = within(ctx.adapter, budget, f"{method.name} with --lsrb-sr-budget {budget}")
        result = method.discover(
            problem, adapter, ctx.sampling, ctx.case.attempt_seed, budget, options=method_options
        )
        head: SrbenchFields = {
            "sr_method": method.name,
            "sr_budget": budget,
            "sr_per_problem": sr.per_problem,
            "problem_set": problem.problem_set,
            "problem_group": problem.group,
            "domain": problem.domain,
        }
        if problem.release_note:
            head["sr_release_note"] = problem.release_note
        # Each part builds its fields as the record's definition says (`srbench.records`).
        fields: SrbenchFields = {
            **head,
            **result.record_fields(),
            **progress_fields(problem, result, sr.metrics),
        }
        # The method's result says whose failure the attempt is (`DiscoveryResult.note_generation_failure`,
        # `outcomes.unanswered_kind`): a model that never answered is infrastructure, fallback or not.
        if result.generation_error_kind:
            fields.update(
                {
                    "generation_error_kind": result.generation_error_kind,
                    "generation_error_domain": generation_domain(result.generation_error_kind),
                    "generation_error_message": result.generation_error_message,
                }
            )
        llm = None
        if sr.llm_judge and problem.has_ground_truth and result.found and not result.generation_error_kind:
            from pytest_lsrb.srbench.scoring.judge import judge_adapter, llm_judge

            run_adapter = within(ctx.adapter, 1, "the LLM judge")
            adapter = judge_adapter(sr, options, run_adapter, mock_answers(self.mock_answer))
            assert result.program is not None  # found
            llm, judge_fields = llm_judge(problem, result.program, adapter)
            fields.update(judge_fields)
        fields.update(
            score(
                problem,
                result,
                judge=sr.judge,
                success=sr.success,
                verify=ctx.verifier.mode != "none",
                llm=llm,
                metrics=sr.metrics,
                symbolic_budget=judge_budget(sr, started),
                sa_scale=sr.sa_scale,
            )
        )
        return fields

    def judge(self, record: AttemptRecord) -> Judgement:
        """The verdict on what the method returned, its fallback included (as the reference scores
        it); a failure says when that was the fallback, not an equation of the model's."""
        fallback = bool(record.get("fallback_result"))
        if not record.get("valid") and not fallback:  # nothing returned, or not finite on the test data
            kind = record.get("proposal_error_kind") or record.get("verification_outcome") or "no_equation"
            shown = (record.get("proposal") or record.get("raw_output") or "")[:80]
            return Judgement("fail", f"no usable equation ({kind}): {shown!r}")
        note = _fallback_note(record) if fallback else ""
        if record.get("verification_attempted"):
            if record.get("verification_success"):
                return PASS
            return Judgement("fail", f"the equation did not verify: {summary_message(record)}{note}")
        if not record.get("valid"):  # no checker (--lsrb-verification-mode none): the model's answers
            return Judgement("fail", f"no valid equation of the model's{note}")
        return PASS

    def row_keywords(self, row: Problem) -> list[str]:
        return list(row.keywords())

    def summary_accumulator(self, samples_per_item: int) -> SrbenchSummary:
        return SrbenchSummary()

    def summary_fields(self, config: RunConfig) -> dict[str, Any]:
        return {}

    def score_label(self, values: Mapping[str, Any]) -> str:
        """The progress line's running score: `verification_success` is Acc0.1 on the test data
        or symbolic accuracy (`--lsrb-sr-success`)."""
        return "SA" if values.get("sr_success") == "symbolic" else "Acc0.1"

    def terminal_rows(self, summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
        # Table 1 follows as lines, per problem set (no pooled numbers: the paper has none).
        keys = ["sr_judge_agreement"] if summary.get("sr_judge_pairs") else []
        rows = [(k, summary.get(k)) for k in keys]
        hits = summary.get("sr_fit_time_limit_hits")
        if hits is not None:  # a loaded machine can change scores: say how often a fit hit its cap
            cap = (summary.get("config") or {}).get("sr_fit_time_limit")
            each = f" of {cap:g} s" if isinstance(cap, (int, float)) else ""
            shown = (
                f"{hits} fit(s) in {summary.get('sr_fit_time_limit_attempts') or 0} attempt(s)"
                if hits
                else "none"
            )
            rows.append((f"fit time-limit hits{each}", shown))
        refused = summary.get("sr_unsupported_candidates")
        if refused:  # our limit, not the model's parse errors: said apart from them
            rows.append(
                (
                    "unsupported forms",
                    f"{refused} candidate(s) in {summary.get('sr_unsupported_attempts') or 0} attempt(s): "
                    "valid programs the equation language cannot express (not the model's errors)",
                )
            )
        return rows

    def terminal_lines(self, summary: Mapping[str, Any]) -> list[str]:
        if not summary.get("srbench_table"):
            return []
        # Today's rows, then the paper's layout (column blocks per group) beside them.
        return ["", *table_lines(summary), "", *paper_table_lines(summary, header=False)]

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """The LLM judge's mock verdict; every other call is the running method's to answer: each
        method ships its own baseline (`DiscoveryMethod.mock_answer`)."""
        if context.get("method") == "judge":
            from pytest_lsrb.srbench.scoring.judge import mock_judge_answer

            return mock_judge_answer(context)
        from pytest_lsrb.srbench.methods import get_method

        asked = context.get("method")
        name = self._method_name or (asked if isinstance(asked, str) else None) or "direct"
        return get_method(name).mock_answer(context, seed)


def _fallback_note(record: AttemptRecord) -> str:
    valid = record.get("model_valid_candidates")
    return (
        " (the result is the method's fallback, no model answer contributed: "
        f"{record.get('model_calls') or 0} model call(s), {valid or 0} valid candidate(s), "
        f"candidate errors: {record.get('candidate_errors') or 'none'})"
    )


# --- problem slices ------------------------------------------------------------------------------

_CMP = re.compile(r"^(<=|>=|<|>|=)?(\d+)$")


def _count_cmp(spec: str) -> Callable[[int], bool]:
    m = _CMP.match(spec)
    if not m:
        raise LsrbUsageError(
            f"--lsrb-goal-slice: 'inputs:{spec}' needs a number with an optional <, <=, >, >= or =."
        )
    op, num = m.group(1) or "=", int(m.group(2))
    return {
        "<": lambda v: v < num,
        "<=": lambda v: v <= num,
        ">": lambda v: v > num,
        ">=": lambda v: v >= num,
        "=": lambda v: v == num,
    }[op]


def problem_slice_predicate(goal_slice: str) -> Callable[[Problem], bool]:
    """`all`, or comma-separated conditions that must all hold:

    - `set:NAME`      problem set or table group (lsr_transform, lsr_synth, lsr_synth_matsci, llmsr)
    - `domain:NAME`   chem_react|chemistry, bio_pop_growth|biology, phys_osc|physics, matsci|material_science
    - `truth` / `no_truth`   problems with / without a ground-truth equation
    - `inputs:<=3`    number of input variables (also <, >, >=, =)
    - `name:PREFIX`   problem names starting with PREFIX
    """
    if goal_slice in ("", "all"):
        return lambda row: True
    preds: list[Callable[[Problem], bool]] = []
    for part in (p.strip() for p in goal_slice.split(",")):
        key, _, value = part.partition(":")
        if key == "set" and value:
            preds.append(lambda p, v=value: v in (p.problem_set, p.group))  # type: ignore[misc]
        elif key == "domain" and value:
            if value not in DOMAIN_ALIASES:
                raise LsrbUsageError(
                    f"--lsrb-goal-slice: unknown domain '{value}' (expected chem_react, bio_pop_growth, "
                    "phys_osc, matsci or chemistry, biology, physics, material_science)."
                )
            preds.append(lambda p, d=DOMAIN_ALIASES[value]: p.domain == d)  # type: ignore[misc]
        elif key == "inputs" and value:
            cmp = _count_cmp(value)
            preds.append(lambda p, c=cmp: c(len(p.inputs)))  # type: ignore[misc]
        elif key == "name" and value:
            preds.append(lambda p, v=value: p.name.startswith(v))  # type: ignore[misc]
        elif part == "truth":
            preds.append(lambda p: p.has_ground_truth)
        elif part == "no_truth":
            preds.append(lambda p: not p.has_ground_truth)
        else:
            raise LsrbUsageError(
                f"--lsrb-goal-slice: unknown condition '{part}' for llm_srbench "
                "(expected set:NAME, domain:NAME, inputs:N, name:PREFIX, truth or no_truth)."
            )
    return lambda row: all(p(row) for p in preds)
