"""Reading a tactic out of model output: first tactic line only, reasoning, fences and chatter stripped.

What a chat or reasoning model wraps around its tactic, in the order it is removed:
1. reasoning: `<think>...</think>` (also `<thinking>`, `<reasoning>`); a closing tag whose opening
   tag the server stripped drops everything before it, an opening tag never closed (truncated
   reasoning) drops everything after it;
2. a fenced block: the first ```lean / ```lean4 fence, else the first fence of any language;
3. per line: list markers, markdown labels (`**Tactic:**`, `Next tactic:`), a line that is one
   inline code span, `by ` in front; a prose line holding inline code gives its first code span
   (`Sure! The next tactic is `omega`.` -> `omega`); other prose lines are skipped.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pytest_lsrb.tactic.rows import FORBIDDEN_TOKENS

_REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.S | re.I)
_REASONING_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_REASONING_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)
_FENCE = re.compile(r"```([^\n`]*)\n(.*?)(?:```|\Z)", re.S)
_FORBIDDEN = re.compile(r"(?<![\w.'])(?:" + "|".join(FORBIDDEN_TOKENS) + r")(?![\w'])")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")
_LABEL = re.compile(
    r"^(?:\*\*|__)?\s*(?:the\s+)?(?:next\s+)?(?:lean\s*4?\s+)?(?:tactic|answer|final\s+answer)"
    r"\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*",
    re.I,
)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_CHATTER_OPENERS = re.compile(
    r"^(?:here|sure|certainly|okay|ok|the|this|we|i|i'll|i'd|let's|let\s+me|to|first|now|"
    r"since|because|note|proof|explanation|answer|step)\b[\s,:!]",
    re.I,
)
_TACTIC_START = re.compile(r"^(?:[a-z_][\w.!?']*|[·∙•(⟨\[{<]|·|\?_)")


@dataclass(frozen=True)
class TacticAnswer:
    tactic: str
    nonempty: bool
    contains_sorry: bool
    valid: bool


def strip_reasoning(text: str) -> str:
    """`text` without its reasoning blocks (closed, opening-tag-stripped, or truncated)."""
    text = _REASONING_BLOCK.sub("\n", text)
    closes = list(_REASONING_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _REASONING_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def _fenced(text: str) -> str | None:
    fences = list(_FENCE.finditer(text))
    lean = [f for f in fences if f.group(1).strip().lower() in ("lean", "lean4")]
    chosen = (lean or fences)[:1]
    return chosen[0].group(2) if chosen else None


def _unwrap(candidate: str) -> str:
    """One line without list marker, label, surrounding backticks/bold and a leading `by`."""
    candidate = _LIST_MARKER.sub("", candidate).strip()
    candidate = _LABEL.sub("", candidate).strip()
    if len(candidate) > 4 and candidate.startswith("**") and candidate.endswith("**"):
        candidate = candidate[2:-2].strip()
    whole = _INLINE_CODE.fullmatch(candidate)
    if whole:
        candidate = whole.group(1).strip()
    if candidate.startswith("by ") or candidate == "by":
        candidate = candidate[2:].strip()
    return candidate


def first_tactic_line(raw: str) -> str:
    """The first line of `raw` that reads as a tactic, after reasoning, fences, labels and chatter."""
    text = strip_reasoning(raw.replace("\r\n", "\n"))
    fenced = _fenced(text)
    if fenced is not None:
        text = fenced
    for line in text.split("\n"):
        candidate = line.strip()
        if not candidate or candidate.startswith("--") or candidate.startswith("/-"):
            continue
        candidate = _unwrap(candidate)
        if not candidate:
            continue
        if _is_chatter(candidate) or (not _TACTIC_START.match(candidate) and _INLINE_CODE.search(candidate)):
            code = _INLINE_CODE.search(candidate)
            if code is None:
                continue
            candidate = _unwrap(code.group(1).strip())
            if not candidate:
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


# Pure in the text, and answers repeat (the same model output for many goals, the mock's few
# shapes): each distinct output is read once. TacticAnswer is frozen, so sharing it is safe.
@functools.lru_cache(maxsize=4096)
def read_tactic(raw: str) -> TacticAnswer:
    tactic = first_tactic_line(raw)
    nonempty = bool(tactic)
    has_sorry = contains_forbidden(tactic)
    valid = nonempty and not has_sorry and balanced(tactic) and bool(_TACTIC_START.match(tactic))
    return TacticAnswer(tactic=tactic, nonempty=nonempty, contains_sorry=has_sorry, valid=valid)
