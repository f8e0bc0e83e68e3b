"""Model-written text, bounded where it is kept and where it is sent again.

An answer can be as long as the adapters' body cap allows (megabytes). What a run keeps of one
(an attempt record, a discovery method's memory) and what it puts in a later prompt is an
excerpt: the first `limit` characters, then a marker giving the whole length, so a record stays
small and still says what was cut. The caps, in characters:

- `RECORD_TEXT` (20,000): one answer kept in a record (`raw_output`, `judge_raw_output`,
  `proposal`, each message of a recorded `prompt`); a record whose answer was cut also holds the
  whole length as `<field>_chars`;
- `PROMPT_TEXT` (8,000): one earlier answer replayed in a later prompt (SGA's assistant turns and
  the feedback on them);
- `CONCEPT_TEXT` (1,000): one LaSR concept (its library, the prompts built from it, the record).

Programs that reach a prompt after being parsed (LLM-SR's skeletons, LaSR's and the judge's
expressions) are bounded by the equation language's own limits (`equations.parser`,
MAX_SOURCE_CHARS and MAX_TREE_NODES).
"""

from __future__ import annotations

from typing import Final

RECORD_TEXT: Final = 20_000
PROMPT_TEXT: Final = 8_000
CONCEPT_TEXT: Final = 1_000


def excerpt(text: str, limit: int) -> str:
    """`text` when it is at most `limit` characters, else its first `limit` and a marker."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[cut here: {len(text)} characters in all]"


def cut_length(text: str, limit: int = RECORD_TEXT) -> int | None:
    """The whole length of `text` when `excerpt(text, limit)` cuts it (a record keeps it as
    `<field>_chars` beside the excerpt), else None."""
    return len(text) if len(text) > limit else None
