"""The item table's data: one row per attempt, embedded once as JSON and rendered by report.js.

Model output is hostile data. It travels inside `<script type="application/json">` with every `<`,
`>` and `&` escaped as a JSON unicode escape, so no byte sequence in it can close the element or
open a tag; the page puts it into the DOM with `textContent` only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.output.files import finite_or_none
from pytest_lsrb.report.aggregate import Scored, attempt_tokens
from pytest_lsrb.report.compare import Flip

# Long texts are cut so one runaway output cannot bloat the page (the full text is in attempts.jsonl).
MAX_TEXT = 20_000
MAX_ANSWER = 4_000

COLUMNS = (
    "item",
    "k",
    "outcome",
    "answer",
    "verdict",
    "latency",
    "tokens",
    "group",
    "base",
    "flip",
    "raw",
    "prompt",
    "message",
    "extra",
    "base_answer",
)

# Record fields shown in the detail view besides the ones that have their own column.
_DETAIL_FIELDS = (
    "generation_error_kind",
    "generation_error_domain",
    "generation_error_message",
    "verification_mode",
    "verification_outcome",
    "verification_error_kind",
    "verification_error_domain",
    "verification_error_subkind",
    "verification_detail",
    "verification_latency_ms",
    "repo_replay_profile_id",
    "valid",
    "nonempty",
    "contains_sorry",
    "cached",
    "model_calls",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
    "served_model",
    "result_is_starting_skeleton",
    "fallback_result",
    "model_valid_candidates",
    "attempt_seed",
    "model",
    "prompt_hash",
    "problem_set",
    "domain",
    "nmse_id",
    "nmse_ood",
    "acc_tau_id",
    "acc_tau_ood",
    "r2_id",
    "r2_ood",
    "symbolic_match",
    "method",
    "equation",
)


def clean_text(value: Any, limit: int = MAX_TEXT) -> str:
    """A string safe to serialise: lone surrogates replaced, cut at `limit` with a note."""
    text = value if isinstance(value, str) else ("" if value is None else json.dumps(value))
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > limit:
        text = text[:limit] + f"\n… [cut: {len(text) - limit} more characters in attempts.jsonl]"
    return text


def prompt_text(prompt: Any) -> str | None:
    """The prompt a record carries (a list of {role, content} messages or plain text)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        parts = []
        for msg in prompt:
            if isinstance(msg, Mapping):
                parts.append(f"── {msg.get('role', '?')} ──\n{msg.get('content', '')}")
            elif isinstance(msg, (list, tuple)) and len(msg) == 2:
                parts.append(f"── {msg[0]} ──\n{msg[1]}")
        return "\n\n".join(parts) if parts else None
    return None


def verdict_of(rec: AttemptRecord) -> str:
    kind = rec.get("generation_error_kind")
    if kind:
        return f"generation: {kind}"
    if rec.get("verification_attempted") or rec.get("verification_error_kind"):
        sub = rec.get("verification_error_subkind")
        outcome = rec.get("verification_outcome") or rec.get("verification_error_kind")
        return f"{outcome}/{sub}" if sub else str(outcome)
    return "valid" if rec.get("valid") else "invalid"


def group_of(s: Scored) -> str:
    group = s.record.get("problem_group")
    if group:  # llm_srbench: its Table 1 group
        return str(group)
    repo = s.facets.get("repo")
    return str(repo) if repo else ""


def shown_answer(rec: AttemptRecord, answer_field: str) -> Any:
    answer = rec.get(answer_field)
    return rec.get("proposal") if answer in (None, "") else answer


def answers_text(answers: Any) -> str | None:
    """An attempt's bounded log of model answers (`model_answers`) as text, for the raw output
    pane when the result itself is no answer of the model's (LLM-SR's starting skeleton)."""
    if not isinstance(answers, list) or not answers:
        return None
    parts = []
    for entry in answers:
        if isinstance(entry, dict):
            parts.append(f"--- call {entry.get('call')} [{entry.get('status')}]\n{entry.get('answer') or ''}")
    return "\n\n".join(parts) or None


