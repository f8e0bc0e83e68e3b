"""SorryDB's own recorded answers, read here, against what SorryDB itself extracted from them.

The data (tests/tactic/data/sorrydb_llm_runs.jsonl.gz, built by bench/build_sorrydb_llm_runs.py,
which says where every field comes from): 398 raw answers of Claude Sonnet 4.5, Gemini 3 Flash,
DeepSeek-Prover-V2-671B and Kimina-Prover-72B to SorryDB's `llm` prompt (the file up to the
sorry, "Output the ENTIRE code block ... with ONLY the sorry replaced"), each with the proof
SorryDB's `extract_proof_from_diff` took from it, its checker's verdict, and - for 344 of them -
the source file the prompt showed. Split by a fixed hash (`dev` 2/3, `unseen` 1/3).

Each answer is read as the product reads it (`read_answer(raw, "proof", site)`, the site being
the context SorryDB sent, where its source is stored). The reference is SorryDB's recorded
extraction, never this reader:

- **read right** (verified answers): the reading, placed over the sorry as the splice places it
  (lean/splice.py `block_at`), is SorryDB's proof placed there verbatim, up to what Lean's
  parser skips: comments, trailing blanks and blank lines, runs of spaces inside a line, and the
  layout of a block that keeps each line's indentation relative to its first line. In term
  position the splice writes `(by t)` where SorryDB's text is `by t` (or `t` for `(by exact t)`);
  those are the same term.
- **agreement** (every answer whose SorryDB extraction is well formed - not None, some code, no
  fence, brackets balanced, no line that starts a command such as `theorem` or `import`): the
  same comparison on unverified answers too.

    python bench/bench_sorrydb_llm_runs.py               # dev
    python bench/bench_sorrydb_llm_runs.py --split unseen
    python bench/bench_sorrydb_llm_runs.py --no-context  # read without the source
    python bench/bench_sorrydb_llm_runs.py --show        # each miss, with both readings
"""

from __future__ import annotations

import argparse
import gzip
import inspect
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lsrb.tactic import answer as reader
from pytest_lsrb.tactic.lean.keywords import COMMAND_KEYWORDS, IN_TACTICS
from pytest_lsrb.tactic.lean.lexer import strip_comments
from pytest_lsrb.tactic.lean.splice import block_at, infer_sorry_kind

DATA = Path(__file__).resolve().parents[1] / "tests/tactic/data/sorrydb_llm_runs.jsonl.gz"
FAMILIES = ("claude-sonnet-4.5", "gemini-3-flash", "deepseek-prover-v2-671b", "kimina-prover-72b")
_COMMANDS = "|".join(sorted(COMMAND_KEYWORDS - IN_TACTICS, key=len, reverse=True))
_COMMAND_LINE = re.compile(rf"^\s*(?:{_COMMANDS})\b")


@dataclass(frozen=True)
class Context:
    """What SorryDB's prompt showed: `text` (the file's lines up to the sorry's last line, or the
    last 300 of them), the sorry at `start`..`end` in it (lines 1-based, columns 0-based)."""

    text: str
    start: tuple[int, int]
    end: tuple[int, int]


def load(path: Path = DATA) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """(source key -> text, answer rows)."""
    sources: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            if record["kind"] == "source":
                sources[record["key"]] = record["text"]
            elif record["kind"] == "answer":
                rows.append(record)
    return sources, rows


def context_of(row: dict[str, Any], sources: dict[str, str]) -> Context | None:
    if row["source"] is None:
        return None
    first = row["context_first_line"]
    text = "\n".join(sources[row["source"]].split("\n")[first - 1 : row["end_line"]])
    start = (row["start_line"] - first + 1, row["start_column"])
    return Context(text, start, (row["end_line"] - first + 1, row["end_column"]))


def _lines(placed: str) -> tuple[str, ...]:
    """Lean's view of a placed text: comments and blank lines gone, blanks inside a line one,
    each line's indentation relative to the first line's."""
    lines = [line.rstrip() for line in strip_comments(placed).split("\n") if line.strip()]
    if not lines:
        return ()
    base = len(lines[0]) - len(lines[0].lstrip())
    out = []
    for line in lines:
        indent = max(0, len(line) - len(line.lstrip()) - base)
        out.append(" " * indent + " ".join(line.split()))
    return tuple(out)


def placed_reference(proof: str, column: int, kind: str) -> tuple[str, ...]:
    """SorryDB's proof as Lean reads it over the sorry; in term position, as the tactic it is
    (`by tacs` is the block `tacs`, another term `t` is `exact t`): the splice here writes a
    tactic in term position as `(by tactic)`."""
    lines = list(strip_comments(" " * column + proof).split("\n"))
    while lines and not lines[0].strip():
        lines.pop(0)
    if kind != "term" or not lines:
        return _lines("\n".join(lines))
    first = lines[0].lstrip()
    if first == "by" or first.startswith(("by ", "by\t")):
        rest = first[2:].lstrip()
        at = len(lines[0]) - len(rest)
        return _lines("\n".join(([" " * at + rest] if rest else []) + lines[1:]))
    return _lines("\n".join([" " * (len(lines[0]) - len(first)) + "exact " + first, *lines[1:]]))


