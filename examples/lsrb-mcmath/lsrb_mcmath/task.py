"""Task `mcmath`: a question and four lettered choices in, one letter out, checked by a verifier."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lsrb_mcmath.rows import McRow
from pytest_lsrb import AttemptContext, GenerationRequest, Message, Task
from pytest_lsrb.core.rows import stream_jsonl
from pytest_lsrb.engine.records import AttemptFields
from pytest_lsrb.engine.suite import SuiteSpec
from pytest_lsrb.engine.verifier import verification_fields

# "B", "(B)", "B.", "Answer: B", "The answer is B" (any case); anything else has no letter.
_LETTER = re.compile(r"(?:the\s+)?(?:answer\s*(?:is|:)?\s*)?\(?([A-D])\)?\.?", re.IGNORECASE)


def read_letter(text: str) -> str | None:
    """The letter the model chose, from the first non-blank line of its output."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    found = _LETTER.fullmatch(lines[0].strip()) if lines else None
    return found.group(1).upper() if found else None


class McMathTask(Task[McRow]):
    name = "mcmath"
    verification_modes = ("mcmath_exact", "none")

    def load_rows(self, suite: SuiteSpec, index_path: Path) -> Iterator[McRow]:
        return stream_jsonl(index_path, McRow)

    def run_attempt(self, ctx: AttemptContext[McRow]) -> AttemptFields:
        row = ctx.case.row
        system, user = ctx.suite.render_prompt({"question": row.question, "choices": row.choices_text()})
        messages = (*([Message("system", system)] if system else []), Message("user", user))
        request = GenerationRequest(messages, ctx.case.attempt_seed, ctx.sampling, task=self.name)
        result = ctx.adapter.generate(request)
        shown = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
        fields: AttemptFields = {
            "prompt_hash": hashlib.sha256(shown.encode("utf-8")).hexdigest(),
            "raw_output": result.text,
            "latency_ms": round(result.latency_ms, 3),
            "model_calls": result.http_attempts if not result.cached else 0,
            "cached": result.cached,
            "generation_error_kind": result.error_kind,
            "generation_error_domain": result.error_domain,
            "generation_error_message": result.error_message,
            "verification_mode": ctx.verifier.mode,
        }
        if not result.ok:
            return fields
        letter = read_letter(result.text)
        fields.update(
            {"proposal": letter or "", "valid": letter is not None, "nonempty": bool(result.text.strip())}
        )
        chosen, right = (row.number(letter), row.number(row.answer)) if letter else (None, None)
        if chosen is not None and right is not None:  # read by the metric `mean_abs_error`
            fields["abs_error"] = abs(chosen - right)  # type: ignore[typeddict-unknown-key]
        verdict = ctx.verifier.verify(row, letter or "", attempt_seed=ctx.case.attempt_seed)
        fields.update(verification_fields(verdict))  # type: ignore[typeddict-item]
        return fields

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """The mock adapter's answer: always the first choice (a baseline that knows nothing)."""
        return "A"
