"""The one reader of run output directories (run.json, attempts.jsonl, summary.json), with one
validation: resume, the session-end summary of a resumed run, `--lsrb-baseline`, `lsrb compare`,
`lsrb report` and `lsrb merge` all read runs through here.

Every record is checked against its definition as it is read (`records.check_record`: the run's
task's record, e.g. `TacticAttemptRecord`), so a tampered directory is refused in one sentence
naming the file, the line and the field, wherever it is read from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import shown
from pytest_lsrb.engine.records import AttemptRecord, check_record, record_key
from pytest_lsrb.engine.summary import Summarizer
from pytest_lsrb.engine.task import record_type_named
from pytest_lsrb.output.files import (
    ATTEMPTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    AttemptsReadReport,
    iter_attempts,
    iter_numbered_attempts,
    read_json,
)


def iter_records(
    path: Path, report: AttemptsReadReport | None = None, record_type: type[Any] = AttemptRecord
) -> Iterator[AttemptRecord]:
    """The records of an attempts.jsonl, each checked as a `record_type` (`path:line: field 'x':
    ...` if not)."""
    for lineno, rec in iter_numbered_attempts(path, report):
        check_record(rec, f"{path}:{lineno}", record_type)
        yield rec


def latest_records(
    path: Path, report: AttemptsReadReport | None = None, record_type: type[Any] = AttemptRecord
) -> Iterator[AttemptRecord]:
    """Stream attempts.jsonl keeping only the last record per (item_id, sample_index): when a
    resumed run redid an attempt, the last record for it wins.

    Two passes over the file: the first checks every record and finds the last line of each key,
    the second yields those.
    """
    last: dict[tuple[str, int], int] = {}
    for i, rec in enumerate(iter_records(path, report, record_type)):
        last[record_key(rec)] = i
    keep = set(last.values())
    for i, rec in enumerate(iter_attempts(path)):
        if i in keep:
            yield rec


def summarize_file(
    path: Path,
    summarizer: Summarizer,
    keys: set[tuple[str, int]] | None = None,
    record_type: type[Any] = AttemptRecord,
) -> dict[str, Any]:
    """`summarizer`'s metrics over the latest record of each attempt in `path` (restricted to
    `keys` if given)."""
    for rec in latest_records(path, record_type=record_type):
        if keys is None or record_key(rec) in keys:
            summarizer.add(rec)
    return summarizer.finish()


def run_name(config: Mapping[str, Any]) -> str:
    """A run as the terminal, compare and the gate name it: `adapter/model` from its config (a
    user's own adapter: its class, `session.overrides`), `default` for the adapter's own model;
    then the Lean protocol when it is not the card's one-shot tactic (`[search]`, `[proof,
    feedback 2]`), so runs of one index under different protocols are never shown as one."""
    name = f"{config.get('adapter', '?')}/{config.get('model') or 'default'}"
    protocol = []
    answer = config.get("answer")
    if isinstance(answer, str) and answer != "tactic":
        protocol.append(answer)
    rounds = config.get("feedback_rounds")
    if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > 0:
        protocol.append(f"feedback {rounds}")
    return f"{name} [{', '.join(protocol)}]" if protocol else name


@dataclass
class RunDir:
    """One run as read back: run.json, summary.json (None when the run did not finish) and the
    latest record of each attempt. Every reader of runs (gate, compare, merge, report) uses this;
    fields a run may lack are read defensively."""

    dir: Path
    header: dict[str, Any]
    summary: dict[str, Any] | None
    records: list[AttemptRecord]
    warnings: list[str] = field(default_factory=list)
    # The run's index rows by item id, when a reader joined them (`lsrb report`: for breakdowns
    # by repository, Lean version and tag of records that do not carry those fields).
    index_rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def head(self) -> dict[str, Any]:
        """run.json, else summary.json (an older run wrote only the latter)."""
        return self.header or self.summary or {}

    @property
    def config(self) -> dict[str, Any]:
        cfg = self.head.get("config")
        return cfg if isinstance(cfg, dict) else {}

    @property
    def name(self) -> str:
        return run_name(self.config)

    @property
    def samples(self) -> int:
        """Samples per item: the run's config (checked when read), else the most any item has."""
        samples = self.config.get("samples")
        if isinstance(samples, int) and samples > 0:
            return samples
        per_item: dict[str, int] = {}
        for rec in self.records:
            per_item[str(rec["item_id"])] = per_item.get(str(rec["item_id"]), 0) + 1
        return max(per_item.values(), default=1)

    @property
    def suite(self) -> str:
        for source in (self.header, self.summary or {}, self.config):
            if isinstance(source.get("suite"), str):
                return str(source["suite"])
        return next((str(r["suite"]) for r in self.records if r.get("suite")), "unknown suite")

    @property
    def task_name(self) -> str:
        return str(self.config.get("task") or self.suite)

    @property
    def model(self) -> str:
        for rec in self.records:
            if rec.get("model"):
                return str(rec["model"])
        return str(self.config.get("model") or self.config.get("adapter") or "unknown model")

    @property
    def selected_rows_hash(self) -> str:
        for source in (self.header, self.summary or {}):
            if isinstance(source.get("selected_rows_hash"), str):
                return str(source["selected_rows_hash"])
        return ""

    @property
    def verification_on(self) -> bool:
        """True when answers were checked by a verifier (then pass@k counts verified attempts)."""
        mode = self.config.get("verification")
        if isinstance(mode, str):
            return mode != "none"
        return any(r.get("verification_mode", "none") != "none" for r in self.records)

    @property
    def label(self) -> str:
        short = self.selected_rows_hash[:8]
        return f"{self.model}" + (f" · {short}" if short else "")

    def keys(self) -> set[tuple[str, int]]:
        return {record_key(r) for r in self.records}


def checked_header(file: Path, data: Any) -> dict[str, Any]:
    """run.json/summary.json as far as readers rely on it: an object, a suite name, a config
    object with a whole number of samples."""
    if not isinstance(data, dict):
        raise LsrbUsageError(f"{file}: not a run header (expected a JSON object, got {type(data).__name__}).")
    if data.get("suite") is not None and not isinstance(data["suite"], str):
        raise LsrbUsageError(f"{file}: field 'suite': expected a suite name (got {shown(data['suite'])}).")
    config = data.get("config")
    if config is None:
        return data
    if not isinstance(config, dict):
        raise LsrbUsageError(f"{file}: field 'config': expected an object (got {shown(config)}).")
    samples = config.get("samples")
    if samples is not None and (not isinstance(samples, int) or isinstance(samples, bool) or samples < 1):
        raise LsrbUsageError(
            f"{file}: field 'config.samples': expected a whole number >= 1 (got {shown(samples)})."
        )
    return data


def run_record_type(header: dict[str, Any], summary: dict[str, Any] | None) -> type[Any]:
    """The record a run's attempts are: its task's (`Task.record_type`), named by its config's
    `task` or, as `RunDir.task_name` reads it, its suite."""
    for source in (header, summary or {}):
        config = source.get("config")
        task = (config if isinstance(config, dict) else {}).get("task") or source.get("suite")
        if isinstance(task, str) and task:
            return record_type_named(task)
    return AttemptRecord


def read_run(path: Path, what: str, *, need_attempts: bool = True) -> RunDir:
    """Read and check an output directory. `need_attempts`: a directory without attempts.jsonl
    is a usage error (the gate compares records); else any one of the three files will do."""
    path = Path(path)
    if not path.is_dir():
        raise LsrbUsageError(f"{what}: {path} is not a directory (expected an lsrb output directory).")
    run_file, summary_file, attempts = path / RUN_FILE, path / SUMMARY_FILE, path / ATTEMPTS_FILE
    if need_attempts and not attempts.is_file():
        raise LsrbUsageError(f"{what}: {path} holds no {ATTEMPTS_FILE} (not a run output directory).")
    if not (run_file.exists() or summary_file.exists() or attempts.exists()):
        raise LsrbUsageError(
            f"{what}: {path} holds no lsrb run (no {RUN_FILE}, {ATTEMPTS_FILE} or {SUMMARY_FILE})."
        )
    header = checked_header(run_file, read_json(run_file)) if run_file.exists() else {}
    summary = checked_header(summary_file, read_json(summary_file)) if summary_file.exists() else None
    warnings: list[str] = []
    if summary is None:
        warnings.append(
            f"{summary_file} is missing (the run did not finish); metrics come from {ATTEMPTS_FILE}."
        )
    report = AttemptsReadReport()
    records = (
        list(latest_records(attempts, report, run_record_type(header, summary))) if attempts.exists() else []
    )
    warnings += report.warnings
    return RunDir(dir=path, header=header, summary=summary, records=records, warnings=warnings)
