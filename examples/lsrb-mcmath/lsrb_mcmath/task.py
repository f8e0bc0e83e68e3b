"""Task `mcmath`: a question and four lettered choices in, one letter out, checked by a verifier."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lsrb_mcmath.rows import McRow
from pytest_lsrb import (
    AttemptContext,
    AttemptFields,
    AttemptRecord,
    GenerationRequest,
    Message,
    SuiteSpec,
    Task,
    stream_jsonl,
    verification_fields,
)

# "B", "(B)", "B.", "Answer: B", "The answer is B" (any case); anything else has no letter.
_LETTER = re.compile(r"(?:the\s+)?(?:answer\s*(?:is|:)?\s*)?\(?([A-D])\)?\.?", re.IGNORECASE)


def read_letter(text: str) -> str | None:
    """The letter the model chose, from the first non-blank line of its output."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    found = _LETTER.fullmatch(lines[0].strip()) if lines else None
    return found.group(1).upper() if found else None


class McFields(AttemptFields, total=False):
    """What an mcmath attempt adds to the fields every attempt has."""

    abs_error: float | None
    """|chosen - right| when both choices are numbers (read by the metric `mean_abs_error`)."""


class McRecord(AttemptRecord, McFields):
    """An mcmath attempt's record: readers check its fields too (`Task.record_type`)."""


class McMathTask(Task[McRow]):
    name = "mcmath"
    verification_modes = ("mcmath_exact", "none")
    record_type = McRecord

    def load_rows(self, suite: SuiteSpec, index_path: Path) -> Iterator[McRow]:
        return stream_jsonl(index_path, McRow)  # a bad row: one sentence naming file, line and field

    def run_attempt(self, ctx: AttemptContext[McRow]) -> McFields:
        """One question asked, its letter read and checked: the answer and the verdict. The calls,
        time, tokens and generation error are the harness's count (it wraps `ctx.adapter`)."""
        row = ctx.case.row
        system, user = ctx.suite.render_prompt({"question": row.question, "choices": row.choices_text()})
        messages = (*([Message("system", system)] if system else []), Message("user", user))
        result = ctx.adapter.generate(GenerationRequest(messages, ctx.case.attempt_seed, ctx.sampling))
        if not result.ok:
            return {}  # the harness records why (a timeout, a refused key, ...)
        letter = read_letter(result.text)
        fields: McFields = {
            "proposal": letter or "",
            "valid": letter is not None,
            "nonempty": bool(result.text.strip()),
        }
        chosen, right = (row.number(letter), row.number(row.answer)) if letter else (None, None)
        if chosen is not None and right is not None:
            fields["abs_error"] = abs(chosen - right)
        verdict = ctx.verifier.verify(row, letter or "", attempt_seed=ctx.case.attempt_seed)
        fields.update(verification_fields(verdict))  # type: ignore[typeddict-item]
        return fields

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """The mock adapter's answer: always the first choice (a baseline that knows nothing)."""
        return "A"
