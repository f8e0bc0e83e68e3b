"""SorryDB's agent output: what its strategies write for each sorry, read as hostile input.

SorryDB's agents (doc/AGENTS.md at 71959ed) take `{"sorries": [record, ...]}` and write "the same
list of sorries, but where each record contains a new field `proof` containing either `null` or
a proof string to replace the sorry string" (doc/sample_proof_list.json: `[{"sorry": {...},
"proof": ...}]`). Its runners write each element as a `SorryResult` (sorrydb/database/sorry.py):
`sorry`, `proof`, `proof_verified`, `feedback`, `verification_message`, `success`, `error_type`,
`error_message`, `strategy_name`, `failed_attempts`, `successful_attempts`, `input_tokens`,
`output_tokens`, `estimated_cost`. An experiment folder (`intermediate_experiment_outputs/<model>/
<date>_<strategy>/`) holds that list as `result.json`, the run's settings in `run_summary.json`
and, per sorry, `logs/process_single_sorry/<id>.log` with the model's raw response.

Everything here is a stranger's file: sizes are bounded before reading, a malformed element
stops the import in one sentence naming the file, the element (`results[i]`) and the field, a
sorry's id names a log file only when it is a plain name inside the folder (no path escape, no
symbolic link followed), and the text kept is bounded.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.nofollow import open_nofollow
from pytest_lsrb.core.rows import describe_validation_error
from pytest_lsrb.core.textfiles import decode_utf8, loads_json, lone_surrogate_problem
from pytest_lsrb.tactic.sorrydb import SorryRecord

MAX_RESULTS_BYTES: Final = 64 * 2**20  # SorryDB's largest recorded result.json: 4 MiB
MAX_LOG_BYTES: Final = 16 * 2**20
MAX_RESULTS: Final = 100_000
MAX_ATTEMPTS: Final = 1_024  # attempts of one sorry (SorryDB's pass@k: k <= 32 in its runs)
RESULT_FILE: Final = "result.json"
SUMMARY_FILE: Final = "run_summary.json"
INDIVIDUAL_FOLDER: Final = "individual"  # one `<id>.json` per sorry, each a list of one result
LOG_FOLDER: Final = ("logs", "process_single_sorry")
_SAFE_ID: Final = re.compile(r"[A-Za-z0-9_.-]{1,200}")
# SorryDB's runner writes `"{n} succeeded, {m} failed out of {k} attempts"` and `<name>_pass_at_{k}`.
_OUT_OF: Final = re.compile(r"out of (\d+) attempts")
PASS_AT_SUFFIX: Final = re.compile(r"_pass_at_(\d+)$")
# A log line of SorryDB's runner: `[2025-12-19 20:15:45] [INFO] ...`.
_LOG_LINE: Final = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[", re.M)
_RESPONSE: Final = re.compile(r"\] (?:Full LLM response|\[Iteration \d+\] LLM response):\n")


class SorryResult(BaseModel):
    """One element of SorryDB's agent output (the fields this project reads)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    sorry: SorryRecord
    proof: str | None
    proof_verified: bool = False
    verification_message: str | None = None
    success: bool = True
    error_type: str | None = None
    strategy_name: str | None = None
    successful_attempts: list[str | None] | None = Field(None, max_length=MAX_ATTEMPTS)
    failed_attempts: list[str | None] | None = Field(None, max_length=MAX_ATTEMPTS)
    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)

    def attempts(self, k: int) -> list[tuple[str, bool]]:
        """Its `k` attempts as (proof, verified): the verified ones first, then the failed ones,
        then "" for each attempt that gave no proof (SorryDB lists only those that did)."""
        if self.successful_attempts is None and self.failed_attempts is None:
            done = [(self.proof or "", self.proof_verified)]
        else:
            done = [(p or "", True) for p in self.successful_attempts or []]
            done += [(p or "", False) for p in self.failed_attempts or []]
        return [*done, *[("", False)] * max(0, k - len(done))][: max(k, len(done))]

    def k(self) -> int:
        """How many attempts its runner made (`pass_at_k` in its name, `out of k` in its message)."""
        for pattern, text in ((PASS_AT_SUFFIX, self.strategy_name), (_OUT_OF, self.verification_message)):
            found = pattern.search(text or "")
            if found:
                return min(MAX_ATTEMPTS, int(found.group(1)))
        return len(self.successful_attempts or []) + len(self.failed_attempts or []) or 1


@dataclass
class Experiment:
    """A SorryDB agent output: its results in file order, the run's settings and raw responses."""

    path: Path
    results: list[SorryResult]
    settings: dict[str, Any] = field(default_factory=dict)
    responses: dict[str, str] = field(default_factory=dict)  # sorry id -> the model's raw response

    def samples(self) -> int:
        return max((r.k() for r in self.results), default=1)


def read_experiment(path: Path) -> Experiment:
    """A SorryDB agent output file, or an experiment folder (its result.json, run_summary.json and
    the raw responses in its per-sorry logs)."""
    folder = path if path.is_dir() else None
    if folder is not None:
        found = folder / RESULT_FILE
        singles = folder / INDIVIDUAL_FOLDER
        if (not found.is_file() or found.stat().st_size == 0) and singles.is_dir():
            results = _individual_results(singles)  # (a copy without the large result.json)
            path = singles
        elif not found.is_file():
            inner = sorted(p.parent.name for p in folder.glob(f"*/{RESULT_FILE}"))[:5]
            hint = f"; its experiments: {', '.join(inner)}" if inner else ""
            raise LsrbUsageError(f"{folder}: no {RESULT_FILE} (a SorryDB experiment folder holds one){hint}.")
        else:
            path = found
            results = read_results(path)
    else:
        results = read_results(path)
    experiment = Experiment(path, results)
    if folder is not None:
        experiment.settings = _settings(folder / SUMMARY_FILE)
        for result in results:
            raw = _logged_response(folder, result.sorry.id)
            if raw is not None and len(result.attempts(1)) == 1:  # one attempt: its response is known
                experiment.responses[result.sorry.id] = raw
    return experiment


