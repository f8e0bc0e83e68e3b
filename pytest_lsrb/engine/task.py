"""The task plug point: what a suite asks, how it reads the answer, how it judges and sums up.

A task owns one attempt end to end (`run_attempt`): the tactic task makes one model call and one
verification; an equation task runs a whole discovery method. The engine adds the identity fields
(item, sample, seed, suite, adapter, model) and handles records, resume and concurrency.
"""

from __future__ import annotations

import dataclasses
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Literal, Protocol, TypeVar

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, MockAnswers, SamplingConfig
from pytest_lsrb.core.errors import LsrbUsageError, printable
from pytest_lsrb.core.registry import TASKS_GROUP, Registry, refuse_unfit
from pytest_lsrb.core.selection import Case, SelectableRow
from pytest_lsrb.engine.records import AttemptFields, AttemptRecord
from pytest_lsrb.engine.verifier import Verifier

if TYPE_CHECKING:
    from pytest_lsrb.engine.options import RunConfig
    from pytest_lsrb.engine.suite import SuiteSpec


# A task's own row model (`TacticRow`, `Problem`): what it loads, selects by and attempts.
RowT = TypeVar("RowT", bound=SelectableRow)


# Not frozen: one per attempt, and a frozen dataclass's __init__ costs ~3x a plain one's. Tasks read it.
@dataclass
class AttemptContext(Generic[RowT]):
    case: Case[RowT]
    adapter: Adapter
    verifier: Verifier[RowT]
    sampling: SamplingConfig
    suite: SuiteSpec
    options: Mapping[str, Any]  # task-specific options (e.g. the discovery method and its budget)


@dataclass(frozen=True)
class Judgement:
    """How one finished attempt maps onto a pytest outcome under the strict policy."""

    outcome: Literal["pass", "fail", "error", "skip"]
    message: str = ""

    def __post_init__(self) -> None:
        # The message quotes what a model or a tool wrote; pytest prints it and xdist sends it.
        object.__setattr__(self, "message", printable(self.message, keep_lines=True))


PASS: Final = Judgement("pass")  # immutable: one for every passing attempt


class SummaryAccumulator(Protocol):
    def add(self, record: AttemptRecord) -> None: ...

    def finish(self) -> dict[str, Any]: ...


class NoSummary:
    """A task with no summary sections of its own (`Task.summary_accumulator`'s default)."""

    def add(self, record: AttemptRecord) -> None:
        return None

    def finish(self) -> dict[str, Any]:
        return {}