def item_payload(
    scored: Sequence[Scored],
    answer_field: str,
    baseline: Sequence[Scored] | None = None,
    flips: Sequence[Flip] = (),
) -> dict[str, Any]:
    """{"columns": [...], "rows": [[...], ...], "prompts": {key: text}, "baseline": bool}."""
    base_outcome = {(b.item_id, int(b.record["sample_index"])): b.judgement.outcome for b in baseline or ()}
    base_answer = {
        (b.item_id, int(b.record["sample_index"])): shown_answer(b.record, answer_field)
        for b in baseline or ()
    }
    flip_of = {f.item_id: f.direction for f in flips}
    prompts: dict[str, str] = {}
    rows = []
    any_tokens = False
    for s in scored:
        rec = s.record
        text = prompt_text(rec.get("prompt"))
        key = None
        if text is not None:
            key = str(rec.get("prompt_hash") or hashlib.sha256(text.encode("utf-8", "replace")).hexdigest())
            prompts.setdefault(key, clean_text(text))
        answer = shown_answer(rec, answer_field)
        extra = {f: finite_or_none(rec.get(f)) for f in _DETAIL_FIELDS if rec.get(f) is not None}
        extra = {
            k: clean_text(v, 2000) if isinstance(v, str) else v
            for k, v in extra.items()
            if isinstance(v, (str, int, float, bool))
        }
        rounds = rounds_text(rec.get("feedback_rounds"))
        if rounds:
            extra["feedback_rounds"] = rounds
        tree = search_text(rec.get("search_tree"))
        if tree:
            extra["search_tree"] = tree
        latency = rec.get("latency_ms")
        tokens = attempt_tokens(rec)
        any_tokens = any_tokens or tokens is not None
        sample = int(rec["sample_index"])
        rows.append(
            [
                clean_text(s.item_id, 500),
                sample,
                s.judgement.outcome,
                clean_text(answer, MAX_ANSWER),
                clean_text(verdict_of(rec), 200),
                round(float(latency), 3) if isinstance(latency, (int, float)) else None,
                tokens,
                clean_text(group_of(s), 200),
                base_outcome.get((s.item_id, sample), "") if baseline is not None else "",
                flip_of.get(s.item_id, ""),
                clean_text(rec.get("raw_output") or answers_text(rec.get("model_answers"))),
                key,
                clean_text(s.judgement.message, 2000),
                extra,
                clean_text(base_answer.get((s.item_id, sample)), MAX_ANSWER)
                if baseline is not None
                else None,
            ]
        )
    return {
        "columns": list(COLUMNS),
        "rows": finite_or_none(rows),
        "prompts": prompts,
        "baseline": baseline is not None,
        "tokens": any_tokens,  # the column is shown only when the endpoint reported any
    }


def rounds_text(rounds: Any) -> str | None:
    """An attempt's feedback rounds (`--lsrb-feedback-rounds`) as text for the detail view: each
    round's verdict, answer and what Lean said back."""
    if not isinstance(rounds, list) or not rounds:
        return None
    parts = []
    for r in rounds:
        if not isinstance(r, Mapping):
            continue
        sub = f"/{r.get('subkind')}" if r.get("subkind") else ""
        head = f"round {r.get('round')}: {r.get('outcome')}{sub}"
        parts.append(
            f"{head}\n{r.get('answer') or ''}" + (f"\n-- Lean: {r.get('lean')}" if r.get("lean") else "")
        )
    return clean_text("\n\n".join(parts), 8000)


def search_text(tree: Any) -> str | None:
    """An attempt's proof search (`--lsrb-answer search`) as text for the detail view: why it
    stopped, then each step as `[state] tactic -> new state (goals left)` or `-> error`."""
    if not isinstance(tree, Mapping) or not isinstance(tree.get("steps"), list):
        return None
    calls, root = tree.get("iterations"), tree.get("root")
    lines = [f"stopped: {tree.get('stop')} after {calls} model call(s), from state {root}"]
    for step in tree["steps"]:
        if not isinstance(step, Mapping):
            continue
        if "state" not in step:
            lines.append(f"(unreadable answer) {step.get('answer') or ''}")
            continue
        head = f"[{step.get('state')}] {step.get('tactic')}"
        if step.get("error") is not None:
            lines.append(f"{head} -> error: {step.get('error')}")
        else:
            lines.append(f"{head} -> state {step.get('result')} ({step.get('goals')} goal(s) left)")
    return clean_text("\n".join(lines), 8000)


def json_for_script(obj: Any) -> str:
    """JSON that can sit inside a <script> element: no `<`, `>` or `&` appears literally."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
