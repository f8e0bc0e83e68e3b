"""SorryDB sorry records -> index rows of goal_to_tactic_proposal_v1.

SorryDB publishes `{"documentation": ..., "sorries": [record, ...]}` where each record is

    {"repo": {"remote", "branch", "commit", "lean_version"},
     "location": {"path", "start_line", "start_column", "end_line", "end_column"},
     "debug_info": {"goal", "url"},
     "metadata": {"blame_email_hash", "blame_date", "inclusion_date"},
     "id": "<sha256>"}

Each record becomes one `TacticRow` with the same values under the names the index uses. What a
record does not say is left out rather than guessed: `sorry_kind` stays unset (SorryDB's span is
sometimes a whole tactic block around the `sorry`, so the kind cannot be read from it) and no tag
claims a Mathlib dependency. Every imported row carries the provenance tag `sorrydb`, and the
data-quality flags of tactic/quality.py that apply (`pp_failed`, `elided`, `sorry_in_goal`,
`stop_span`, `benchmark_source`), usable as `--lsrb-goal-slice tag:...`.

A malformed file stops the import with one sentence naming the file, the JSON line of the record,
its index in `sorries` and the field, e.g.
`data.json:340: record sorries[12]: field 'location.start_line': input should be a valid integer
(got "21").`
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import describe_validation_error
from pytest_lsrb.core.textfiles import BOM, loads_json, lone_surrogate_problem
from pytest_lsrb.output.files import write_atomic
from pytest_lsrb.tactic.lean.gitrefs import is_local_remote
from pytest_lsrb.tactic.quality import quality_tags
from pytest_lsrb.tactic.rows import CommitHash, GitRemote, RepoPath, TacticRow

SOURCE_TAG = "sorrydb"


class _Part(BaseModel):
    # Strict: "21" is not a line number. Unknown keys are ignored so newer dumps still import.
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class SorryRepo(_Part):
    remote: GitRemote
    branch: str
    commit: CommitHash
    lean_version: str = Field(min_length=1)


class SorryLocation(_Part):
    path: RepoPath
    start_line: int = Field(ge=1)
    start_column: int = Field(ge=0)
    end_line: int = Field(ge=1)
    end_column: int = Field(ge=0)


class SorryDebugInfo(_Part):
    goal: str = Field(min_length=1)
    url: str | None = None


class SorryMetadata(_Part):
    blame_date: str | None = None
    inclusion_date: str | None = None


class SorryRecord(_Part):
    """One element of SorryDB's `sorries` list (the fields the index needs)."""

    repo: SorryRepo
    location: SorryLocation
    debug_info: SorryDebugInfo
    metadata: SorryMetadata | None = None
    id: str = Field(min_length=1)

    def to_row(self) -> TacticRow:
        loc, meta = self.location, self.metadata or SorryMetadata()
        return TacticRow(
            item_id=self.id,
            repo_remote=self.repo.remote,
            repo_branch=self.repo.branch,
            repo_commit=self.repo.commit,
            repo_lean_version=self.repo.lean_version,
            path=loc.path,
            start_line=loc.start_line,
            start_column=loc.start_column,
            end_line=loc.end_line,
            end_column=loc.end_column,
            goal_text=self.debug_info.goal,
            url=self.debug_info.url,
            sorry_kind=None,
            blame_date=meta.blame_date,
            inclusion_date=meta.inclusion_date,
            tags=[
                SOURCE_TAG,
                *quality_tags(
                    self.debug_info.goal, loc.end_line - loc.start_line + 1, self.repo.remote, loc.path
                ),
            ],
        )


