"""The code blocks of the docs pages and what marks them, read from the Markdown.

Every ```bash and ```python block is a command a reader may copy, so each one carries a marker on
the line right above its fence (an HTML comment, invisible on the site):

- `<!-- run -->`: run by `tests/docs/test_docs_commands.py`, in order with its page's other
  runnable blocks, in one scratch folder per page (with `suites/`, `profiles/` and `examples/`
  linked from the checkout and `../shared` beside it), on the mock adapter; it must exit 0, or
  with the status `<!-- run: status=N -->` names.
- `<!-- llama -->`: needs a real model server; run by `tests/docs/test_docs_llama.py` against
  `lsrb serve` (xllamacpp + the SmolLM2 weights), in order with its page's other such blocks.
- `<!-- skip: REASON -->`: not run (a real server, a Lean toolchain, minutes of work); the test
  prints the reason. Its `--lsrb-*` options and `lsrb` subcommands are still checked to exist.
- `<!-- output -->` above a ```text block: what the runnable block before it prints; its lines
  must appear in that block's output, timing fields aside (`normalized`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>run|skip|output|llama)\s*(?::\s*(?P<arg>.*?))?\s*-->\s*$")
COMMAND_LANGS = frozenset({"bash", "sh", "shell", "console", "python", "py"})


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    marker: str | None  # run | skip | output | llama | None
    arg: str  # the skip's reason, the run's `status=N`
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"

    @property
    def is_command(self) -> bool:
        return self.lang in COMMAND_LANGS

    @property
    def status(self) -> int:
        match = re.fullmatch(r"status=(\d+)", self.arg.strip())
        return int(match.group(1)) if match else 0


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        indent = fence.group("indent")
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        found.append(
            Block(
                page=page,
                line=i + 1,
                lang=fence.group("lang"),
                marker=marker.group("kind") if marker else None,
                arg=(marker.group("arg") or "") if marker else "",
                code="\n".join(body) + "\n",
            )
        )
        i = j + 1
    return found


# Values that differ from run to run: timings, the run directory's start time, rates.
VOLATILE = (
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{12}"), "<RUN>"),
    (re.compile(r"in \d+(\.\d+)?s\b( \([0-9:]+\))?"), "in <T>s"),
    (re.compile(r"^(latency p50/p95\s+).*$"), r"\1<T>"),
    (re.compile(r"^lsrb \d+/\d+ \(\d+%\).*$"), "<PROGRESS>"),
)


def normalized(line: str) -> str:
    line = line.rstrip()
    for pattern, repl in VOLATILE:
        line = pattern.sub(repl, line)
    return line
