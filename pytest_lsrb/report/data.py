"""What a report reads: one run's output directory (run.json, attempts.jsonl, summary.json).

Everything read here is data from a run, and the records hold what a model wrote: nothing is
evaluated, and fields a suite may or may not add are read defensively (`get`, type checks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.task import Judgement, Task
from pytest_lsrb.output.reader import RunDir, read_run
from pytest_lsrb.tactic.rows import repo_name

# Index files larger than this are not joined (the report then groups by record fields only).
MAX_INDEX_BYTES = 256 * 1024 * 1024

Judge = Callable[[AttemptRecord], Judgement]


def load_run(path: Path) -> RunDir:
    """Read an output directory (`output.reader.read_run`) and join the index rows of its items;
    a directory with no run in it is a usage error."""
    run = read_run(Path(path), "lsrb report", need_attempts=False)
    records, warnings = run.records, run.warnings
    index = find_index(run.config, run.suite) if records else None
    if index is not None:
        run.index_rows = _read_index(index, {str(r["item_id"]) for r in records}, warnings)
    elif records and isinstance(run.config.get("index"), str):
        warnings.append(
            f"the run's index {run.config['index']} is not here (or has changed since the run); "
            "breakdowns use record fields only."
        )
    if run.summary is None and records:
        run.summary = provisional_summary(run)
    elif run.summary is not None and records and "unreadable_answers" not in run.summary:
        # written before generation errors and unreadable answers were counted apart (#50): the
        # rates are counted again from the records, by today's rule, so the page says one thing
        run.summary = {**run.summary, **counted_again(run)}
    return run


def provisional_summary(run: RunDir) -> dict[str, Any]:
    """What summary.json would say about the records so far (for a run that did not finish)."""
    keys = (
        "suite",
        "config",
        "config_hash",
        "selected_rows_hash",
        "selected_items",
        "shard_count",
        "shard_index",
        "attempts_expected",
    )
    head = {k: run.header[k] for k in keys if k in run.header}
    return {**head, **counted_again(run), "complete": False}


def counted_again(run: RunDir) -> dict[str, Any]:
    """The summary's counts and rates, counted from the records by today's rule (the engine's
    metrics and the declared ones; the task's own sections need its code)."""
    from pytest_lsrb.engine.metric import summary_metrics
    from pytest_lsrb.engine.summary import Summarizer

    summarizer = Summarizer(run.samples, metrics=summary_metrics(run.task_name))
    for rec in run.records:
        summarizer.add(rec)
    return summarizer.finish()


def find_index(config: Mapping[str, Any], suite: str) -> Path | None:
    """The run's index file, if it is still here and unchanged (its SHA-256 matches the run's).

    A built-in suite's index is recorded relative to the suite folder; anything else in full.
    """
    from pytest_lsrb.engine.options import file_sha256
    from pytest_lsrb.engine.suite import builtin_suites_dir

    index = config.get("index")
    if not isinstance(index, str) or not index:
        return None
    path = Path(index)
    candidates = [path] if path.is_absolute() else [builtin_suites_dir() / suite / path, Path.cwd() / path]
    expected = config.get("index_sha256")
    for candidate in candidates:
        if not candidate.is_file() or candidate.stat().st_size > MAX_INDEX_BYTES:
            continue
        if isinstance(expected, str) and file_sha256(candidate) != expected:
            continue
        return candidate
    return None


def _read_index(path: Path, wanted: set[str], warnings: list[str]) -> dict[str, dict[str, Any]]:
    """The index rows by item id (`item_id`, or `name` for a problem), for grouping by repository,
    Lean version and tag.

    Read leniently: this is context for the report, not input to a run, so a line that does not
    parse is skipped rather than fatal.
    """
    rows: dict[str, dict[str, Any]] = {}
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(obj, dict):
                continue
            # Tactic rows name their item `item_id`; LLM-SRBench problems, `name`.
            key = obj.get("item_id", obj.get("name"))
            if key is not None and str(key) in wanted:
                rows[str(key)] = obj
    if not rows:
        warnings.append(f"{path} holds none of this run's items; breakdowns use record fields only.")
    return rows


# -- judgement ---------------------------------------------------------------------------------


def answer_field(task_name: str) -> str:
    """The record field holding the task's extracted answer (`proposal` for an unknown task)."""
    try:
        from pytest_lsrb.engine.task import get_task

        return str(get_task(task_name).answer_field)
    except (LsrbUsageError, ImportError, AttributeError):
        return "proposal"


def judge_for(task_name: str) -> Judge:
    """The judgement the test saw (`outcomes.judgement`): the task's own, or the generic one for
    a task this version does not know or a record from another version of the task."""
    from pytest_lsrb.engine.outcomes import judgement

    try:
        from pytest_lsrb.engine.task import get_task

        task: Task[Any] | None = get_task(task_name)
    except (LsrbUsageError, ImportError):
        task = None

    def judged(record: AttemptRecord) -> Judgement:
        try:
            return judgement(task, record)
        except (KeyError, TypeError, ValueError):
            return judgement(None, record)

    return judged


# -- grouping fields ---------------------------------------------------------------------------


def item_facets(record: AttemptRecord, row: Mapping[str, Any] | None) -> dict[str, Any]:
    """Repository, Lean version, tags, problem set and domain of one attempt's item.

    Record fields win (a suite may copy them there); the index row fills in the rest.
    """
    row = row or {}

    def pick(*names: str) -> Any:
        for source in (record, row):
            for name in names:
                value = source.get(name)
                if value not in (None, ""):
                    return value
        return None

    remote = pick("repo_remote", "repo")
    tags = pick("tags")
    return {
        "repo": repo_name(str(remote)) if remote is not None else None,
        "lean_version": _str_or_none(pick("repo_lean_version", "lean_version")),
        "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
        "problem_set": _str_or_none(pick("problem_set")),
        "domain": _str_or_none(pick("domain")),
    }


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