def import_sorrydb(path: Path, *, allow_local_remotes: bool = False) -> list[TacticRow]:
    """Every record of a SorryDB JSON file as a validated index row, in file order.

    A dump comes from the internet: a record whose `repo.remote` is a path on this machine is
    refused unless `allow_local_remotes` (`--allow-local-remotes`) says the user means it."""
    text = _read_text(path).removeprefix(BOM)
    try:
        data = loads_json(text)
    except json.JSONDecodeError as exc:
        raise LsrbUsageError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})."
        ) from None
    if not isinstance(data, dict) or "sorries" not in data:
        raise LsrbUsageError(f"{path}: expected a SorryDB object with a 'sorries' list at the top level.")
    sorries = data["sorries"]
    if not isinstance(sorries, list):
        raise LsrbUsageError(
            f"{path}: field 'sorries' must be a list of records, got {type(sorries).__name__}."
        )
    if not sorries:
        raise LsrbUsageError(f"{path}: field 'sorries' holds no records.")

    rows: list[TacticRow] = []
    seen: dict[str, int] = {}
    for index, obj in enumerate(sorries):
        where = _Where(path, text, index)
        if not isinstance(obj, dict):
            raise where.error(f"expected a JSON object, got {type(obj).__name__}")
        surrogate = lone_surrogate_problem(obj)
        if surrogate is not None:
            raise where.error(surrogate)
        try:
            record = SorryRecord.model_validate(obj)
        except ValidationError as exc:
            raise where.error(describe_validation_error(exc)) from None
        if not allow_local_remotes and is_local_remote(record.repo.remote):
            raise where.error(
                f"field 'repo.remote': {record.repo.remote!r} is a repository on this machine; pass "
                "--allow-local-remotes to import it"
            )
        loc = record.location
        if (loc.end_line, loc.end_column) < (loc.start_line, loc.start_column):
            raise where.error(
                f"field 'location': the end {loc.end_line}:{loc.end_column} comes before the start "
                f"{loc.start_line}:{loc.start_column}"
            )
        if record.id in seen:
            raise where.error(f"field 'id': '{record.id}' is already the id of sorries[{seen[record.id]}]")
        seen[record.id] = index
        try:
            rows.append(record.to_row())
        except ValidationError as exc:  # pragma: no cover - SorryRecord holds TacticRow's rules
            raise where.error(describe_validation_error(exc)) from None
    return rows


def write_index(rows: Iterable[TacticRow], out: Path) -> None:
    """Write rows as index.jsonl: one JSON object per line, fields in TacticRow's order, UTF-8.

    Unset optional fields are left out. The file is replaced atomically, so a failed write never
    leaves half an index behind.
    """
    lines = [json.dumps(row.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for row in rows]
    write_atomic(out, "".join(line + "\n" for line in lines).encode("utf-8"))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise LsrbUsageError(f"{path}: not valid UTF-8 text.") from None


class _Where:
    """Names one record in an error: the file, the line its object starts on, its index."""

    def __init__(self, path: Path, text: str, index: int) -> None:
        self.path, self.text, self.index = path, text, index

    def error(self, problem: str) -> LsrbUsageError:
        line = record_lines(self.text).get(self.index)
        at = f"{self.path}:{line}" if line else str(self.path)
        return LsrbUsageError(f"{at}: record sorries[{self.index}]: {problem}.")


def record_lines(text: str) -> dict[int, int]:
    """{index in `sorries`: 1-based line where that record starts}, read with the stdlib decoder.

    Only called when a record is bad, so a good import never pays for it. Returns {} when the
    text does not have the expected shape (the caller then names the record without a line).
    """
    decoder = json.JSONDecoder()
    ws = " \t\n\r"

    def skip(i: int) -> int:
        while i < len(text) and text[i] in ws:
            i += 1
        return i

    try:
        i = skip(0)
        if text[i] != "{":
            return {}
        i = skip(i + 1)
        while text[i] != "}":
            key, i = decoder.raw_decode(text, i)
            i = skip(i)
            if text[i] != ":":
                return {}
            i = skip(i + 1)
            if key == "sorries" and text[i] == "[":
                return _element_lines(text, decoder, skip, skip(i + 1))
            _, i = decoder.raw_decode(text, i)
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)
    except (IndexError, ValueError):
        return {}
    return {}


def _element_lines(
    text: str, decoder: json.JSONDecoder, skip: Callable[[int], int], i: int
) -> dict[int, int]:
    lines: dict[int, int] = {}
    line, counted_to = 1, 0
    index = 0
    while text[i] != "]":
        line += text.count("\n", counted_to, i)
        counted_to = i
        lines[index] = line
        _, i = decoder.raw_decode(text, i)
        i = skip(i)
        if text[i] == ",":
            i = skip(i + 1)
        index += 1
    return lines
