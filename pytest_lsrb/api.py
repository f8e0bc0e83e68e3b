"""The Python API for notebooks and scripts: run a suite and read a run back.

    from pytest_lsrb import api

    result = api.run("goal_to_tactic_proposal_v1", max_items=5, samples=2)
    result.summary["valid_rate"], len(result.records), result.run_dir

    again = api.load_run(result.run_dir)

`run` is `lsrb run SUITE --lsrb-...` in this process: it calls `pytest.main` with the same
command line (no second engine), so every option is checked by the same rules, the run writes
the same run directory, and the terminal shows the same lines. It may be called any number of
times in one process, from a script with no `if __name__ == "__main__":` guard (bounded work runs
in children of `core.forkhost`, which never re-runs the caller's script).

`load_run` reads an existing run directory through the one reader every command uses
(`output.reader.read_run`), so a tampered directory is refused in the same one sentence.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.suggest import did_you_mean
from pytest_lsrb.engine.records import AttemptRecord
from pytest_lsrb.engine.suite import find_suite
from pytest_lsrb.output.reader import read_run

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["LsrbUsageError", "RunOptions", "RunResult", "load_run", "run"]


class RunOptions(TypedDict, total=False):
    """Every `--lsrb-<name>` option as a keyword argument `<name>` (dashes become underscores),
    with the type its value has; the meanings are on the options page of the docs (and in
    `pytest --help`). `tests/test_api.py` checks that this lists exactly the option table's
    options, each with the table's choices."""

    adapter: str
    model: str
    base_url: str | None
    allow_model_alias: bool
    api_key_env: str | None
    max_tokens_field: str
    timeout: float
    max_retries: int
    retry_time: float
    concurrency: int | None
    cache_dir: str | os.PathLike[str] | None
    cache_journal: Literal["auto", "wal", "delete"]
    price: str | None
    progress: float | None
    dry_run: bool
    max_cost: float | None
    max_total_tokens: int | None
    max_wall_time: float | None
    seed: int
    samples: int
    temperature: float
    max_tokens: int
    split_policy: str
    goal_slice: str
    max_items: int | None
    shard_count: int | Literal["auto"]
    shard_index: int | Literal["auto"]
    index: str | os.PathLike[str] | None
    verification: str
    profiles: str | os.PathLike[str] | None
    allow_local_remotes: bool
    allow_native_decide: bool
    answer: Literal["tactic", "proof", "search"]
    search_iterations: int
    search_failures: int
    search_parse: Literal["sorrydb", "lenient"]
    screen: Literal["on", "off"]
    feedback_rounds: int
    forbid_search_tactics: bool
    strict_inherited_sorry: bool
    context: Literal["goal", "file"]
    context_lines: int | None
    prompt: Literal["suite", "sorrydb"]
    max_heartbeats: int | None
    fastpath: Literal["on", "off"]
    outcome: Literal["strict", "record"]
    output_dir: str | os.PathLike[str] | None
    resume: bool
    resume_or_start: bool
    retry_errors: bool
    overwrite: bool
    baseline: str | os.PathLike[str] | None
    baseline_missing: Literal["fail", "pass"]
    max_drop: str | None
    min: str | None
    max: str | None
    alpha: float
    sr_method: str
    sr_budget: int | None
    sr_time_limit: float | None
    sr_token_budget: int | None
    sr_judge_time_limit: float | None
    sr_fit_time_limit: float | None
    sr_fit: Literal["reference", "fast", "enhanced"]
    sr_lasr_backend: Literal["python", "pysr"]
    sr_lasr_rows: Literal["first", "seeded"]
    sr_reset_every: int | None
    sr_metrics: Literal["reference", "strict"]
    sr_partial_release: bool
    sr_per_problem: Literal["sample0", "best_train"]
    sr_judge: Literal["sympy", "llm", "both", "none"]
    sr_sa_scale: Literal["free", "strict"]
    sr_judge_model: str | None
    sr_judge_base_url: str | None
    sr_judge_api_key_env: str | None
    sr_judge_adapter: str | None
    sr_success: Literal["acc_0.1", "symbolic"]


@dataclass(frozen=True)
class RunResult:
    """One run: its directory and what it holds.

    - `run_dir`: the run's output directory (run.json, attempts.jsonl, summary.json).
    - `summary`: summary.json as a dict (None when the run did not finish: interrupted, stopped).
    - `records`: the latest record of each attempt in attempts.jsonl (a resumed attempt's last).
    - `header`: run.json (the run's identity: suite, config, config hash, selected_rows_hash).
    - `exit_code`: pytest's exit status for a run made by `run` (0: every test passed; 1: some
      failed, a wrong answer under the strict outcome; 6: the regression gate failed); None for a
      run read by `load_run`.
    - `warnings`: what the reader noticed (a missing summary, a torn last line).
    """

    run_dir: Path
    summary: dict[str, Any] | None
    records: list[AttemptRecord]
    header: dict[str, Any]
    exit_code: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def suite(self) -> str:
        return str(self.header.get("suite") or (self.summary or {}).get("suite") or "")

    @property
    def config(self) -> dict[str, Any]:
        config = self.header.get("config") or (self.summary or {}).get("config") or {}
        return dict(config) if isinstance(config, dict) else {}

    @property
    def finished(self) -> bool:
        """Every attempt of the run is written and summary.json with it."""
        return self.summary is not None