def placed_reading(reading: str, column: int, kind: str) -> tuple[str, ...]:
    """The reading as the splice places it over the sorry (lean/splice.py `block_at`); in term
    position, the tactic the splice wraps in `(by ...)`."""
    if not reading.strip():
        return ()
    if kind == "term":
        return _lines(reading)
    return _lines(" " * column + block_at(reading, column, "tactic"))


def _key(text: str) -> str:
    return " ".join(text.split())


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_'!?"


def well_formed(row: dict[str, Any], context: Context | None) -> bool:
    """SorryDB's extraction is a fill of the sorry, not a diff gone astray: some code, balanced,
    no fence and no line that starts a command (a restated header), and cut from the answer at
    the sorry's own place - it starts right after the answer's copy of the sorry's line up to the
    sorry (after the line before, for a fill on lines of its own) and ends where the answer goes
    on as the sorry's line did after the sorry, or, the sorry ending its line, at the end of the
    answer's code (SorryDB's diff takes all the rest then); never inside a name. Needs the source
    (the sorry's line); answers without one are left out."""
    proof = row["sorrydb_proof"]
    if proof is None or context is None:
        return False
    code = strip_comments(proof)
    if not code.strip() or "```" in code or not reader.balanced(code):
        return False
    if any(_COMMAND_LINE.match(line) for line in code.split("\n")):
        return False
    rows = context.text.split("\n")
    prefix = _key(rows[context.start[0] - 1][: context.start[1]])
    suffix = _key(strip_comments(rows[context.end[0] - 1][context.end[1] :]))
    response = row["response"]
    at = response.find(proof)
    while at >= 0:
        end = at + len(proof)
        before = _key(response[response.rfind("\n", 0, at) + 1 : at])
        own_line = proof.lstrip(" \t").startswith("\n")
        starts = before == prefix or (own_line and not prefix)
        after = _key(strip_comments(response[end:]))
        ends = after.startswith(suffix) if suffix else (not after or after.startswith("```"))
        if starts and ends and not (end < len(response) and _is_name_char(response[end])):
            return True
        at = response.find(proof, at + 1)
    return False


def read(row: dict[str, Any], context: Context | None) -> str:
    if context is not None and "site" in inspect.signature(reader.read_answer).parameters:
        site = reader.Site(context.text, context.start, context.end)  # type: ignore[attr-defined]
        return reader.read_answer(row["response"], "proof", site=site).tactic  # type: ignore[call-arg]
    return reader.read_answer(row["response"], "proof").tactic


@dataclass
class Judged:
    row: dict[str, Any]
    reading: str
    right: bool
    well_formed: bool


def judge(rows: list[dict[str, Any]], sources: dict[str, str], *, use_context: bool) -> Iterator[Judged]:
    for row in rows:
        context = context_of(row, sources)
        reading = read(row, context if use_context else None)
        text = context.text if context is not None else None
        kind = infer_sorry_kind(text, context.start) if text is not None and context is not None else "tactic"
        column = row["start_column"]
        proof = row["sorrydb_proof"]
        ours = placed_reading(reading, column, kind)
        right = proof is not None and ours == placed_reference(proof, column, kind)
        yield Judged(row, reading, right, well_formed(row, context))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--split", choices=("dev", "unseen", "all"), default="dev")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-context", action="store_true", help="read without the source")
    parser.add_argument("--latest", action="store_true", help="only each model's latest run")
    parser.add_argument("--show", action="store_true", help="print each miss")
    args = parser.parse_args()
    sources, rows = load(args.data)
    if args.split != "all":
        rows = [r for r in rows if r["split"] == args.split]
    if args.latest:
        last = {r["family"]: r["run"] for r in sorted(rows, key=lambda r: r["run"])}
        rows = [r for r in rows if r["run"] == last[r["family"]]]
    tally: dict[str, Counter[str]] = {family: Counter() for family in FAMILIES}
    for judged in judge(rows, sources, use_context=not args.no_context):
        row, count = judged.row, tally[judged.row["family"]]
        count["n"] += 1
        if row["verified"]:
            count["verified"] += 1
            count["verified_right"] += judged.right
        if judged.well_formed:
            count["well_formed"] += 1
            count["agree"] += judged.right
        if args.show and not judged.right and (row["verified"] or judged.well_formed):
            run = row["run"].split("/")[-1]
            print(f"--- {row['family']} {row['sorry_id'][:12]} {run} verified={row['verified']}")
            print(f"  ours:    {judged.reading[:300]!r}")
            print(f"  sorrydb: {str(row['sorrydb_proof'])[:300]!r}")
    total: Counter[str] = Counter()

    def line(name: str, count: Counter[str]) -> str:
        right, verified = count["verified_right"], count["verified"]
        return (
            f"{name:26s} n={count['n']:3d}  verified read right {right}/{verified}"
            f"  agreement {count['agree']}/{count['well_formed']} well formed"
        )

    print(f"split={args.split} context={'no' if args.no_context else 'as SorryDB sent it'}")
    for family, count in tally.items():
        total.update(count)
        print(line(family, count))
    print(line("all", total))


if __name__ == "__main__":
    main()
