# ruff: noqa: E501  (SorryDB's prompts keep their own long lines)
"""SorryDB's own prompts, word for word, and the file context as SorryDB cuts it.

`--lsrb-prompt sorrydb` asks in SorryDB's words (SorryDB/SorryDB at 71959ed, the commit of the
leaderboard's recorded runs):

- one-shot (`LLM_PROMPT`): `sorrydb/strategies/llm_strategy.py` `PROMPT`, the `llm` strategy of
  the leaderboard's one-shot rows (pass@1, pass@32). Its context is the file up to and including
  the sorry's last line (`file_text.splitlines()[: loc.end_line]`; SorryDB keeps the last 300
  lines for its Kimina and Goedel providers: `--lsrb-context-lines 300`);
- self-correcting (`AGENTIC_PROMPT`): `sorrydb/strategies/agentic_strategy.py` `PROMPT`, every
  round of the leaderboard's "SC" rows, the `<feedback>` section in its place inside the prompt
  (empty in the first round, as SorryDB sends it). Its context is the file up to and including
  the sorry's first line (`[: loc.start_line]`);
- tactic by tactic: `tactic/search.py` `SEARCH_PROMPT` (the search always asks in SorryDB's words).

SorryDB sends one user message and no system message. The prompts keep SorryDB's typing as it is
(`</target_sorry` unclosed and trailing spaces in the one-shot prompt). `file_context` is the one
cut of the file for every prompt that shows it (`--lsrb-context file` too): the last N lines
(`--lsrb-context-lines`; unset: the whole file) of `text.splitlines()` up to and including the
given line, raw, as SorryDB's strategies cut them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# sorrydb/strategies/llm_strategy.py PROMPT at 71959ed (`\x20`: SorryDB's trailing spaces).
LLM_PROMPT: Final = """You are an advanced AI that has studied all known mathematics and world expert in Lean4 theorem proving.
Consider the following Lean code:
<context>
```lean
{context}
```
</context>

Its proof goal is
<proof_goal>
```lean
{goal}
```
</proof_goal>

Target sorry is the following:
<target_sorry>
The given file contains a sorry on the last line, column {column}.\x20
</target_sorry

Replace the target sorry on the last line with a valid proof.\x20
Write a short, simple and elegant proof.
Output the ENTIRE code block inside a ```lean block with ONLY the sorry replaced.
If the file is long you should not output again the entire file, but just the last code block that is relevant.
Do not modify anything else - no formatting changes, no whitespace changes, no other edits.
Do not replace other sorries apart from the target one on the last line of the context.
You cannot import any additional libraries.\x20
DO NOT WRITE COMMENTS OR EXPLANATIONS! Just output the modified code block.
If there are other thoughts or explanations, the last code block will be considered as the answer.
"""
# sorrydb/strategies/agentic_strategy.py PROMPT at 71959ed.
AGENTIC_PROMPT: Final = """You are an advanced AI that has studied all known mathematics and world expert in Lean4 theorem proving.
Consider the following Lean code:
<context>
```lean
{context}
```
</context>

Its proof goal is
<proof_goal>
```lean
{goal}
```
</proof_goal>

Target sorry is the following:
<target_sorry>
The given file contains a sorry on the last line, column {column}.
</target_sorry>

You already tried proving the theorem a few times and got the following feedback:
<feedback>
{feedback}
</feedback>
If there is feedback, start by mentioning why the previous attempt failed and how to fix the error.


Replace the target sorry on the last line with a valid proof.
Write a short, simple and elegant proof.
Output the ENTIRE code block inside a ```lean block with ONLY the sorry replaced.
If the file is long you should not output again the entire file, but just the last code block that is relevant.
Do not modify anything else - no formatting changes, no whitespace changes, no other edits.
Do not replace other sorries apart from the target one on the last line of the context.
You cannot import any additional libraries.
DO NOT WRITE COMMENTS OR EXPLANATIONS! Just output the modified code block.
If there are other thoughts or explanations, the last code block will be considered as the answer.
"""

# The tags SorryDB's prompts and feedback are made of: text embedded in them (Lean's messages, the
# model's answers) never opens or closes one (core/excerpts.py `defused`).
TAGS: Final = (
    *("context", "proof_goal", "target_sorry", "feedback", "attempt", "proposed_code"),
    *("error", "code_line", "message", "tool-use"),
)


@dataclass(frozen=True)
class SourceFile:
    """The file a sorry is in, as a prompt shows it: its text and where the sorry is (1-based
    lines, 0-based column)."""

    text: str
    start_line: int
    start_column: int
    end_line: int


def file_context(text: str, last_line: int, lines: int | None = None) -> str:
    """SorryDB's cut: the lines of `text` (`str.splitlines`) up to and including `last_line`, the
    last `lines` of them when `lines` is a positive number (unset or 0: all of them)."""
    kept = text.splitlines()[: max(0, last_line)]
    if lines is not None and lines > 0:
        kept = kept[-lines:]
    return "\n".join(kept)


def one_shot_prompt(source: SourceFile, goal: str, lines: int | None = None) -> str:
    """SorryDB's one-shot prompt for the sorry in `source` (the file up to its last line)."""
    context = file_context(source.text, source.end_line, lines)
    return LLM_PROMPT.format(goal=goal, context=context, column=source.start_column)


def agentic_prompt(source: SourceFile, goal: str, feedback: str, lines: int | None = None) -> str:
    """SorryDB's self-correcting prompt, `feedback` in its place (empty in the first round)."""
    context = file_context(source.text, source.start_line, lines)
    return AGENTIC_PROMPT.format(context=context, goal=goal, column=source.start_column, feedback=feedback)
