"""goal_to_tactic_proposal_v1: a Lean 4 goal in, exactly one next tactic line out."""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, Message
from pytest_lsrb.core.metrics import rate
from pytest_lsrb.core.rows import stream_jsonl
from pytest_lsrb.engine.outcomes import JUDGED, verdict
from pytest_lsrb.engine.prompt import prompt_hash
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.suite import SuiteSpec, read_suite_text, render
from pytest_lsrb.engine.summary import GroupCounts
from pytest_lsrb.engine.task import PASS, AttemptContext, Judgement, Task
from pytest_lsrb.tactic.answer import ANSWER_MODES, Site, read_answer
from pytest_lsrb.tactic.baseline import mock_tactic_answer
from pytest_lsrb.tactic.lean.tabs import tab_indented
from pytest_lsrb.tactic.options import TASK_NAME
from pytest_lsrb.tactic.profiles import profiles_digest, resolve_profiles_path
from pytest_lsrb.tactic.prompts import SourceFile, agentic_prompt, file_context, one_shot_prompt
from pytest_lsrb.tactic.records import TacticAttemptRecord, TacticFields
from pytest_lsrb.tactic.rows import TacticRow, repo_name
from pytest_lsrb.tactic.search import DEFAULT_ITERATIONS, SEARCH_PARSERS, verdict_fields
from pytest_lsrb.tactic.slices import goal_slice_predicate

if TYPE_CHECKING:
    from pytest_lsrb.engine.options import RunConfig

# The temperature of a run with samples > 1 that names none (llm_srbench's llmsr samples at 0.8 too).
SAMPLED_TEMPERATURE = 0.8
# max_tokens of a `--lsrb-answer proof` run that names none: a whole proof does not fit the
# suite's 128 (DeepSeek-Prover-V1.5's quick start allows 2048 for its non-CoT proofs).
PROOF_MAX_TOKENS = 2048


def answer_mode(options: Mapping[str, Any]) -> str:
    """`tactic` (the card's default: one next tactic) or `proof` (`--lsrb-answer proof`)."""
    mode = options.get("answer")
    return str(mode) if mode in ANSWER_MODES else ANSWER_MODES[0]


@functools.lru_cache(maxsize=8)
def _proof_templates(root: Path, prompt: str, system: str | None) -> tuple[str | None, str]:
    """The suite's `[answer_proof]` templates (read once per suite folder)."""
    system_text = read_suite_text(root, system, "answer_proof.system_prompt") if system else None
    return system_text, read_suite_text(root, prompt, "answer_proof.prompt")


def build_messages(
    suite: SuiteSpec,
    row: TacticRow,
    context: str | None = None,
    mode: str = "tactic",
    *,
    column: int | None = None,
) -> tuple[Message, ...]:
    """The prompt; with `context` (`--lsrb-context file`: the file up to the sorry's line, as
    SorryDB cuts it), the user message starts with it, the sorry at `column` of its last line
    (default: the row's), and without it the prompt is exactly the suite's template. Mode `proof`
    uses the suite's `[answer_proof]` templates (they ask for the whole proof)."""
    fields = {
        "goal_text": row.goal_text,
        "repo": row.repo_name,
        "path": row.path,
        "lean_version": row.repo_lean_version,
    }
    proof = suite.settings.get("answer_proof") if mode == "proof" else None
    if isinstance(proof, Mapping) and isinstance(proof.get("prompt"), str):
        templates = _proof_templates(suite.root, proof["prompt"], proof.get("system_prompt"))
        system_template, user_template = templates
        system = render(system_template, fields) if system_template else None
        user = render(user_template, fields)
    else:
        system, user = suite.render_prompt(fields)
    if context:
        # SorryDB's agentic prompt marks its target the same way: the file up to the sorry,
        # "a sorry on the last line, column N" (sorrydb/strategies/agentic_strategy.py PROMPT)
        user = (
            f"File {row.path}, up to the sorry:\n```lean\n{context}\n```\n"
            f"The target is the `sorry` on the last line, column "
            f"{row.start_column if column is None else column}.\n\n{user}"
        )
    msgs = [Message("user", user)]
    if system:
        msgs.insert(0, Message("system", system))
    return tuple(msgs)