def _individual_results(folder: Path) -> list[SorryResult]:
    """The results of an experiment's `individual/` folder, in file-name order (each file holds
    SorryDB's output for one sorry); the same checks as one result file."""
    files = sorted(p for p in folder.iterdir() if p.suffix == ".json")
    if not files or len(files) > MAX_RESULTS:
        raise LsrbUsageError(f"{folder}: expected 1 to {MAX_RESULTS:,} result files, found {len(files):,}.")
    results: list[SorryResult] = []
    seen: dict[str, Path] = {}
    for file in files:
        for result in read_results(file):
            first = seen.get(result.sorry.id)
            if first is not None:
                raise LsrbUsageError(
                    f"{file}: field 'sorry.id': '{result.sorry.id}' is already in {first.name}."
                )
            seen[result.sorry.id] = file
            results.append(result)
    return results


def read_results(path: Path) -> list[SorryResult]:
    """Every element of a SorryDB agent output file, validated, in file order."""
    data = loads_bounded(path, MAX_RESULTS_BYTES)
    if isinstance(data, dict) and isinstance(data.get("sorries"), list):
        data = data["sorries"]  # (the input list with a `proof` added to each record)
    if not isinstance(data, list):
        raise LsrbUsageError(f"{path}: expected SorryDB's agent output, a JSON list of results.")
    if not data or len(data) > MAX_RESULTS:
        raise LsrbUsageError(f"{path}: expected 1 to {MAX_RESULTS:,} results, found {len(data):,}.")
    results: list[SorryResult] = []
    seen: dict[str, int] = {}
    for index, obj in enumerate(data):
        where = f"{path}: results[{index}]"
        if not isinstance(obj, dict):
            raise LsrbUsageError(f"{where}: expected a JSON object, got {type(obj).__name__}.")
        if "sorry" not in obj or "proof" not in obj:
            missing = "sorry" if "sorry" not in obj else "proof"
            raise LsrbUsageError(f"{where}: field '{missing}' is missing (AGENTS.md: each result has both).")
        surrogate = lone_surrogate_problem(obj)
        if surrogate is not None:
            raise LsrbUsageError(f"{where}: {surrogate}.")
        try:
            result = SorryResult.model_validate(obj)
        except ValidationError as exc:
            raise LsrbUsageError(f"{where}: {describe_validation_error(exc)}.") from None
        first = seen.get(result.sorry.id)
        if first is not None:
            raise LsrbUsageError(
                f"{where}: field 'sorry.id': '{result.sorry.id}' is already the id of results[{first}]."
            )
        seen[result.sorry.id] = index
        results.append(result)
    return results


def loads_bounded(path: Path, limit: int) -> Any:
    """JSON from `path`, refused in one sentence when it is larger than `limit` bytes, not a
    regular file, or not JSON."""
    raw = read_bounded(path, limit)
    try:
        return loads_json(raw)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        raise LsrbUsageError(f"{path}:{exc.lineno}: {problem}.") from None


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, opened without following a link (and
    without waiting on a FIFO)."""
    try:
        fd = open_nofollow(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LsrbUsageError(f"{path}: not a regular file.")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise LsrbUsageError(f"{path}: larger than {limit // 2**20} MiB, the most such a file is read up to.")
    return data


def _settings(path: Path) -> dict[str, Any]:
    """run_summary.json's `strategy` and `input` (what the report names the run by), if present."""
    if not path.is_file():
        return {}
    data = loads_bounded(path, 2**20)
    if not isinstance(data, dict):
        raise LsrbUsageError(f"{path}: expected a JSON object (SorryDB's run summary).")
    kept = {k: data[k] for k in ("strategy", "input", "sorrydb_info") if isinstance(data.get(k), dict)}
    text = json.dumps(kept, ensure_ascii=False)
    return kept if len(text) <= 16_000 else {}


def _logged_response(folder: Path, sorry_id: str) -> str | None:
    """The model's last raw response in the sorry's log (`Full LLM response:` of the one-shot
    strategy, `[Iteration n] LLM response:` of the self-correcting one), or None. The id names a
    file only when it is a plain name; the log is read without following a link."""
    if not _SAFE_ID.fullmatch(sorry_id) or sorry_id in (".", ".."):
        return None
    log = folder.joinpath(*LOG_FOLDER, f"{sorry_id}.log")
    if not log.is_file():
        return None
    try:
        text = decode_utf8(read_bounded(log, MAX_LOG_BYTES))
    except json.JSONDecodeError as exc:
        raise LsrbUsageError(f"{log}:{exc.lineno}: {exc.msg}.") from None
    found = list(_RESPONSE.finditer(text))
    if not found:
        return None
    rest = text[found[-1].end() :]
    end = _LOG_LINE.search(rest)
    return (rest[: end.start()] if end else rest).rstrip("\n")
