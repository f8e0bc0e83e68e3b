"""Tactic-by-tactic proof search on the Lean REPL (`--lsrb-answer search`), SorryDB's protocol
(`sorrydb/strategies/tactic_strategy.py`, `TacticByTacticStrategy`):

- the file is loaded once and the target sorry's `proofState` taken (the verifier's unpatched
  file or control script: `LeanVerifierBase.proof_start`);
- each iteration asks the model, showing the file context and the whole search history, for
  `[state_id] tactic`: which open state to work on and one tactic (SorryDB's prompt, below);
- the tactic runs as one REPL request `{"tactic": t, "proofState": state_id}`; the history gets
  the new state and its goals, or Lean's error;
- it stops when a step completes the proof (the REPL's `proofStatus` "Completed"), after
  `--lsrb-search-failures` consecutive failed steps (SorryDB: 3), after
  `--lsrb-search-iterations` model calls (default 10: SorryDB's class and its CLI,
  `sorrydb/cli/run_tactic_agent.py --max-iterations`), when no state is open, or - as SorryDB
  does - at an answer not of the form `[n] tactic` or naming a state that is not open.

Answers are read as SorryDB's `_generate_tactic` reads them (`parse_choice`, `--lsrb-search-parse
sorrydb`, the default): the text stripped; with a fence, the first fenced block, a leading `lean`
cut off its tag (so a ```lean4 block keeps a `4` before its `[n]` and is not of the form); then
`[n]` at the start and the rest of that line. `--lsrb-search-parse lenient` (`parse_lenient`)
drops reasoning blocks and takes any fence's whole tag off: prover models answer in ```lean4
fences by training, and under SorryDB's parser their search stops at the first answer.

The path of tactics from the sorry's state to the completed one is the found proof (each state
holds all its goals, so the path is a script); it is re-checked as a whole file by the acceptance
rule (`verify`): the REPL's "Completed" is no verdict. Two deliberate differences from SorryDB's
code: a step whose reply holds Lean's error (error recovery admits the goal, so LeanInteract
returns no `LeanError` and SorryDB counted it a success) is a failure here, and a tactic the
guard refuses (`sorry`...) is a failure without being run. The history shown is bounded
(`HISTORY_CHARS`: the initial state and the newest entries; SorryDB's grows without bound).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_lsrb.adapters.base import GenerationRequest, GenerationResult, Message
from pytest_lsrb.engine.outcomes import unanswered_kind
from pytest_lsrb.engine.prompt import prompt_hash
from pytest_lsrb.engine.task import AttemptContext
from pytest_lsrb.engine.verifier import VerificationResult, verification_fields
from pytest_lsrb.tactic.guard import refuse
from pytest_lsrb.tactic.lean.proofstate import ProofStart, TacticStep
from pytest_lsrb.tactic.options import OPTIONS
from pytest_lsrb.tactic.prompts import file_context as cut_file
from pytest_lsrb.tactic.rows import TacticRow

# SorryDB's TACTIC_GENERATION_PROMPT (sorrydb/strategies/tactic_strategy.py), word for word.
SEARCH_PROMPT: Final = """You are an advanced AI that has studied all known mathematics and Lean 4 tactics.
You are proving a theorem in Lean 4 step by step.

You can choose which proof state to work on at each step.

File context:
```lean4
{file_context}
```

Full proof search history (chronological order):
{search_history}

Generate the next action in the proof search:
1. First choose which proof state ID to work on
2. Then provide a single specific Lean 4 tactic to apply to that state

Only provide the proof state ID and tactic, no explanation. Do NOT use the
tactic `sorry`.
Use this exact format: [state_id] tactic

Examples of good responses:
```
[12] rfl
```

```
[5] intro h
```

