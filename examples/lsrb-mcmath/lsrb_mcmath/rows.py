"""One row of the suite's index.jsonl: a question, four choices and the letter of the right one."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict

LETTERS = ("A", "B", "C", "D")


class McRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    question: str
    choices: tuple[str, str, str, str]
    answer: Literal["A", "B", "C", "D"]

    def content_hash(self) -> str:
        """What the selection hash is made of: the row's canonical JSON."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()

    def number(self, letter: str) -> float | None:
        """The choice `letter` names, as a number (None when it is not one)."""
        try:
            return float(self.choices[LETTERS.index(letter)])
        except ValueError:
            return None

    def choices_text(self) -> str:
        return "\n".join(f"{letter}. {choice}" for letter, choice in zip(LETTERS, self.choices, strict=True))
