"""The families' option sets: found through the entry-point group `pytest_lsrb.options`, checked
against each other and the every-suite options, and the ones a given run holds.

pytest registers options in `pytest_addoption`, before any suite is known: every installed set is
registered (each in its own `--help` group), and the run then keeps the options of its owners
only: its task's, its verifier's and the parts its task names (`Task.option_owners`). An option
given to a run that has no such owner is refused in one sentence naming whose it is.

A set that cannot be loaded, is no `OptionSet`, or declares a name another set (or the engine)
already has is left out of `--help` and of every run; the sentence saying why is raised when a
run's owner is the one its entry point is named after, and `lsrb list` shows it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import OPTIONS_GROUP, Entry, Registry
from pytest_lsrb.core.suggest import closest, did_you_mean
from pytest_lsrb.engine.option_spec import TASK, VERIFIER, Option, OptionSet
from pytest_lsrb.engine.option_table import OPTIONS

# `lsrb list` shows the option sets beside the other plug points.
OPTION_SETS: Final = Registry(
    {},
    group=OPTIONS_GROUP,
    what="option set",
    where="--lsrb-* options of a task, verifier or method",
    own_entry_points=True,
)


@dataclass(frozen=True)
class Found:
    """The installed option sets, and a sentence for each entry point left out (by its name)."""

    sets: tuple[OptionSet, ...]
    refused: Mapping[str, str] = field(default_factory=dict)

    def options(self) -> list[Option]:
        """Every option: the engine's, then each set's."""
        return [*OPTIONS, *(o for s in self.sets for o in s.options)]

    def owner_of(self, key: str) -> OptionSet | None:
        return next((s for s in self.sets if any(o.key == key for o in s.options)), None)


def installed_sets() -> Found:
    """Load every entry point of `pytest_lsrb.options` (pytest-lsrb's own first); refuse a set
    whose option names collide with one already taken."""
    taken: dict[str, str] = {o.name: "pytest-lsrb's every-suite options" for o in OPTIONS}
    sets: list[OptionSet] = []
    refused: dict[str, str] = {}
    for entry in OPTION_SETS.entries():
        if "shadowed" in entry.origin:
            continue
        try:
            loaded = OPTION_SETS.load(entry.name)
        except LsrbUsageError as exc:
            refused[entry.name] = str(exc)
            continue
        problem = _problem(entry, loaded, taken)
        if problem is not None:
            refused[entry.name] = problem
            continue
        assert isinstance(loaded, OptionSet)
        sets.append(loaded)
        taken.update({o.name: f"the options of {loaded.describe_owner()}" for o in loaded.options})
    order = {TASK: 0, VERIFIER: 1}  # a task's, then verifiers', then the parts' (methods)
    return Found(tuple(sorted(sets, key=lambda s: (order.get(s.kind, 2), s.kind))), refused)


def _problem(entry: Entry, loaded: object, taken: Mapping[str, str]) -> str | None:
    where = f"the option set '{entry.name}' ({entry.origin}, '{entry.target}')"
    if not isinstance(loaded, OptionSet):
        return f"{where} is not a pytest_lsrb.engine.option_spec.OptionSet."
    names = [o.name for o in loaded.options]
    for name in names:
        if name in taken:
            return f"{where} declares --lsrb-{name}, which {taken[name]} already declare."
        if names.count(name) > 1:
            return f"{where} declares --lsrb-{name} twice."
    return None


def every_option() -> list[Option]:
    """Every installed option: the every-suite ones, then each family's (what `pytest --help`
    lists and `api.run` accepts)."""
    return installed_sets().options()


def registered_sets() -> list[OptionSet]:
    """The sets `pytest_addoption` registers: every installed one that could be loaded. Never
    raises: this runs in every pytest session of the venv (`pytest --help` in another project)."""
    try:
        return list(installed_sets().sets)
    except LsrbUsageError:  # pytest-lsrb's own metadata is stale: the run says so, not --help
        return []


@dataclass(frozen=True)
class Owners:
    """Who owns options in one run: its task, its verification mode and the parts its task names
    (`{"method": "llmsr"}`)."""

    task: str
    verifier: str | None = None
    parts: Mapping[str, str] = field(default_factory=dict)

    def has(self, option_set: OptionSet) -> bool:
        if option_set.kind == TASK:
            return self.task in option_set.owners
        if option_set.kind == VERIFIER:
            return self.verifier in option_set.owners
        return self.parts.get(option_set.kind) in option_set.owners

    def names(self) -> list[str]:
        return [self.task, *([self.verifier] if self.verifier else []), *self.parts.values()]

    def describe(self) -> str:
        said = [f"task {self.task}"]
        if self.verifier:
            said.append(f"verification {self.verifier}")
        said += [f"{kind} {name}" for kind, name in self.parts.items()]
        return ", ".join(said)


def active_sets(found: Found, owners: Owners) -> list[OptionSet]:
    """The sets this run holds; a refused set named after one of its owners is its one sentence."""
    for name in owners.names():
        if name in found.refused:
            raise LsrbUsageError(found.refused[name])
    return [s for s in found.sets if owners.has(s)]


def refuse_foreign(given: Iterable[str], found: Found, held: list[OptionSet], owners: Owners,
                   suite: str) -> None:  # fmt: skip
    """One sentence for the first option given on the command line (or to `api.run`) that this
    run does not hold: whose option it is, and what this run is."""
    mine = {o.key for s in held for o in s.options} | {o.key for o in OPTIONS}
    for name in given:
        if name in mine:
            continue
        owner = found.owner_of(name)
        whose = f"it is an option of {owner.describe_owner()}" if owner is not None else "no one declares it"
        raise LsrbUsageError(
            f"--lsrb-{name.replace('_', '-')}: the {suite} suite has no such option ({whose}; "
            f"this run: {owners.describe()})."
        )


def refuse_foreign_default(keys: Iterable[str], found: Found, owners: Owners, where: str) -> None:
    """A suite's `[defaults]` may preset the options of its own task and of any verifier or part
    (a mode or method a run may pick); another task's option, or a key no one declares, is
    refused in one sentence naming the field."""
    known = {o.key for o in found.options()}
    for name in keys:
        if name not in known:
            raise LsrbUsageError(f"{where}: unknown key '{name}' in [defaults]{did_you_mean(name, known)}.")
        owner = found.owner_of(name)
        if owner is not None and owner.kind == TASK and owners.task not in owner.owners:
            raise LsrbUsageError(
                f"{where}: field 'defaults.{name}' is an option of {owner.describe_owner()}, "
                f"not of this suite's task {owners.task}."
            )


def _spelt(flag: str) -> str:
    """A flag as the options spell theirs: lower case, `-` for `_` (`--LSRB_Max_Items`)."""
    return flag.lower().replace("_", "-")


def unknown_flag(args: Iterable[str], known: Iterable[str]) -> str | None:
    """One sentence for the first `--lsrb-*` word of a command line that is no option (`known`:
    every registered flag), with the closest one; None when there is none. pytest alone says
    only "unrecognized arguments". `--lsrb_max_items` (a suite.toml key's spelling) and capitals
    count as `--lsrb-*` words too."""
    flags = set(known)
    for arg in args:
        flag = arg.split("=", 1)[0]
        if not _spelt(flag).startswith("--lsrb-") or flag in flags:
            continue
        # (compared without the prefix every one of them shares)
        close = closest(_spelt(flag).removeprefix("--lsrb-"), [f.removeprefix("--lsrb-") for f in flags])
        hint = f" (did you mean --lsrb-{close}?)" if close else ""
        return f"{flag}: no such option{hint}; `--help` lists them."
    return None