```
[8] apply Nat.le_antisymm
```"""
NO_CONTEXT: Final = "No file context available."
HISTORY_CHARS: Final = 16000
DEFAULT_ITERATIONS: Final = 10  # SorryDB's TacticByTacticStrategy(max_iterations=10) and CLI default
# `[n]` with nothing after it: SorryDB sends the empty tactic, which Lean cannot parse (a failure).
EMPTY_TACTIC: Final = "an empty tactic (nothing after the state id)"
ERROR_CHARS: Final = 500  # of one Lean error, in the history and the record
_CHOICE: Final = re.compile(r"\[(\d+)\]\s*(.*)")
_FENCED: Final = re.compile(r"```[^\n`]*\n?(.*?)```", re.S)
_REASONING: Final = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.S | re.I)
# `--lsrb-search-parse`: how a step's answer is read (the first is the default).
SEARCH_PARSERS: Final = OPTIONS.choices_of("search-parse")


def parse_choice(text: str) -> tuple[int, str] | None:
    """(state id, tactic) from an answer, read as SorryDB's `TacticByTacticStrategy._generate_tactic`
    reads it (sorrydb/strategies/tactic_strategy.py at 71959ed), or None where SorryDB's returns
    None (the search then stops). The answer is stripped; with a "```" in it, the text is split on
    "```", the blocks inside fences are taken with a leading `lean` cut off (only those four
    letters: ```lean4 leaves `4`), and the first one is read; then `[n]` must start the text and
    the tactic is the rest of that line (an empty tactic is SorryDB's too)."""
    text = text.strip()
    if not text:
        return None
    if "```" in text:
        blocks = [b[4:] if b.startswith("lean") else b for b in text.split("```")[1::2]]
        if blocks:
            text = blocks[0].strip()
    match = _CHOICE.match(text)
    if match is None:
        return None
    return int(match.group(1)), match.group(2).strip()


def parse_lenient(text: str) -> tuple[int, str] | None:
    """`--lsrb-search-parse lenient`: as `parse_choice`, but reasoning blocks are dropped first and
    a fence's whole language tag (`lean4`, `tactic`) is not the answer; an empty tactic is None."""
    text = _REASONING.sub("", text).strip()
    fenced = _FENCED.search(text)
    if fenced:
        text = fenced.group(1).strip()
    match = _CHOICE.match(text)
    if match is None or not match.group(2).strip():
        return None
    return int(match.group(1)), match.group(2).strip()


def parser_for(name: str | None) -> Callable[[str], tuple[int, str] | None]:
    """The step reader `--lsrb-search-parse` names (None: the default, SorryDB's)."""
    return parse_lenient if name == "lenient" else parse_choice


def format_goals(goals: tuple[str, ...] | list[str]) -> str:
    """SorryDB's `_format_goals`."""
    if not goals:
        return "No goals."
    return "```\n" + "\n\n".join(goals) + "\n```"


def bounded_history(entries: list[str], limit: int = HISTORY_CHARS) -> str:
    """The history for the prompt: every entry while it fits in `limit` characters, else the
    first (the initial state) and the newest that fit, the gap said."""
    text = "\n".join(entries)
    if len(text) <= limit or len(entries) < 2:
        return text[-limit:] if len(entries) < 2 else text
    head, kept, used = entries[0], [], len(entries[0])
    for entry in reversed(entries[1:]):
        if used + len(entry) + 64 > limit:
            break
        kept.append(entry)
        used += len(entry) + 1
    dropped = len(entries) - 1 - len(kept)
    return "\n".join([head, f"({dropped} earlier entries omitted)", *reversed(kept)])


@dataclass
class Asked:
    """One model call of the search: its text, or that it failed (the attempt's error then)."""

    text: str
    ok: bool


@dataclass
class Searched:
    """What a search did: the proof found (None: none), why it stopped, and its tree."""

    proof: str | None
    stop: str
    iterations: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    root: int = 0
    parsed: int = 0  # answers of the form `[n] tactic`
    failed_run: Any = None  # the backend's LeanRun when the REPL could not run a step

    def tree(self) -> dict[str, Any]:
        """The record's `search_tree`."""
        return {"root": self.root, "stop": self.stop, "iterations": self.iterations, "steps": self.steps}


def search(
    start: ProofStart,
    ask: Callable[[str, int, str], Asked],
    *,
    file_context: str | None,
    max_iterations: int,
    max_failures: int,
    refuse: Callable[[str], str | None],
    parse: Callable[[str], tuple[int, str] | None] = parse_choice,
) -> Searched:
    """Run the search from `start`. `ask(prompt, state, goal)` calls the model (the newest open
    state and its goals ride along for adapters that answer without a model); `refuse(tactic)`
    is the guard's reason to refuse a tactic, or None; `parse` reads a step from an answer."""
    root = start.proof_state
    open_states: dict[int, tuple[str, ...]] = {root: (start.goal,)}
    parents: dict[int, tuple[int, str]] = {}
    history = [f"Initial state (ID: {root}):\n{format_goals([start.goal])}"]
    out = Searched(None, "iterations", 0, root=root)
    failures = 0
    newest = root
    while out.iterations < max_iterations:
        if not open_states:
            out.stop = "no_open_state"
            break
        out.iterations += 1
        prompt = SEARCH_PROMPT.format(
            file_context=file_context or NO_CONTEXT, search_history=bounded_history(history)
        )
        asked = ask(prompt, newest, "\n\n".join(open_states.get(newest, (start.goal,))))
        if not asked.ok:
            out.stop = "model_error"
            break
        choice = parse(asked.text)
        if choice is None:
            out.stop = "unparsed"
            out.steps.append({"answer": asked.text[:200]})
            break
        out.parsed += 1
        state, tactic = choice
        if state not in open_states:
            out.stop = "invalid_state"
            out.steps.append({"state": state, "tactic": tactic, "error": "not an open state"})
            break
        entry: dict[str, Any] = {"state": state, "tactic": tactic}
        out.steps.append(entry)
        refused = refuse(tactic) or (EMPTY_TACTIC if not tactic else None)
        step = None if refused else start.step(tactic, state)
        if step is not None and not isinstance(step, TacticStep):  # the REPL's trouble, not the model's
            out.stop, out.failed_run = "repl_failed", step
            entry["error"] = str(getattr(step, "detail", ""))[:ERROR_CHARS]
            break
        error = refused or (step.lean_error if step is not None else None)
        if step is not None and error is None and step.refused is not None:
            error = step.refused
        if error is not None or step is None:
            failures += 1
            entry["error"] = (error or "")[:ERROR_CHARS]
            history.append(f"State {state}: Applied tactic '{tactic}' → Failed: {entry['error']}")
            if failures >= max_failures:
                out.stop = "failures"
                break
            continue
        failures = 0
        new = step.proof_state
        assert new is not None  # a step without a Lean error made a state
        entry.update({"result": new, "goals": len(step.goals)})
        parents[new] = (state, tactic)
        history.append(f"State {state}: Applied tactic '{tactic}' → State {new}")
        if step.closes and step.status in ("", "Completed"):
            history.append("  Result: Success - Proof completed!")
            out.proof, out.stop = "\n".join(_path(parents, new, root)), "completed"
            break
        history.append(f"Result: New goal(s) (State ID: {new}):\n{format_goals(step.goals)}")
        if step.goals:
            open_states[new] = step.goals
            newest = new
    return out


def _path(parents: dict[int, tuple[int, str]], state: int, root: int) -> list[str]:
    """The tactics from `root` to `state`, in order (SorryDB's `_extract_proof_from_tree`)."""
    tactics: list[str] = []
    while state != root and state in parents:
        state, tactic = parents[state]
        tactics.append(tactic)
    return tactics[::-1]


# -- one attempt ----------------------------------------------------------------------------------


def verdict_fields(verdict: VerificationResult) -> dict[str, Any]:
    """A Lean check's record fields: the shared `verification_*` ones, the profile and toolchain
    (one spelling for the one-shot, feedback and search attempts alike)."""
    return {
        **verification_fields(verdict),
        "repo_replay_profile_id": verdict.profile_id,
        "verification_toolchain": verdict.toolchain,
    }


def search_attempt(task_name: str, ctx: AttemptContext[TacticRow]) -> dict[str, Any]:
    """One `--lsrb-answer search` attempt: the search, then its proof checked as a whole file.

    The record: `tactic`/`proposal` the proof found (empty: none), `search_tree` the steps,
    `raw_output` the last answer, `prompt` the first prompt (calls, tokens and time of every call
    are the engine's count, `engine.calls`). No proof found is the model's
    `lean_error`/`no_proof_found` (the detail says why the search stopped); a search whose every
    model call failed outside the model, or whose REPL failed, says nothing about the model (the
    judging rule, engine/outcomes.py)."""
    from pytest_lsrb.tactic.verifiers.base import LeanVerifierBase, from_failed_run

    row = ctx.case.row
    verifier = ctx.verifier
    fields: dict[str, Any] = {
        "repo_remote": row.repo_remote,
        "repo_lean_version": row.repo_lean_version,
        "answer_mode": "search",
        "answer_format": "search",
        "raw_output": "",
        "tactic": "",
        "proposal": "",
        "valid": False,
        "nonempty": False,
        "contains_sorry": False,
    }
    assert isinstance(verifier, LeanVerifierBase)  # check_options refuses --lsrb-verification none
    start = verifier.proof_start(row)
    if not isinstance(start, ProofStart):
        fields.update(verdict_fields(start))
        return fields
    source = verifier.source_file(row)  # SorryDB's cut: the file's last lines up to the sorry's
    lines = ctx.options.get("context_lines")
    file_context = cut_file(source.text, source.start_line, lines) if source is not None else None
    calls = 0
    failed: Counter[str] = Counter()
    prompts: list[list[dict[str, str]]] = []
    last: list[GenerationResult] = []

    def ask(prompt: str, state: int, goal: str) -> Asked:
        nonlocal calls
        messages = (Message("user", prompt),)
        if not prompts:
            prompts.append([{"role": m.role, "content": m.content} for m in messages])
            fields["prompt_hash"] = prompt_hash(messages)
        request = GenerationRequest(
            messages=messages,
            # one seed per call: a sampled model answers each step afresh
            seed=(ctx.case.attempt_seed + calls) % 2**31,
            sampling=ctx.sampling,
            task=task_name,
            context={"goal_text": goal, "search_state": state, "sample_index": ctx.case.sample_index},
        )
        result = ctx.adapter.generate(request)  # (the engine counts its calls, time and tokens)
        calls += 1
        last[:] = [result]
        if not result.ok:
            failed[str(result.error_kind)] += 1
        return Asked(result.text if result.ok else "", result.ok)

    def refused(tactic: str) -> str | None:
        refusal = refuse(tactic, forbid_search=verifier.lean.forbid_search_tactics)
        return f"refused before Lean: {refusal.detail}" if refusal is not None else None

    searched = search(
        start,
        ask,
        file_context=file_context,
        max_iterations=int(ctx.options.get("search_iterations") or DEFAULT_ITERATIONS),
        max_failures=int(ctx.options.get("search_failures") or 3),
        refuse=refused,
        parse=parser_for(ctx.options.get("search_parse")),
    )
    fields["prompt"] = prompts[0] if prompts else []
    fields["search_tree"] = searched.tree()
    if last:
        fields["raw_output"] = last[0].text
    if unanswered_kind(calls, failed) is not None:
        return fields  # the model never answered: the search says nothing about it (the engine's error)
    fields["nonempty"] = searched.parsed > 0 or any(bool(s.get("answer")) for s in searched.steps)
    fields["valid"] = searched.parsed > 0
    if searched.proof is not None:
        fields["tactic"] = fields["proposal"] = searched.proof
        fields.update(
            verdict_fields(verifier.verify(row, searched.proof, attempt_seed=ctx.case.attempt_seed))
        )
        return fields
    if searched.failed_run is not None:
        fields.update(
            verdict_fields(from_failed_run(searched.failed_run, stage="tactic") or _no_proof(searched))
        )
        return fields
    if searched.parsed:
        fields.update(verdict_fields(_no_proof(searched)))
    return fields


def _no_proof(searched: Searched) -> VerificationResult:
    return VerificationResult(
        attempted=True,
        success=False,
        outcome="lean_error",
        subkind="no_proof_found",
        detail=f"the search stopped ({searched.stop}) after {searched.iterations} model call(s) "
        f"and {len(searched.steps)} step(s) without a proof",
    )


MAX_SEARCH_ITERATIONS: Final = 10_000


def check_search_options(values: Mapping[str, Any]) -> None:
    """A search needs Lean's replies (a verification mode over a REPL) and budgets >= 1."""
    from pytest_lsrb.core.errors import LsrbUsageError

    if values.get("verification", "none") == "none":
        raise LsrbUsageError(
            "--lsrb-answer search runs tactics on the Lean REPL's proof states; it needs "
            '--lsrb-verification synthetic or repo_replay with a replay_method = "repl" profile.'
        )
    if int(values.get("feedback_rounds") or 0) > 0:
        raise LsrbUsageError(
            "--lsrb-feedback-rounds is for one-shot answers; a search shows Lean's replies itself."
        )
    for name in ("search_iterations", "search_failures"):
        value = values.get(name)
        if value is None:  # the option table's default
            continue
        if not 1 <= int(value) <= MAX_SEARCH_ITERATIONS:
            raise LsrbUsageError(
                f"--lsrb-{name.replace('_', '-')}: expected 1 to {MAX_SEARCH_ITERATIONS:,} (got {value})."
            )