# messages, their hash, the same as JSON-ready dicts, and where the target sorry stands in the
# source the prompt shows (None: it shows none)
_Prompt = tuple[tuple[Message, ...], str, list[dict[str, str]], Site | None]


def context_site(context: str | None, source: SourceFile, end_column: int, last_line: int) -> Site | None:
    """The target sorry in the file context a prompt shows (cut after `last_line` of the file,
    tactic/prompts.py): the answer reader finds what replaced it there (tactic/fill.py)."""
    if not context:
        return None
    shown = last_line - source.start_line + 1  # the sorry's lines the context holds
    if last_line < source.end_line:  # cut inside a sorry of several lines: up to its line's end
        end_column = len(context.rsplit("\n", 1)[-1])
    elif source.start_line == source.end_line:
        end_column = source.start_column + len("sorry")
    return Site.at_end(context, shown, source.start_column, end_column)


class TacticTask(Task[TacticRow]):
    name = TASK_NAME
    answer_field = "tactic"
    verification_modes = ("none", "synthetic", "repo_replay")
    record_type = TacticAttemptRecord

    def load_rows(self, suite: SuiteSpec, index_path: Path) -> Iterator[TacticRow]:
        return stream_jsonl(index_path, TacticRow)

    def slice_predicate(self, goal_slice: str) -> Callable[[TacticRow], bool]:
        return goal_slice_predicate(goal_slice)

    def configure(self, config: RunConfig) -> RunConfig:
        """Additions to the run's config, recorded in run.json:

        - with several samples per goal and no --lsrb-temperature, sample at SAMPLED_TEMPERATURE
          instead of the suite's 0: at 0, `--lsrb-samples 4` gave 4 identical answers on 50 of 50
          goals (pass@4 = pass@1 at 4x the cost);
        - with Lean verification, `profiles_sha256`: the replay profiles' contents are part of the
          config hash, so resuming after editing a profile is refused as another config;
        - with --lsrb-answer search, `search`: the protocol and its budgets (only a search run's
          identity holds them, so adding them changed no other run's hash);
        - with SorryDB's reference strategies (`--lsrb-adapter sorrydb-tactics`/`sorrydb-rfl`),
          their own samples per sorry (12: one per tactic; 1), another count refused.
        """
        config = _reference_samples(config)
        if config.verification in ("synthetic", "repo_replay"):
            path = resolve_profiles_path(config.values.get("profiles"), config.suite.root)
            extra = {**config.extra_identity, "profiles_sha256": profiles_digest(path)}
            config = dataclasses.replace(config, extra_identity=extra)
        if (
            answer_mode(config.values) == "search"
        ):  # the protocol and its budgets, in a search's identity only
            search = {
                "protocol": "sorrydb-tactic-by-tactic",
                "iterations": int(config.values.get("search_iterations") or DEFAULT_ITERATIONS),
                "failures": int(config.values.get("search_failures") or 3),
                "parse": str(config.values.get("search_parse") or SEARCH_PARSERS[0]),
            }
            config = dataclasses.replace(config, extra_identity={**config.extra_identity, "search": search})
        short = int(config.values.get("max_tokens") or 0) < PROOF_MAX_TOKENS
        if answer_mode(config.values) == "proof" and "max_tokens" not in config.from_command_line and short:
            config = dataclasses.replace(config, values={**config.values, "max_tokens": PROOF_MAX_TOKENS})
        if config.samples <= 1 or "temperature" in config.from_command_line:
            return config
        if (config.temperature or 0.0) > 0.0:
            return config
        return dataclasses.replace(config, values={**config.values, "temperature": SAMPLED_TEMPERATURE})

    def __init__(self) -> None:
        # Each thread's last prompt: an item's samples run back to back, so rendering and hashing
        # it once per item (per thread, when samples run in parallel) is enough.
        self._last = threading.local()

    def _prompt(self, ctx: AttemptContext[TacticRow], row: TacticRow) -> _Prompt:
        suite = ctx.suite
        last: tuple[TacticRow, SuiteSpec, _Prompt] | None = getattr(self._last, "prompt", None)
        if last is not None and last[0] is row and last[1] is suite:
            return last[2]
        lines = ctx.options.get("context_lines")
        site = None
        if ctx.options.get("prompt") == "sorrydb":  # SorryDB's words (tactic/prompts.py)
            source = _source(ctx, row)
            if int(ctx.options.get("feedback_rounds") or 0) > 0:  # its self-correcting prompt
                text = agentic_prompt(source, row.goal_text, "", lines)
                cut_at = source.start_line
            else:
                text = one_shot_prompt(source, row.goal_text, lines)
                cut_at = source.end_line
            messages: tuple[Message, ...] = (Message("user", text),)
            shown = file_context(source.text, cut_at, lines)
            site = context_site(shown, source, row.end_column, cut_at)
        else:
            context, column = None, row.start_column
            if ctx.options.get("context") == "file":
                from pytest_lsrb.tactic.verifiers.base import LeanVerifierBase

                found = ctx.verifier.source_file(row) if isinstance(ctx.verifier, LeanVerifierBase) else None
                if found is not None:  # (mode none has no source)
                    context, column = file_context(found.text, found.end_line, lines), found.start_column
                    site = context_site(context, found, row.end_column, found.end_line)
            messages = build_messages(suite, row, context, answer_mode(ctx.options), column=column)
        as_dicts = [{"role": m.role, "content": m.content} for m in messages]
        prompt = (messages, prompt_hash(messages), as_dicts, site)
        self._last.prompt = (row, suite, prompt)
        return prompt

    def calls_per_attempt(self, values: Mapping[str, Any]) -> int:
        """One call, and one more per `--lsrb-feedback-rounds`; a search makes up to
        `--lsrb-search-iterations`."""
        if answer_mode(values) == "search":
            return max(1, int(values.get("search_iterations") or DEFAULT_ITERATIONS))
        return 1 + max(0, int(values.get("feedback_rounds") or 0))

    def run_attempt(self, ctx: AttemptContext[TacticRow]) -> TacticFields:
        """One answer, checked; with `--lsrb-feedback-rounds N`, up to N more rounds that show the
        model its earlier answers and Lean's reply (`tactic.feedback`), the verdict the last's."""
        if answer_mode(ctx.options) == "search":  # SorryDB's tactic-by-tactic search (tactic/search.py)
            from pytest_lsrb.tactic.search import search_attempt

            return cast(TacticFields, search_attempt(self.name, ctx))
        row = ctx.case.row
        messages, hashed, prompt, site = self._prompt(ctx, row)
        fields, said, result = self._answer_once(ctx, row, messages, hashed, prompt, site)
        rounds = int(ctx.options.get("feedback_rounds") or 0)
        if rounds <= 0:
            return fields
        from pytest_lsrb.tactic import feedback

        first = fields
        done: list[TacticFields] = [fields]
        tried: list[feedback.Tried] = []
        kept = []
        while True:
            failed = feedback.model_failed(fields)
            error = feedback.what_lean_said(fields, said) if failed else None
            kept.append(feedback.round_entry(len(done), fields, error, result))
            if error is None or len(done) > rounds:
                break
            # the model's raw response, as SorryDB shows it back (not the proof read from it)
            tried.append(feedback.Tried(str(fields.get("raw_output") or ""), error))
            if ctx.options.get("prompt") == "sorrydb":  # the section in its place in SorryDB's prompt
                section = feedback.feedback_section(tried)
                text = agentic_prompt(
                    _source(ctx, row), row.goal_text, section, ctx.options.get("context_lines")
                )
                asked: tuple[Message, ...] = (Message("user", text),)
            else:
                asked = feedback.with_feedback(messages, tried)
            as_dicts = [{"role": m.role, "content": m.content} for m in asked]
            fields, said, result = self._answer_once(ctx, row, asked, prompt_hash(asked), as_dicts, site)
            done.append(fields)
        out: TacticFields = feedback.combined(first, done)  # type: ignore[assignment]
        out["feedback_rounds"] = kept
        return out

    def _answer_once(
        self,
        ctx: AttemptContext[TacticRow],
        row: TacticRow,
        messages: tuple[Message, ...],
        hashed: str,
        prompt: list[dict[str, str]],
        site: Site | None = None,
    ) -> tuple[TacticFields, tuple[str, ...], GenerationResult]:
        """One request, its answer read and checked: the fields, what the checker said of it in
        full (Lean's messages: a feedback round shows them) and the call's result. With `site`
        (the file the prompt showed), an answer that restates it is read as what replaced the
        target sorry."""
        said: tuple[str, ...] = ()
        request = GenerationRequest(
            messages=messages,
            seed=ctx.case.attempt_seed,
            sampling=ctx.sampling,
            task=self.name,
            # the sample, for adapters whose answer is the sample's (adapters/reference.py)
            context={"goal_text": row.goal_text, "sample_index": ctx.case.sample_index},
        )
        result = ctx.adapter.generate(request)  # (the engine counts its calls, time and tokens)
        fields: TacticFields = {
            "prompt_hash": hashed,
            # The prompt itself, so a report can show what the model was asked.
            "prompt": [dict(m) for m in prompt],
            "raw_output": result.text,
            # The summary's per-repository and per-Lean-version breakdowns group by these.
            "repo_remote": row.repo_remote,
            "repo_lean_version": row.repo_lean_version,
        }
        fields.update(cast(TacticFields, result.error_fields()))  # (a feedback round reads its own)
        mode = answer_mode(ctx.options)
        read_mode = "proof" if mode == "proof" else "tactic"
        answer = read_answer(result.text, read_mode, site) if result.ok else None
        if answer is not None and result.ok and not answer.nonempty:
            fields["generation_error_kind"] = "empty_output"
            fields["generation_error_domain"] = "model_output"
        tactic = answer.tactic if answer else ""
        fields.update(
            {
                "tactic": tactic,
                "proposal": tactic,
                "valid": bool(answer and answer.valid),
                "nonempty": bool(answer and answer.nonempty),
                "contains_sorry": bool(answer and answer.contains_sorry),
                # which rule of tactic/answer.py read the answer, and what was asked for
                "answer_format": answer.answer_format if answer else None,
                "answer_mode": mode,
            }
        )
        refused = answer is not None and (answer.contains_sorry or answer.refusal is not None)
        checked = result.ok and answer is not None and answer.nonempty and not refused
        if checked and ctx.verifier.mode != "none" and tab_indented(result.text, tactic):
            # the model's tab-indented lines, which the reader lined up without them: Lean refuses
            # the text as written (tactic/lean/tabs.py), so the answer is refused in its words
            from pytest_lsrb.tactic.verifiers.base import tabs_refused

            verdict = tabs_refused()
            said = verdict.messages
            fields.update(verdict_fields(verdict))  # type: ignore[typeddict-item]
        elif checked:
            verdict = ctx.verifier.verify(row, tactic, attempt_seed=ctx.case.attempt_seed)
            said = verdict.messages
            fields.update(verdict_fields(verdict))  # type: ignore[typeddict-item]
        elif answer is not None and refused and ctx.verifier.mode != "none":
            # refused before Lean, the model's failure: a sorry in it, or another statement proved
            fields.update(
                {
                    "verification_attempted": False,
                    "verification_outcome": "forbidden_token",
                    "verification_success": False,
                    "verification_error_kind": "forbidden_token",
                    "verification_error_domain": "model",
                }
            )
            if answer.refusal is not None and not answer.contains_sorry:
                fields["verification_error_subkind"] = "changed_statement"
                fields["verification_detail"] = answer.refusal
                said = (answer.refusal,)
        return fields, said, result

    def judge(self, record: AttemptRecord) -> Judgement:
        tactic = record.get("tactic") or ""
        if record.get("contains_sorry"):
            return Judgement("fail", f"the tactic {tactic!r} contains a forbidden token")
        if record.get("verification_error_subkind") == "changed_statement":
            return Judgement("fail", str(record.get("verification_detail")))
        if record.get("verification_attempted") and record.get("verification_success"):
            return PASS  # Lean closed it: Lean's word over the tactic list's (a project's own macro)
        if not record.get("valid"):
            shown = tactic or (record.get("raw_output") or "")[:80]
            return Judgement("fail", f"no valid Lean tactic in the model output ({shown!r})")
        if record.get("verification_attempted") and not record.get("verification_success"):
            sub = record.get("verification_error_subkind")
            kind = str(record.get("verification_outcome")) + (f"/{sub}" if sub else "")
            return Judgement("fail", f"the tactic {tactic!r} did not verify: {kind}")
        return PASS

    def check_options(self, values: Mapping[str, Any]) -> None:
        """Feedback rounds feed Lean's reply back: without a checker there is none to feed; a
        search runs on the REPL's proof states and shows Lean's replies."""
        if answer_mode(values) == "search":
            from pytest_lsrb.tactic.search import check_search_options

            check_search_options(values)
        from pytest_lsrb.core.errors import LsrbUsageError

        if int(values.get("feedback_rounds") or 0) > 0 and values.get("verification", "none") == "none":
            raise LsrbUsageError(
                "--lsrb-feedback-rounds shows the model Lean's reply to its answer; it needs "
                "--lsrb-verification synthetic or repo_replay."
            )
        if values.get("prompt") == "sorrydb":
            if answer_mode(values) == "tactic":
                raise LsrbUsageError(
                    "--lsrb-prompt sorrydb asks for the code with the sorry replaced, a whole proof; "
                    "it needs --lsrb-answer proof."
                )
            if values.get("verification", "none") == "none":
                raise LsrbUsageError(
                    "--lsrb-prompt sorrydb shows the file the sorry is in; it needs "
                    "--lsrb-verification synthetic or repo_replay."
                )

    def row_keywords(self, row: TacticRow) -> list[str]:
        return list(row.keywords())

    def summary_accumulator(self, samples_per_item: int) -> TacticSummary:
        return TacticSummary(samples_per_item)

    def summary_fields(self, config: RunConfig) -> dict[str, Any]:
        from pytest_lsrb.adapters.reference import REFERENCE_ADAPTERS
        from pytest_lsrb.tactic.profiles import profile_config_path

        path = profile_config_path(config["verification"], config["profiles"], config.suite.root)
        fields: dict[str, Any] = {"profile_config_path": path}
        reference = REFERENCE_ADAPTERS.get(str(config["adapter"]))
        if reference is not None:  # the strategy's own figure: a sorry counts when any sample does
            k = reference.samples_per_item()
            fields["headline"] = {
                "metric": f"verification_pass_at_k_{k}",
                "label": f"pass@{k}",
                "protocol": f"SorryDB {reference.strategy}@{reference.commit}",
                "row": reference.row or None,
            }
        return fields

    def score_label(self, values: Mapping[str, Any]) -> str:
        """The progress line's running score: answers Lean closed, or valid ones unverified."""
        return "valid" if values.get("verification", "none") == "none" else "closed"

    def terminal_rows(self, summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = []  # (contains_sorry_rate: the family's metric, `tactic.metrics`)
        if (summary.get("config") or {}).get("verification", "none") != "none":
            from pytest_lsrb.tactic.verifiers.base import (
                unjudged_note,  # the Lean package: only when verifying
            )

            note = unjudged_note(summary)
            if note:
                rows.append(("Lean could not judge", note))
        return rows

    def terminal_lines(self, summary: Mapping[str, Any]) -> list[str]:
        return []

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        answer = mock_tactic_answer(str(context.get("goal_text", "")), seed)
        if "search_state" in context:  # a search step: `[state_id] tactic` (tactic/search.py)
            return f"[{context['search_state']}] {read_answer(answer).tactic.split(chr(10))[0]}"
        return answer


def _reference_samples(config: RunConfig) -> RunConfig:
    """A SorryDB reference strategy's run: its own samples per sorry (one per tactic), or a usage
    error when `--lsrb-samples` asks for another count."""
    from pytest_lsrb.adapters.reference import REFERENCE_ADAPTERS

    reference = REFERENCE_ADAPTERS.get(str(config.values.get("adapter")))
    if reference is None:
        return config
    k = reference.samples_per_item()
    if "samples" in config.from_command_line and config.samples != k:
        from pytest_lsrb.core.errors import LsrbUsageError

        raise LsrbUsageError(
            f"--lsrb-adapter {reference.name} tries SorryDB's {reference.strategy} tactics, one per "
            f"sample: its run has {k} sample(s) per sorry (got --lsrb-samples {config.samples})."
        )
    return dataclasses.replace(config, values={**config.values, "samples": k})


def _source(ctx: AttemptContext[TacticRow], row: TacticRow) -> SourceFile:
    """The file SorryDB's prompts show for the row: the verifier's (repo_replay the repository's,
    synthetic the restated goal's script), or an empty one where there is none to read (the
    attempt's check then says why)."""
    from pytest_lsrb.tactic.verifiers.base import LeanVerifierBase

    found = ctx.verifier.source_file(row) if isinstance(ctx.verifier, LeanVerifierBase) else None
    return found or SourceFile("", row.start_line, row.start_column, row.end_line)


class TacticSummary:
    """Tactic-suite additions: verification outcomes by kind, replay profiles and the progress
    rate (the share of answers holding sorry is the family's metric, `tactic.metrics`).

    `verification_progress_rate`: of the judged checks (Lean decided, for or against the model),
    the share whose tactic left goals without an error (`progress`). It is not success: only
    `closed` counts there; it says how often the model moved the proof without finishing it.
    """

    def __init__(self, samples_per_item: int = 1) -> None:
        self.samples_per_item = samples_per_item
        self.by_repo: dict[str, GroupCounts] = {}
        self.by_lean: dict[str, GroupCounts] = {}
        self._repo_groups: dict[str, GroupCounts] = {}  # remote -> its repository's group
        self.outcomes: Counter[str] = Counter()
        self.profiles: Counter[str] = Counter()
        self.judged = 0
        self.synthetic = 0  # attempts verified in synthetic mode, and how many of those never
        self.unrestated: Counter[str] = Counter()  # reached Lean as a restated goal

    def add(self, record: AttemptRecord) -> None:
        st, won = verdict(record)  # outcomes' rule, read once for every count below
        judged = st == JUDGED
        if record.get("verification_attempted"):
            outcome = str(record.get("verification_outcome"))
            self.outcomes[outcome] += 1
            if judged:
                self.judged += 1
            if record.get("verification_mode") == "synthetic":
                self.synthetic += 1
                if outcome in ("skipped_unrestatable", "reconstruction_failed"):
                    self.unrestated[outcome] += 1
        profile = record.get("repo_replay_profile_id")
        if profile:
            self.profiles[str(profile)] += 1
        remote, lean = record.get("repo_remote"), record.get("repo_lean_version")
        item_id = str(record["item_id"]) if remote or lean else ""
        if remote:
            remote = str(remote)  # (a damaged record read back may hold anything here)
            group = self._repo_groups.get(remote)
            if group is None:  # one name per remote: the repository's group, made once
                group = self.by_repo.setdefault(repo_name(remote), GroupCounts())
                self._repo_groups[remote] = group
            group.count(item_id, judged, won)
        if lean:
            self.by_lean.setdefault(str(lean), GroupCounts()).count(item_id, judged, won)

    def finish(self) -> dict[str, Any]:
        subset: dict[str, Any] = {}
        if self.synthetic:  # what every synthetic rate is over (engine.outcomes.subset_note)
            subset["verification_judged_subset"] = {
                "judged": self.judged,
                "not_restatable": self.unrestated["skipped_unrestatable"],
                "not_reconstructible": self.unrestated["reconstruction_failed"],
            }
        return {
            **subset,
            "verification_outcomes": dict(sorted(self.outcomes.items())),
            "verification_progress_rate": rate(self.outcomes["progress"], self.judged),
            "profile_match_counts": dict(sorted(self.profiles.items())),
            "by_repository": {k: v.finish(self.samples_per_item) for k, v in sorted(self.by_repo.items())},
            "by_lean_version": {k: v.finish(self.samples_per_item) for k, v in sorted(self.by_lean.items())},
        }