def load_run(path: str | os.PathLike[str]) -> RunResult:
    """Read an existing run directory (or `lsrb-out/<suite>/latest`); one sentence naming file,
    line and field (`LsrbUsageError`) when it is not a readable run."""
    from pytest_lsrb.output.runs import follow_latest

    run = read_run(follow_latest(Path(path)), "load_run", need_attempts=False)
    return RunResult(run.dir, run.summary, run.records, run.header, None, run.warnings)


def option_args(options: dict[str, Any]) -> list[str]:
    """The command line for `options` (keyword names as in `RunOptions`): `--lsrb-<name>=<value>`,
    a flag when True; None (and a flag's False) leaves the option to the suite's default."""
    from pytest_lsrb.engine.option_sets import installed_sets

    table = {o.key: o for o in installed_sets().options()}
    args: list[str] = []
    for name, value in options.items():
        opt = table.get(name)
        if opt is None:
            hint = did_you_mean(name, table)
            raise LsrbUsageError(f"run(): no option '{name}'{hint}; the options are RunOptions' keys.")
        if value is None:
            continue
        if opt.flag:
            if not isinstance(value, bool):
                raise LsrbUsageError(f"run(): option '{name}' is a flag: True or False (got {value!r}).")
            if value:
                args.append(f"--lsrb-{opt.name}")
            continue
        if isinstance(value, bool):
            raise LsrbUsageError(f"run(): option '{name}' takes a value, not {value!r}.")
        if isinstance(value, (list, tuple, set, frozenset, dict)):
            # One run measures one model: str(list) would be sent and recorded as one odd name.
            several = " (several models: call run() once per model, or `lsrb run` with several --lsrb-model)"
            raise LsrbUsageError(
                f"run(): option '{name}' takes one value, not a {type(value).__name__}"
                + (several if name == "model" else "")
                + "."
            )
        args.append(f"--lsrb-{opt.name}={os.fspath(value) if isinstance(value, os.PathLike) else value}")
    return args


class _RunWatcher:
    """A plugin for the one session `run` starts: it learns where the run wrote and keeps the
    sentence of a usage error (pytest prints it; `run` raises it)."""

    def __init__(self) -> None:
        self.run_dir: Path | None = None
        self.usage_error: str | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionstart(self, session: pytest.Session) -> Generator[None, None, None]:
        try:
            return (yield)
        except pytest.UsageError as exc:
            self.usage_error = str(exc)
            raise

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from pytest_lsrb.session.controller import ControllerSession

        state = session.config.pluginmanager.get_plugin("lsrb-session")
        if isinstance(state, ControllerSession) and state.output is not None:
            self.run_dir = state.output.dir


def run(
    suite: str | os.PathLike[str],
    *,
    workers: int | None = None,
    pytest_args: Sequence[str] = (),
    **options: Unpack[RunOptions],
) -> RunResult:
    """Run a suite (a built-in suite's name or a suite folder) in this process and return the run.

    `options` are the `--lsrb-*` options by name (`max_items=5` is `--lsrb-max-items=5`; see
    `RunOptions`); `workers` is pytest-xdist's `-n`; `pytest_args` go to pytest as they are
    (`["-q"]`, `["-k", "nat"]`). The run's exit status is `RunResult.exit_code`: a failing test
    (a wrong answer) does not raise. A usage error (an unknown option, a bad value, a bad input
    file) raises `LsrbUsageError` with its one sentence, before any model call.
    """
    root = find_suite(suite)
    args = [str(root), "-p", "no:cacheprovider", *option_args(dict(options))]
    if workers is not None:
        args += ["-n", str(workers)]
    args += list(pytest_args)
    watcher = _RunWatcher()
    status = int(pytest.main(args, plugins=[watcher]))
    if watcher.run_dir is None:
        if watcher.usage_error is not None:
            raise LsrbUsageError(watcher.usage_error)
        raise LsrbUsageError(
            f"the run of {root.name} did not start (pytest exit status {status}; pytest printed why)."
        )
    result = load_run(watcher.run_dir)
    return RunResult(result.run_dir, result.summary, result.records, result.header, status, result.warnings)
