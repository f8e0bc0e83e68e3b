"""Reading a tactic out of model output: first tactic line only, fences and chatter stripped."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_lsrb.tactic.rows import FORBIDDEN_TOKENS

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
_FORBIDDEN = re.compile(r"(?<![\w.'])(?:" + "|".join(FORBIDDEN_TOKENS) + r")(?![\w'])")
_LABEL = re.compile(r"^(?:\*\*)?(?:next\s+)?(?:lean\s+)?(?:tactic|answer)(?:\*\*)?\s*[:：]\s*", re.I)
_CHATTER_OPENERS = re.compile(
    r"^(?:here|sure|certainly|okay|ok|the|this|we|i|i'll|i'd|let's|let\s+me|to|first|now|"
    r"since|because|note|proof|explanation|answer|step)\b[\s,:]",
    re.I,
)
_TACTIC_START = re.compile(r"^(?:[a-z_][\w.!?']*|[·∙•(⟨\[{<]|·|\?_)")


@dataclass(frozen=True)
class TacticAnswer:
    tactic: str
    nonempty: bool
    contains_sorry: bool
    valid: bool


def first_tactic_line(raw: str) -> str:
    """The first line of `raw` that reads as a tactic, after fences, labels and chatter."""
    text = raw.replace("\r\n", "\n")
    fence = _FENCE.search(text)
    if fence:
        text = fence.group(1)
    for line in text.split("\n"):
        candidate = line.strip()
        if not candidate or candidate.startswith("--") or candidate.startswith("/-"):
            continue
        candidate = _LABEL.sub("", candidate).strip()
        if candidate.startswith("`") and candidate.endswith("`") and len(candidate) > 1:
            candidate = candidate.strip("`").strip()
        if candidate.startswith("by ") or candidate == "by":
            candidate = candidate[2:].strip()
        if not candidate or _is_chatter(candidate):
            continue
        return _strip_trailing_comment(candidate)
    return ""


def _is_chatter(line: str) -> bool:
    if _CHATTER_OPENERS.match(line):
        return True
    if line.endswith(":") and not line.endswith(":="):
        return True
    words = line.split()
    return len(words) >= 6 and line.endswith(".") and line[0].isupper()


def _strip_trailing_comment(line: str) -> str:
    idx = line.find(" --")
    return line[:idx].rstrip() if idx >= 0 else line


def contains_forbidden(text: str) -> bool:
    return _FORBIDDEN.search(text) is not None


def balanced(text: str) -> bool:
    pairs = {")": "(", "]": "[", "}": "{", "⟩": "⟨"}
    stack: list[str] = []
    for ch in text:
        if ch in "([{⟨":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return False
    return not stack


def read_tactic(raw: str) -> TacticAnswer:
    tactic = first_tactic_line(raw)
    nonempty = bool(tactic)
    has_sorry = contains_forbidden(tactic)
    valid = nonempty and not has_sorry and balanced(tactic) and bool(_TACTIC_START.match(tactic))
    return TacticAnswer(tactic=tactic, nonempty=nonempty, contains_sorry=has_sorry, valid=valid)
