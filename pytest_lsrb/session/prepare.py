"""From a suite folder and the command line to a `SuiteRun`: load, validate, select, shard and
expand, and (without --lsrb-output-dir) choose the run's own directory. Every user mistake
surfaces here as one `LsrbUsageError`, before any model is called."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.options import RunConfig
from pytest_lsrb.engine.plan import SuiteRun
from pytest_lsrb.engine.suite import load_suite


def prepare_suite_run(
    root: Path,
    getoption: Any,
    rootdir: Path,
    run_dir: Path | None = None,
    resume: bool | None = None,
    adapter_identity: dict[str, str] | None = None,
    name_adapter: Callable[[SuiteRun], dict[str, str]] | None = None,
) -> SuiteRun:
    """Load, validate, select, shard and expand: pure of side effects on the output directory.

    Without --lsrb-output-dir the run's own directory is chosen here, once the config hash is
    known; an xdist worker is handed its controller's choice as `run_dir`. With
    --lsrb-resume-or-start, whether the run resumes is decided here too (the worker is handed its
    controller's decision as `resume`: by the time it looks, the controller has started the run).
    `adapter_identity`: a user's own lsrb_adapter fixture (`session.overrides`), part of the identity.
    `name_adapter`: given the run as decided so far, the identity entries of the adapter a user's
    own lsrb_adapter makes (its class and settings); they replace `adapter_identity`'s before the
    config hash, and the run directory it names, are fixed.
    """
    from pytest_lsrb.core.selection import expand, select, selected_rows_hash, shard
    from pytest_lsrb.engine.options import resolve
    from pytest_lsrb.engine.task import get_task, with_verification_mode
    from pytest_lsrb.tools.splits import split_policy_predicate

    spec = load_suite(root)
    resolve(getoption, spec, rootdir)  # a bad value is said before the task's code is imported
    task = get_task(spec.task, f"{spec.root / 'suite.toml'}: field 'suite.task'")
    config = resolve(getoption, spec, rootdir, task)
    try:
        config = with_verification_mode(task, task.configure(config))
        task.check_options(config.values)
        rows = task.load_rows(spec, config.index)
        keep_split = split_policy_predicate(config.split_policy, config.index)
        keep_slice = task.slice_predicate(config.goal_slice)
        selected = select(
            rows,
            keep=lambda row: keep_split(row) and keep_slice(row),
            seed=config.seed,
            max_items=config.max_items,
        )
        mine = shard(selected, config.shard_count, config.shard_index)
        cases = expand(mine, config.samples, config.seed)
    except LsrbUsageError as exc:  # a value that came from suite.toml is named there
        raise config.blame(exc) from None
    selected_hash = selected_rows_hash(selected)
    if adapter_identity:
        config = dataclasses.replace(config, extra_identity={**config.extra_identity, **adapter_identity})
    if name_adapter is not None:
        so_far = SuiteRun(spec, task, config, len(selected), selected_hash, cases, config.config_hash())
        named = name_adapter(so_far)
        config = dataclasses.replace(config, extra_identity={**config.extra_identity, **named})
    if config.runs_folder:
        config = dataclasses.replace(config, output_dir=run_dir or choose_run_dir(config))
    if config.resume_or_start:
        from pytest_lsrb.output.files import RUN_FILE

        if resume is None:
            resume = (config.output_dir / RUN_FILE).is_file()
        config = dataclasses.replace(config, values={**config.values, "resume": resume})
    return SuiteRun(
        spec=spec,
        task=task,
        config=config,
        selected_count=len(selected),
        selected_hash=selected_hash,
        cases=cases,
        config_hash=config.config_hash(),
    )


def choose_run_dir(config: RunConfig) -> Path:
    """A new run directory in the runs folder, or (--lsrb-resume) the one to resume."""
    from pytest_lsrb.output.runs import new_run_dir, resumable_run_dir

    folder, config_hash = config.output_dir, config.config_hash()
    if config.resume_or_start:  # the latest run of these options, finished or not; else a new one
        try:
            return resumable_run_dir(folder, config_hash, finished_too=True)
        except LsrbUsageError:
            return new_run_dir(folder, config_hash)
    if config.resume:
        return resumable_run_dir(folder, config_hash, finished_too=config.retry_errors)
    return new_run_dir(folder, config_hash)
