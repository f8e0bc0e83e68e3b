"""An xdist worker's role: it appends its own records to the run's attempts.jsonl, sends per-test
events to the controller in batches (`session.seams.transport`), and after another worker crashed takes
what is already in attempts.jsonl as done (as xdist's `remote.py` for `dsession.py`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, ClassVar

import pytest

from pytest_lsrb.core.errors import OutputWriteError
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.session import xdist
from pytest_lsrb.session.base import LsrbSession

if TYPE_CHECKING:
    from pytest_lsrb.engine.records import AttemptRecord
    from pytest_lsrb.engine.runner import Runner
    from pytest_lsrb.output.owner import Owner
    from pytest_lsrb.output.rundir import WorkerOutput
    from pytest_lsrb.session.seams.transport import Batcher


class WorkerSession(LsrbSession):
    """An xdist worker's state: its appends to attempts.jsonl, its batched sends, the crashes it
    has caught up with."""

    is_worker: ClassVar[bool] = True

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(config)
        self.batcher: Batcher | None = None  # its batched sends to the controller
        self.worker_output: WorkerOutput | None = None  # its appends to attempts.jsonl
        self.crashes_seen = 0  # crash flags it has caught up with
        self.owner: Owner | None = None  # the controller that must own the run for it to go on
        self.lost_owner: str | None = None  # why it no longer does (then no more requests)

    def start(self, run: SuiteRun) -> None:
        """Append records to the run's attempts.jsonl itself, and send per-test events to the
        controller in batches (`session.seams.transport`)."""
        from pytest_lsrb.output.files import ATTEMPTS_FILE
        from pytest_lsrb.output.rundir import WorkerOutput
        from pytest_lsrb.session.seams.transport import batch_sends, running_marker

        marker = None
        if xdist.given_run_dir(self.config) is not None and not self.config.option.collectonly:
            self.worker_output = WorkerOutput(run.config.output_dir / ATTEMPTS_FILE)
            xdist.drop_terminal(self.config)
            marker = running_marker(run.config.output_dir, xdist.worker_id(self.config))
            self.owner = xdist.given_owner(self.config)
            self.lost_owner = self.owner.problem() if self.owner is not None else None
            self.watch_attempts(run, xdist.worker_id(self.config))
        self.batcher = batch_sends(self.config, marker)

    def before_attempt(self, runner: Runner) -> None:
        """Stop once the controller is gone or no longer owns the run, or the run's lock file is
        not the one it locked (`output.owner`: a controller killed with SIGKILL cannot stop its
        workers); after a worker crashed, take
        what is already in attempts.jsonl as done (`xdist.crash_flag`)."""
        if self.run is None:
            return
        if self.owner is not None:
            self.lost_owner = self.lost_owner or self.owner.parent_problem() or self.owner.lock_problem()
            if self.lost_owner is not None:
                runner.stop(self.lost_owner, everywhere=False)  # the run may be another's now
                return
        run_dir = self.run.config.output_dir
        seen = self.crashes_seen
        while os.access(xdist.crash_flag(run_dir, self.crashes_seen + 1), os.F_OK):
            self.crashes_seen += 1
        if self.crashes_seen != seen:
            from pytest_lsrb.output import rundir as outputs

            runner.finished.update(outputs.finished_judgements(self.run))

    def keep(self, record: AttemptRecord) -> None:
        if self.worker_output is None:
            return
        try:
            self.worker_output.append(record)
        except OutputWriteError as exc:  # a full disk: stop with one sentence, keep what was written
            self.stop_writing(str(exc))

    def append_untaken(self, record: AttemptRecord) -> None:
        if self.worker_output is not None:
            self.worker_output.append(record)

    def stop_writing(self, message: str) -> None:
        """The disk refused a record: this worker stops, and so do the others."""
        super().stop_writing(message)
        if self.runner is not None:
            self.runner.stop(message)

    def finish(self, session: pytest.Session) -> None:
        """Close its appends, and hand a write the disk refused on to the controller."""
        super().finish(session)
        if self.worker_output is None:
            return
        self.worker_output.close()
        if self.run is not None:
            from pytest_lsrb.session.seams.transport import running_marker

            running_marker(self.run.config.output_dir, xdist.worker_id(self.config)).unlink(missing_ok=True)
        if self.worker_output.write_error is not None:
            xdist.send_write_error(self.config, self.worker_output.write_error)
