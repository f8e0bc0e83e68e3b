"""The output directory of one run: run.json, attempts.jsonl, summary.json.

A run refuses to start over an existing run unless told to resume or overwrite, so finished work
is never lost by accident. Resume checks that the run's identity has not changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from pytest_lsrb.adapters.outage import OUTAGE_FILE
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS, LsrbUsageError, OutputWriteError
from pytest_lsrb.core.nofollow import linked_names
from pytest_lsrb.core.rows import describe_validation_error
from pytest_lsrb.engine.cost import parse_price, summary_cost
from pytest_lsrb.engine.outcomes import INFRASTRUCTURE, judgement, status
from pytest_lsrb.engine.records import AttemptRecord, record_key
from pytest_lsrb.engine.stop import STOP_FILE
from pytest_lsrb.engine.summary import SUMMARY_SCHEMA_VERSION, Summarizer, summarizer_for
from pytest_lsrb.engine.task import Judgement, record_type_of
from pytest_lsrb.output.files import (
    ATTEMPTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    AttemptsReadReport,
    AttemptsWriter,
    glued_record,
    glued_warning,
    read_json,
    write_failure,
    write_json_atomic,
)
from pytest_lsrb.output.models import RunHeader
from pytest_lsrb.output.reader import iter_records, latest_records, summarize_file
from pytest_lsrb.output.runs import point_latest

if TYPE_CHECKING:
    from pytest_lsrb.engine.plan import SuiteRun

T = TypeVar("T")
RUN_SCHEMA_VERSION = 1


def run_header(run: SuiteRun) -> dict[str, Any]:
    return {
        "schema_version": RUN_SCHEMA_VERSION,
        "suite": run.spec.name,
        "config": run.config.identity(),
        "config_hash": run.config_hash,
        "selected_rows_hash": run.selected_hash,
        "selected_items": run.selected_count,
        "shard_count": run.config.shard_count,
        "shard_index": run.config.shard_index,
        "attempts_expected": len(run.cases),
    }


@dataclass
class RunOutput:
    dir: Path
    run: SuiteRun
    writer: AttemptsWriter
    header: dict[str, Any]
    # A run that does not resume writes each attempt once: its summary is kept up to date as
    # records are appended, instead of reading attempts.jsonl back at the end.
    live: Summarizer | None = None
    # Set when the disk refused a write: the run stops, nothing more is written (no summary: the
    # run is unfinished and resumable).
    write_error: str | None = None
    # Under xdist the workers append their records themselves; the controller follows the file
    # from here (its size when the run opened it) to feed the live summary and the progress line.
    followed: int = 0
    # What following the file noticed and got past (a worker's record cut short mid-write).
    warnings: list[str] = field(default_factory=list)
    # Every record of this run as written, when the session's gate needs them after the run
    # (None: not kept; a resumed run's gate reads the file, which holds the earlier records too).
    kept: list[AttemptRecord] | None = None

    @classmethod
    def open(cls, run: SuiteRun) -> RunOutput:
        out = run.config.output_dir
        attempts = out / ATTEMPTS_FILE
        run_file = out / RUN_FILE
        header = run_header(run)
        refuse_links(out)
        has_run = attempts.exists() and attempts.stat().st_size > 0
        read = AttemptsReadReport()
        if run.config["resume"]:
            if not run_file.exists():
                raise LsrbUsageError(f"--lsrb-resume: {out} holds no run to resume (no {RUN_FILE}).")
            check_resumable(run_file, header)
            # A record this run could not read back stops it here, before run.json is touched;
            # what it read past (a torn last line, a cut-short record) it says at the end.
            for _ in iter_records(attempts, read, record_type_of(run.task)):
                pass
        elif has_run or run_file.exists():
            if not run.config["overwrite"]:
                raise LsrbUsageError(
                    f"{out} already holds a run; pass --lsrb-resume to continue it, "
                    "--lsrb-overwrite to replace it, or choose another --lsrb-output-dir."
                )
            for name in (ATTEMPTS_FILE, SUMMARY_FILE, RUN_FILE, "gate.json"):  # gate.GATE_FILE
                (out / name).unlink(missing_ok=True)
        header["started_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        target = run_file
        try:
            write_json_atomic(run_file, header)
            if run.config.runs_folder:
                target = out.parent / "latest"
                point_latest(out)
            target = attempts
            writer = AttemptsWriter(attempts)
        except OSError as exc:
            raise LsrbUsageError(write_failure(target, exc, running=False)) from None
        samples = run.config.samples
        live = None if run.config["resume"] else summarizer_for(run.task, samples)
        output = cls(dir=out, run=run, writer=writer, header=header, live=live, warnings=read.warnings)
        output.followed = attempts.stat().st_size
        return output

    def append(self, record: AttemptRecord) -> AttemptRecord | None:
        """Append one record and return it as a reader will see it (None once writing has
        failed); OutputWriteError (once) when the disk refuses it."""
        if self.write_error is not None:
            return None
        written = self._guarded(lambda: self.writer.write(record), self.writer.path)
        if self.live is not None:
            self.live.add(written)
        if self.kept is not None:
            self.kept.append(written)
        return written

    def follow(self) -> Iterator[AttemptRecord]:
        """The records xdist workers appended since the last call (whole lines only: a line a
        worker is still writing waits for the next call), each fed to the live summary once.

        Read in blocks, so a call at the end of a long run holds one block, not the whole file.
        A worker's record cut short (the worker was killed mid-write, or the disk refused the rest)
        and another worker's record after it on the same line: that record is kept and the line is
        noted in `warnings`, as every reader of the file does (`files.glued_record`). Any other
        line that does not decode stops the run like a refused write, naming the line.
        """
        path = self.writer.path
        try:
            fh = path.open("rb")
        except OSError as exc:  # `rm -rf` of the run folder while the workers write it
            self.write_error = self.write_error or (
                f"cannot read {path}: {exc.strerror or exc}; was the run's folder deleted or moved "
                "while it ran? The run stops here; what it wrote is wherever the folder went."
            )
            return
        with fh:
            # up to the size it has now (a device such as /dev/full would read forever)
            left = os.fstat(fh.fileno()).st_size - self.followed
            fh.seek(self.followed)
            rest = b""
            while self.write_error is None and left > 0:
                block = fh.read(min(FOLLOW_BLOCK, left))
                if not block:
                    break
                left -= len(block)
                data = rest + block
                end = data.rfind(b"\n") + 1
                rest = data[end:]
                for line in data[:end].split(b"\n")[:-1]:
                    record = self._decode(line, path)
                    if record is None:
                        return
                    self.followed += len(line) + 1
                    if self.live is not None:
                        self.live.add(record)
                    if self.kept is not None:
                        self.kept.append(record)
                    yield record

    def _decode(self, line: bytes, path: Path) -> AttemptRecord | None:
        """One followed line's record; None, with `write_error` set, when the line holds none."""
        try:
            # (str, not bytes: json.loads would guess the encoding of every line)
            decoded: AttemptRecord = json.loads(line.decode("utf-8"))
            return decoded
        except ValueError:
            pass
        lineno = _count_lines(path, self.followed) + 1
        record = glued_record(path, lineno, line)
        if record is not None:
            self.warnings.append(glued_warning(path, lineno))
            return record
        self.write_error = (
            f"{path}:{lineno}: not a valid attempt record (a write was cut short); the run stops "
            "here and every attempt written before it is kept: remove that line and continue the "
            "run with --lsrb-resume."
        )
        return None

    def _guarded(self, write: Callable[[], T], path: Path) -> T:
        try:
            return write()
        except OSError as exc:
            self.write_error = write_failure(path, exc)
            raise OutputWriteError(self.write_error) from None

    def finish(
        self, wall_time_s: float, selection: set[tuple[str, int]] | None = None
    ) -> dict[str, Any] | None:
        """Write summary.json and return it; None when a write failed (see `write_error`).

        `selection`: the cases pytest selected (`-k`, `-m`, node ids); the run is complete when
        they are done, so a `-k` run is a whole run and its resume finishes what it left. None:
        every case of the run."""
        try:
            self.writer.close()
        except OSError as exc:
            self.write_error = self.write_error or write_failure(self.writer.path, exc)
        if self.write_error is not None:
            return None
        run = self.run
        keys = {case.key for case in run.cases}
        if self.live is not None:  # a fresh run: what it wrote is its selection's
            metrics = self.live.finish()
            if selection is not None:
                keys &= selection
        else:
            metrics = summarize_file(
                self.dir / ATTEMPTS_FILE,
                summarizer_for(run.task, run.config.samples),
                keys,
                record_type_of(run.task),
            )
            if selection is not None:  # a resume: its selection, and whatever earlier ones recorded
                path = self.dir / ATTEMPTS_FILE
                done = {record_key(r) for r in latest_records(path, record_type=record_type_of(run.task))}
                keys &= selection | done
        summary = {
            "schema_version": SUMMARY_SCHEMA_VERSION,
            "suite": run.spec.name,
            "config": self.header["config"],
            "config_hash": run.config_hash,
            "selected_rows_hash": run.selected_hash,
            "selected_items": run.selected_count,
            "shard_count": self.header["shard_count"],
            "shard_index": self.header["shard_index"],
            "attempts_expected": len(keys),
            "items_expected": len({item_id for item_id, _ in keys}),
            "complete": metrics["attempts"] == len(keys),
            **run.task.summary_fields(run.config),
            **metrics,
            "wall_time_s": round(wall_time_s, 3),
        }
        price = parse_price(run.config["price"])
        if price is not None:
            summary.update(summary_cost(summary, price))
        try:
            self._guarded(
                lambda: write_json_atomic(self.dir / SUMMARY_FILE, summary), self.dir / SUMMARY_FILE
            )
        except OutputWriteError:
            return None
        return summary


