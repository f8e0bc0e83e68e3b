"""`lsrb merge SHARD_DIR... --out DIR`: the shards of one run become the unsharded run.

Each shard's output directory holds run.json, attempts.jsonl and summary.json. Merging checks
that the shards belong together (same config_hash and selected_rows_hash), do not overlap (no
shard index twice, no attempt of an item outside its shard) and cover the run (every shard index
present, every expected attempt finished); then it writes:

- attempts.jsonl: the latest record of every attempt, sorted by (item_id, sample_index), with
  `config_hash` set to the unsharded run's (what the same run with --lsrb-shard-count=1 records);
- summary.json: recomputed from those records with the same Summarizer and task accumulator as a
  run, with `shard_count`=1 and `shard_index`=0 — equal to the unsharded run's summary except for
  timing fields (`summary.SUMMARY_TIMING_KEYS`; `wall_time_s` is the slowest shard's);
- run.json: the unsharded header plus `merged_from` (each shard's directory, index, attempts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import describe_validation_error
from pytest_lsrb.core.seeds import shard_of
from pytest_lsrb.engine.options import identity_hash
from pytest_lsrb.engine.records import AttemptRecord, record_key
from pytest_lsrb.engine.summary import SUMMARY_SCHEMA_VERSION, SUMMARY_TIMING_KEYS, summarizer_for
from pytest_lsrb.engine.task import get_task
from pytest_lsrb.output.files import (
    ATTEMPTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    AttemptsWriter,
    write_json_atomic,
)
from pytest_lsrb.output.models import RunHeader
from pytest_lsrb.output.reader import read_run

# Summary keys a merge sets itself rather than recomputing or copying from a shard.
_HEADER_KEYS = frozenset(
    {"config", "config_hash", "shard_count", "shard_index", "attempts_expected", "items_expected", "complete"}
)
_RUN_KEYS = (
    "suite",
    "config",
    "config_hash",
    "selected_rows_hash",
    "shard_count",
    "shard_index",
    "attempts_expected",
)


class _ShardConfig(BaseModel):
    """What a merge reads from run.json's `config`."""

    model_config = ConfigDict(extra="allow", strict=True)

    samples: int = Field(ge=1)
    task: str


@dataclass(frozen=True)
class Shard:
    dir: Path
    run: dict[str, Any]
    summary: dict[str, Any] | None
    records: list[AttemptRecord]  # the latest record of each attempt, each checked
    config: _ShardConfig  # what a merge reads of run.json's config, typed

    @property
    def index(self) -> int:
        return int(self.run["shard_index"])

    @property
    def count(self) -> int:
        return int(self.run["shard_count"])

    @property
    def label(self) -> str:
        return f"{self.dir} (shard {self.index} of {self.count})"


def read_shard(path: Path) -> Shard:
    """A shard read by the one reader (`output.reader.read_run`), with what a merge needs of its
    run.json on top: every header field, a whole number of samples and the task."""
    run_file = path / RUN_FILE
    if not run_file.is_file():
        raise LsrbUsageError(f"{path} is not a run output directory (it has no {RUN_FILE}).")
    read = read_run(path, "lsrb merge", need_attempts=False)
    run = read.header
    missing = [k for k in _RUN_KEYS if k not in run]
    if missing:
        raise LsrbUsageError(f"{run_file}: not a run header (missing {', '.join(missing)}).")
    try:
        header = RunHeader.model_validate(run)
        config = _ShardConfig.model_validate(header.config)
    except ValidationError as exc:
        where = "" if exc.title == RunHeader.__name__ else "config."
        raise LsrbUsageError(f"{run_file}: {describe_validation_error(exc, where)}.") from None
    if header.shard_index >= header.shard_count:
        raise LsrbUsageError(
            f"{run_file}: field 'shard_index': {header.shard_index} is not below shard_count "
            f"{header.shard_count}."
        )
    return Shard(dir=path, run=run, summary=read.summary, records=read.records, config=config)


def _disagreement(shards: Sequence[Shard], key: str) -> str | None:
    groups: dict[str, list[str]] = {}
    for s in shards:
        groups.setdefault(str(s.run.get(key)), []).append(str(s.dir))
    if len(groups) <= 1:
        return None
    parts = [f"{value[:12]} ({', '.join(dirs)})" for value, dirs in groups.items()]
    return f"the shards disagree on {key}: " + " vs ".join(parts)


def _changed_config_keys(shards: Sequence[Shard]) -> list[str]:
    configs = [s.run.get("config", {}) for s in shards]
    keys = set().union(*configs)
    return sorted(
        k for k in keys if k not in ("shard_index", "index") and len({repr(c.get(k)) for c in configs}) > 1
    )


def check_shards(shards: Sequence[Shard]) -> None:
    """Refuse shards that are not the complete, non-overlapping shards of one run."""
    if not shards:
        raise LsrbUsageError("lsrb merge: name at least one shard directory.")
    for key in ("suite", "config_hash", "selected_rows_hash"):
        problem = _disagreement(shards, key)
        if problem:
            changed = _changed_config_keys(shards) if key == "config_hash" else []
            extra = f" (config keys that differ: {', '.join(changed)})" if changed else ""
            raise LsrbUsageError(f"lsrb merge: {problem}{extra}; only shards of one run can be merged.")
    counts = {s.count for s in shards}
    if len(counts) > 1:
        raise LsrbUsageError(f"lsrb merge: the shards disagree on shard_count ({sorted(counts)}).")
    count = counts.pop()
    seen: dict[int, Shard] = {}
    for s in shards:
        if s.dir.resolve() in {o.dir.resolve() for o in seen.values()}:
            raise LsrbUsageError(f"lsrb merge: {s.dir} is named twice.")
        if s.index in seen:
            raise LsrbUsageError(
                f"lsrb merge: {seen[s.index].dir} and {s.dir} are both shard {s.index} of {count} "
                "(overlapping shards)."
            )
        seen[s.index] = s
    missing = sorted(set(range(count)) - set(seen))
    if missing:
        names = ", ".join(str(i) for i in missing)
        raise LsrbUsageError(
            f"lsrb merge: shard(s) {names} of {count} are missing, so the merge would not cover the "
            "run; pass every shard's output directory."
        )