class Task(ABC, Generic[RowT]):
    """A task: subclass it, set the three class attributes and write `load_rows`, `run_attempt`
    and `mock_answer`; every other member has a default here, so an editor lists them all
    (inspect_ai's `ModelAPI`). The engine calls members, never probes for them."""

    name: ClassVar[str]
    # The name of the record field that holds the extracted answer, besides `proposal`.
    answer_field: ClassVar[str] = "proposal"
    # The --lsrb-verification modes this task can check answers with; the first is its default.
    verification_modes: ClassVar[tuple[str, ...]] = ("none",)
    # The record its attempts are (its family's `TypedDict`, e.g. `TacticAttemptRecord`): readers
    # check that family's fields too (`record_type_of`).
    record_type: ClassVar[type[Any]] = AttemptRecord

    @abstractmethod
    def load_rows(self, suite: SuiteSpec, index_path: Path) -> Iterable[RowT]:
        """Validate rows (a list, or a generator that streams them); on a bad row raise
        `LsrbUsageError` naming file, line and field. Selection consumes it once."""

    @abstractmethod
    def run_attempt(self, ctx: AttemptContext[RowT]) -> AttemptFields:
        """Do one attempt; return its task fields. Never raises for model or toolchain failures."""

    @abstractmethod
    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """What the mock adapter answers for this task: a deterministic local baseline."""

    def configure(self, config: RunConfig) -> RunConfig:
        """Task-specific defaults on the resolved run config (none by default)."""
        return config

    def check_options(self, values: Mapping[str, Any]) -> None:
        """Refuse (`LsrbUsageError`) a bad task-specific option before any model call."""
        return None

    def option_owners(self, values: Mapping[str, Any]) -> Mapping[str, str]:
        """The parts this run plugs in whose declared options then apply, by kind (an
        `OptionSet`'s `kind`): llm_srbench's `{"method": <--lsrb-sr-method>}`. `values` hold the
        every-suite options and this task's; none by default."""
        return {}

    def row_keywords(self, row: RowT) -> Iterable[str]:
        """Words `-k` can select this row's tests by (repository, path, tags, ...)."""
        return ()

    def slice_predicate(self, goal_slice: str) -> Callable[[RowT], bool]:
        """A filter for `--lsrb-goal-slice`; raise `LsrbUsageError` for an unknown slice. By
        default a task has no slices but `all`."""
        if goal_slice != "all":
            raise LsrbUsageError(
                f"--lsrb-goal-slice: the {self.name} task has no slice '{goal_slice}' (only all)."
            )
        return _every_row

    def calls_per_attempt(self, values: Mapping[str, Any]) -> int:
        """The most model calls one attempt may make (what `--collect-only` reports)."""
        return 1

    def judge(self, record: AttemptRecord) -> Judgement:
        """Pass or fail (the model's answer is wrong, with why) for a judged record whose
        generation succeeded; infrastructure errors and skips never get here (`outcomes.judgement`).
        By default the verdict (or, unverified, whether the answer was readable) decides."""
        shown = record.get("proposal") or ""
        if record.get("verification_attempted"):
            if record.get("verification_success"):
                return PASS
            return Judgement(
                "fail", f"the answer {shown!r} did not verify: {record.get('verification_outcome')}"
            )
        return PASS if record.get("valid") else Judgement("fail", f"no readable answer ({shown!r})")

    def summary_accumulator(self, samples_per_item: int) -> SummaryAccumulator:
        """Suite-specific summary sections (merged into summary.json); none by default."""
        return NoSummary()

    def summary_fields(self, config: RunConfig) -> dict[str, Any]:
        """summary.json fields that come from the run's config rather than its records."""
        return {}

    def score_label(self, values: Mapping[str, Any]) -> str:
        """What a judged attempt's success is called on the progress line (`closed`, `Acc0.1`)."""
        return "success"

    def terminal_rows(self, summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The task's own rows of the end-of-run metrics table (name, value)."""
        return []

    def terminal_lines(self, summary: Mapping[str, Any]) -> list[str]:
        """Text the end-of-run summary prints after its table (e.g. LLM-SRBench's Table 1)."""
        return []


def _every_row(row: object) -> bool:
    return True


def mock_answers(mock_answer: Callable[[Mapping[str, Any], int], str]) -> MockAnswers:
    """The mock adapter's answers from a task's `mock_answer`, which is shown the request's
    context plus, under `prompt`, the text of its messages (what a real model would read)."""

    def answer(request: GenerationRequest) -> str:
        prompt = "\n\n".join(m.content for m in request.messages)
        return mock_answer({**request.context, "prompt": prompt}, request.seed)

    return answer


def with_verification_mode(task: Task[SelectableRow], config: RunConfig) -> RunConfig:
    """The run config with a verification mode `task` has: its default when none was given, a
    usage error (before any model call) for a mode it does not have."""
    given = "verification" in config.from_command_line or "verification" in config.from_suite
    if not given:
        return dataclasses.replace(
            config, values={**config.values, "verification": task.verification_modes[0]}
        )
    mode = config["verification"]
    if mode not in task.verification_modes:
        raise LsrbUsageError(
            f"--lsrb-verification: the {task.name} task has no mode '{mode}' "
            f"(its modes: {', '.join(task.verification_modes)})."
        )
    return config


def record_type_of(task: Task[Any] | None) -> type[Any]:
    """The record `task`'s attempts are: its `record_type`, else the shared `AttemptRecord`."""
    return AttemptRecord if task is None else task.record_type


def record_type_named(task_name: str) -> type[Any]:
    """`record_type_of` the task a run names; the shared record for a task this installation
    does not have."""
    try:
        return record_type_of(get_task(task_name))
    except (LsrbUsageError, ImportError):
        return record_type_of(None)


# `[suite] task` of a suite.toml: an entry point of `pytest_lsrb.tasks` (the built-in families'
# are pytest-lsrb's own, in pyproject.toml, so the engine names no family), or a
# "pkg.mod:Class" spec.
TASKS: Final = Registry(
    {},
    group=TASKS_GROUP,
    what="task",
    where="suite.toml [suite] task",
    own_entry_points=True,
)


# One instance per task name for the process (a task may keep state between its hooks).
_MADE: dict[str, Task[SelectableRow]] = {}
_MADE_LOCK = threading.Lock()


def get_task(name: str, where: str = TASKS.where) -> Task[SelectableRow]:
    """The task a suite's `suite.toml` names (`[suite] task`); `where`: that file's field, named
    in the one sentence that refuses a name that loads no `Task` subclass."""
    with _MADE_LOCK:
        if name not in _MADE:
            cls = TASKS.load(name, where)
            refuse_unfit(cls, Task, where=where, name=name)
            _MADE[name] = cls()
        return _MADE[name]