FOLLOW_BLOCK = 1 << 20


def _count_lines(path: Path, end: int) -> int:
    """Lines in the first `end` bytes of `path`."""
    count = 0
    with path.open("rb") as fh:
        while end > 0:
            block = fh.read(min(FOLLOW_BLOCK, end))
            if not block:
                break
            count += block.count(b"\n")
            end -= len(block)
    return count


class WorkerOutput:
    """An xdist worker's side of the run's attempts.jsonl: it appends its own records.

    The file is opened O_APPEND and each record is one write(2) of one whole line
    (`AttemptsWriter`): on a local filesystem the kernel appends each such write whole, so the
    workers' lines never interleave, and a record is on disk before its test's report is made.
    The controller opened the file before any worker started, and follows it (`RunOutput.follow`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: AttemptsWriter | None = None
        self.write_error: str | None = None

    def append(self, record: AttemptRecord) -> None:
        """Append one record; OutputWriteError (once) when the disk refuses it."""
        if self.write_error is not None:
            return
        try:
            if self.writer is None:
                self.writer = AttemptsWriter(self.path, repair_tail=False)
            self.writer.write(record)
        except OSError as exc:
            self.write_error = write_failure(self.path, exc)
            raise OutputWriteError(self.write_error) from None

    def close(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError as exc:
                self.write_error = self.write_error or write_failure(self.path, exc)
            self.writer = None


# What lsrb writes in a run directory (besides `.lsrb-*`: lock, ledger, stop, crash flags).
WRITTEN_NAMES = (ATTEMPTS_FILE, RUN_FILE, SUMMARY_FILE, "gate.json", "report.html")
# The run's state files a session removes when it opens (an earlier run's stop, its server's outage).
CLEARED_NAMES = (STOP_FILE, OUTAGE_FILE)


def refuse_links(out: Path) -> None:
    """A run directory holding a symbolic link named like a file lsrb writes is refused in one
    sentence before anything is written (every writer also opens without following one,
    `core.nofollow`, which closes the gap after this look). So is a folder where the session
    removes a file when it opens (`CLEARED_NAMES`): its unlink would end in a traceback."""
    links = linked_names(out, WRITTEN_NAMES, ".lsrb-")
    if links:
        raise LsrbUsageError(
            f"{out} holds symbolic link(s) named like files lsrb writes ({', '.join(links)}); lsrb "
            "never writes a run's file through a link: remove them, or choose another --lsrb-output-dir."
        )
    folders = [name for name in CLEARED_NAMES if (out / name).is_dir()]
    if folders:
        raise LsrbUsageError(
            f"{out} holds a folder where lsrb keeps a file of the run ({', '.join(folders)}); lsrb "
            "removes that file when a run opens and never removes a folder: remove it, or choose "
            "another --lsrb-output-dir."
        )


def check_resumable(run_file: Path, header: dict[str, Any]) -> None:
    previous = read_json(run_file)
    if not isinstance(previous, dict):
        raise LsrbUsageError(f"{run_file}: not a run header (expected a JSON object).")
    try:
        RunHeader.model_validate(previous)
    except ValidationError as exc:
        raise LsrbUsageError(f"{run_file}: {describe_validation_error(exc)}.") from None
    for key in ("config_hash", "shard_index", "shard_count", "selected_rows_hash"):
        if previous.get(key) != header[key]:
            old_cfg = previous.get("config", {}) if isinstance(previous.get("config"), dict) else {}
            changed = sorted(
                k
                for k in set(old_cfg) | set(header["config"])
                if old_cfg.get(k) != header["config"].get(k) and k != "index"
            )
            what = f" (changed: {', '.join(changed)})" if changed else ""
            raise LsrbUsageError(
                f"--lsrb-resume: {run_file} was written by a different run: its field '{key}' "
                f"does not match this one{what}; resume with the same options or use another "
                "--lsrb-output-dir."
            )


def finished_judgements(run: SuiteRun) -> dict[tuple[str, int], Judgement]:
    """What a resumed run already has: the judgement of each finished attempt by key."""
    path = run.config.output_dir / ATTEMPTS_FILE
    wanted = {case.key for case in run.cases}
    retry_errors = run.config.retry_errors
    done: dict[tuple[str, int], Judgement] = {}
    for rec in latest_records(path, record_type=record_type_of(run.task)):
        key = record_key(rec)
        if key not in wanted or rec.get("config_hash") != run.config_hash:
            continue
        if retry_errors and status(rec) == INFRASTRUCTURE:
            # only what failed outside the model (THE judging rule, `engine.outcomes`): the
            # model's own failures (empty_output, ...) are its answer, and asking again would
            # be a second try at the same attempt
            continue
        if rec.get("generation_error_kind") in FATAL_GENERATION_KINDS:
            continue  # refused (quota/auth) or stopped by that refusal: never really attempted
        done[key] = judgement(run.task, rec)
    return done