def shard_records(shard: Shard, samples: int) -> list[AttemptRecord]:
    """The shard's latest records, after checking each belongs to it and the shard is finished."""
    records = shard.records
    for rec in records:
        item_id, sample = record_key(rec)
        home = shard_of(item_id, shard.count)
        if home != shard.index:
            raise LsrbUsageError(
                f"lsrb merge: {shard.label} holds an attempt of item '{item_id}', which belongs to "
                f"shard {home} (overlapping shards)."
            )
        if rec.get("config_hash") != shard.run["config_hash"]:
            raise LsrbUsageError(
                f"lsrb merge: {shard.dir / ATTEMPTS_FILE} holds an attempt of '{item_id}#s{sample}' "
                f"from another run (config_hash {str(rec.get('config_hash'))[:12]})."
            )
        if not 0 <= sample < samples:
            raise LsrbUsageError(
                f"lsrb merge: {shard.label} holds sample {sample} of '{item_id}' but the run takes "
                f"{samples} samples per item."
            )
    expected = int(shard.run["attempts_expected"])
    if len(records) != expected:
        raise LsrbUsageError(
            f"lsrb merge: {shard.label} holds {len(records)} of its {expected} attempts; finish it "
            "with --lsrb-resume before merging."
        )
    return records


def merged_config(config: dict[str, Any]) -> dict[str, Any]:
    return {**config, "shard_count": 1, "shard_index": 0}


def merge_summary(
    shards: Sequence[Shard], records: Iterable[AttemptRecord], config: dict[str, Any], config_hash: str
) -> dict[str, Any]:
    """The unsharded run's summary: recomputed metrics on a shard's header fields."""
    samples, task = shards[0].config.samples, get_task(shards[0].config.task)
    summarizer = summarizer_for(task, samples)
    for rec in records:
        summarizer.add(rec)
    metrics = summarizer.finish()
    expected = sum(int(s.run["attempts_expected"]) for s in shards)
    template = next((s.summary for s in shards if s.summary is not None), None) or shards[0].run
    # Fields a shard wrote that the merge neither recomputes nor sets, and that differ between
    # shards, were shard-local: the merged run cannot vouch for them.
    varying = {
        k for k in template if len({repr(s.summary.get(k)) for s in shards if s.summary is not None}) > 1
    }
    summary = {
        k: v
        for k, v in template.items()
        if k not in _HEADER_KEYS
        and k not in SUMMARY_TIMING_KEYS
        and k not in varying
        and k not in ("started_at", "merged_from")
    }
    summary.update(metrics)
    summary["schema_version"] = SUMMARY_SCHEMA_VERSION
    summary.update(
        config=config,
        config_hash=config_hash,
        shard_count=1,
        shard_index=0,
        attempts_expected=expected,
        complete=metrics["attempts"] == expected,
    )
    # Shards split the items (by item id), so the items the merged run expects are theirs summed.
    items = [s.summary.get("items_expected") if s.summary is not None else None for s in shards]
    if all(isinstance(n, int) for n in items):
        summary["items_expected"] = sum(n for n in items if isinstance(n, int))
    walls = [s.summary.get("wall_time_s") for s in shards if s.summary is not None]
    summary["wall_time_s"] = max((w for w in walls if isinstance(w, (int, float))), default=None)
    return summary


def merge_shards(dirs: Sequence[Path], out: Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Check, merge and write; returns the merged summary."""
    shards = [read_shard(d) for d in dirs]
    check_shards(shards)
    if any(out.resolve() == s.dir.resolve() for s in shards):
        raise LsrbUsageError(f"lsrb merge: --out {out} is one of the shards; choose a new directory.")
    existing = [n for n in (ATTEMPTS_FILE, RUN_FILE, SUMMARY_FILE) if (out / n).exists()]
    if existing and not overwrite:
        raise LsrbUsageError(
            f"lsrb merge: {out} already holds a run ({', '.join(existing)}); pass --overwrite or "
            "choose another --out."
        )
    shards.sort(key=lambda s: s.index)
    config = merged_config(shards[0].run["config"])
    config_hash = identity_hash(config)
    samples = shards[0].config.samples
    records: list[AttemptRecord] = []
    for shard in shards:
        records.extend(shard_records(shard, samples))
    records.sort(key=record_key)
    for n in existing:
        (out / n).unlink()
    writer = AttemptsWriter(out / ATTEMPTS_FILE)
    try:
        for rec in records:
            writer.write({**rec, "config_hash": config_hash})
    finally:
        writer.close()
    summary = merge_summary(shards, records, config, config_hash)
    starts = [str(s.run["started_at"]) for s in shards if s.run.get("started_at")]
    header = {
        **{k: v for k, v in shards[0].run.items() if k != "started_at"},
        "config": config,
        "config_hash": config_hash,
        "shard_count": 1,
        "shard_index": 0,
        "attempts_expected": summary["attempts_expected"],
        "merged_from": [
            {
                "dir": str(s.dir),
                "shard_index": s.index,
                "config_hash": s.run["config_hash"],
                "attempts": int(s.run["attempts_expected"]),
            }
            for s in shards
        ],
    }
    if starts:
        header["started_at"] = min(starts)
    write_json_atomic(out / RUN_FILE, header)
    write_json_atomic(out / SUMMARY_FILE, summary)
    return summary
