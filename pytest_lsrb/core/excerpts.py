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

Text sent again is also made safe to embed (`prompt_safe`): terminal escape sequences and control
characters go (a Lean message or an answer can carry ESC or NUL bytes; newlines and tabs stay), and
`defused` keeps it from opening or closing the prompt's own tags (a fake `</feedback>` in Lean's
reply or in the model's answer): the `<` of such a tag is written `&lt;`.

Programs that reach a prompt after being parsed (LLM-SR's skeletons, LaSR's and the judge's
expressions) are bounded by the equation language's own limits (`equations.parser`,
MAX_SOURCE_CHARS and MAX_TREE_NODES).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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


# A terminal escape sequence (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \\`, or ESC and one
# character), then any control character but newline and tab, DEL, C1, lone surrogates, and the
# bidirectional overrides that reorder what a reader sees.
_ESCAPE: Final = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.)?", re.S)
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def prompt_safe(text: str) -> str:
    """`text` without terminal escapes and control characters (newlines and tabs kept; a
    carriage return ends no line of its own)."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub("", _ESCAPE.sub("", text))


def defused(text: str, tags: Iterable[str]) -> str:
    """`text` in which no `<tag`, `</tag` of `tags` (any case, spaces allowed after `<` and `/`)
    can open or close a tag of the prompt it is embedded in: its `<` is written `&lt;`."""
    names = "|".join(sorted((re.escape(t) for t in tags), key=len, reverse=True))
    if not names:
        return text
    pattern = re.compile(rf"<(?=\s*/?\s*(?:{names})(?![\w-]))", re.I)
    return pattern.sub("&lt;", text)
