"""What to run next: after a run that did not finish (Ctrl-C, SIGTERM, a stop, a full disk) or
that met infrastructure errors, the session's last line is the exact command that finishes it.

The command is the one the user typed, with `--lsrb-resume` (unless it resumes already), with
`--lsrb-retry-errors` when attempts ended in an infrastructure error (so they are asked again,
not replayed), without `--lsrb-overwrite`, and naming the run's own directory when the run chose
it (so a later run of the same options in that folder does not change which run is meant).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_lsrb.adapters.outage import Down
    from pytest_lsrb.engine.budget import BudgetStop

RESUME_FLAGS = ("--lsrb-resume", "--lsrb-resume-or-start")


def typed_command(argv: Sequence[str], pytest_args: Sequence[str]) -> list[str]:
    """The command line as the user typed it (`lsrb run ...`, `pytest ...`, `python -m pytest ...`);
    a script that called `pytest.main(args)` shown as `python -m pytest args`."""
    first = argv[0] if argv else ""
    name = Path(first).name
    if name in ("lsrb", "pytest", "py.test"):
        return [name, *argv[1:]]
    parts = Path(first).parts
    if parts[-2:] == ("pytest", "__main__.py"):
        return ["python", "-m", "pytest", *argv[1:]]
    if parts[-2:] == ("pytest_lsrb", "__main__.py"):
        return ["python", "-m", "pytest_lsrb", *argv[1:]]
    return ["python", "-m", "pytest", *pytest_args]


def _named(word: str, flag: str) -> bool:
    return word == flag or word.startswith(flag + "=")


def resume_command(typed: Sequence[str], run_dir: Path | None, *, retry_errors: bool) -> list[str]:
    """`typed` made into the command that finishes its run (pure: a law the tests check)."""
    words = [w for w in typed if not _named(w, "--lsrb-overwrite")]
    if not any(_named(w, flag) for w in words for flag in RESUME_FLAGS):
        words.append("--lsrb-resume")
    if retry_errors and not any(_named(w, "--lsrb-retry-errors") for w in words):
        words.append("--lsrb-retry-errors")
    if run_dir is not None and not any(_named(w, "--lsrb-output-dir") for w in words):
        words.append(f"--lsrb-output-dir={shown_dir(run_dir)}")
    return words


def with_option(words: Sequence[str], flag: str, value: str) -> list[str]:
    """`words` with `flag` set to `value` (`--flag=X` or `--flag X` replaced; added when absent)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word == flag:
            skip = True
            continue
        if not word.startswith(flag + "="):
            out.append(word)
    return [*out, f"{flag}={value}"]


def shown_dir(path: Path) -> str:
    """A path relative to the current directory when it lies inside it."""
    try:
        return os.fspath(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return os.fspath(path)


def why_unfinished(summary: Mapping[str, Any] | None, interrupted: bool) -> str | None:
    """Why the run needs another command, or None when it finished cleanly."""
    if interrupted:
        return "the run was stopped before it finished"
    if summary is None:
        return "the run did not write its summary"
    infrastructure = summary.get("infrastructure_attempts") or 0
    if infrastructure:
        return f"{infrastructure} attempt(s) ended in an infrastructure error"
    if summary.get("complete") is False:
        return "the run did not finish every attempt"
    return None


def next_step_line(
    summary: Mapping[str, Any] | None,
    interrupted: bool,
    run_dir: Path,
    runs_folder: bool,
    pytest_args: Sequence[str],
    argv: Sequence[str] | None = None,
    budget_stop: BudgetStop | None = None,
    outage: Down | None = None,
) -> str | None:
    """The last line of an unfinished run: why, and the command that finishes it (after a budget
    stop: with a budget that should let it finish, `engine.budget.continue_value`; after the
    server's outage stopped it: once the server is back)."""
    why = why_unfinished(summary, interrupted)
    if why is None and outage is None:
        return None
    retry = bool(summary and summary.get("infrastructure_attempts"))
    typed = typed_command(list(sys.argv if argv is None else argv), pytest_args)
    command = resume_command(typed, run_dir if runs_folder else None, retry_errors=retry)
    if budget_stop is not None:
        from pytest_lsrb.engine.budget import continue_value, shown

        done = int((summary or {}).get("attempts") or 0)
        total = int((summary or {}).get("attempts_expected") or 0)
        larger = continue_value(budget_stop, done, total)
        command = with_option(command, budget_stop.option, shown(larger))
        why = (
            f"the run stopped at its budget ({budget_stop.option} {shown(budget_stop.limit)}; "
            f"spent {shown(budget_stop.spent)}) with {done} of {total} attempts done"
        )
        return f"lsrb: {why}; to continue it with a larger budget, run: {printable(command)}"
    if outage is not None and outage.since is not None:
        from pytest_lsrb.adapters.outage import clock_time

        done = int((summary or {}).get("attempts") or 0)
        total = int((summary or {}).get("attempts_expected") or 0)
        why = (
            f"the server at {outage.url} has been down since {clock_time(outage.since)} (every call "
            f"failed for {outage.window:g} s, --lsrb-retry-time) with {done} of {total} attempts done"
        )
        return f"lsrb: {why}; when it is back, run: {printable(command)}"
    return f"lsrb: {why}; to finish it, run: {printable(command)}"


def printable(command: Sequence[str]) -> str:
    """`command` as a line to print: no URL credentials and no key in it (`core.credentials`)."""
    from pytest_lsrb.core.credentials import USERINFO_ENV, shown_command

    words, stripped = shown_command(command)
    line = shlex.join(words)
    # A several-model run's child got its URL's credentials in the variable: they are not shown.
    inherited = bool(os.environ.get(USERINFO_ENV)) and any("--lsrb-base-url" in w for w in words)
    if stripped or inherited:
        line += f"  (the URL's credentials are left out: set {USERINFO_ENV}=user:password first)"
    return line
