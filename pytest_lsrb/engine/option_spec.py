"""How a run option is declared: its name, type, default, help, choices and bounds (`Option`), and
the set of options one task, verifier or other part declares (`OptionSet`).

The engine declares the options every suite reads (`engine.option_table`); a family declares its
own in an `OptionSet` that an entry point of `pytest_lsrb.options` names (pytest-lsrb's own
families in its pyproject.toml, a lab's in its package's): `pytest --help` lists them in a group
of their own, a run validates, records and hashes them only when their owner is in it, and one
given to a run without their owner is refused in one sentence (`engine.option_sets`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError

DAY_S: Final = 86_400.0


@dataclass(frozen=True)
class Bounds:
    """The range a numeric option's value must lie in (a finite number always)."""

    low: float
    high: float
    low_open: bool = False  # the low end itself is refused (a timeout of 0 s)
    whole: bool = True  # a whole number
    unit: str = ""

    def describe(self) -> str:
        kind = "a whole number" if self.whole else "a finite number"
        unit = f" of {self.unit}" if self.unit else ""
        low = f"> {_number(self.low)}" if self.low_open else f">= {_number(self.low)}"
        return f"{kind}{unit} {low} and <= {_number(self.high)}"

    def holds(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# -- value types: str -> value, each with the words that say what it accepts ------------------------

_NONE_WORDS: Final = ("", "none", "None")


def integer(text: str) -> int:
    return int(text)


def optional_integer(text: str) -> int | None:
    return None if text in _NONE_WORDS else int(text)


def number(text: str) -> float:
    return float(text)


def optional_number(text: str) -> float | None:
    return None if text in _NONE_WORDS else float(text)


def integer_or_auto(text: str) -> int | str:
    return "auto" if str(text).strip() == "auto" else int(text)


def text(value: str) -> str:
    return value


# What each value type accepts, as a message and the options page say it.
TYPE_WORDS: Final[dict[Callable[[str], Any], str]] = {
    int: "a whole number",
    integer: "a whole number",
    optional_integer: "a whole number (or none)",
    float: "a number",
    number: "a number",
    optional_number: "a number (or none)",
    integer_or_auto: "a whole number or auto",
    str: "text",
    text: "text",
}


@dataclass(frozen=True)
class Option:
    """One `--lsrb-<name>` option; its suite.toml `[defaults]` key and its run-config key are
    `name` with `_` for `-`, its `api.run` keyword the same."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    # Part of the run's identity (config_hash): changing it changes what the run measures.
    identity: bool = True
    choices: tuple[str, ...] | None = None
    flag: bool = False
    bounds: Bounds | None = None  # a numeric option's range (None values, an unset option, pass)
    # The `pytest --help` group of an every-suite option (a family's options have their set's).
    group: str = "run"

    @property
    def key(self) -> str:
        return self.name.replace("-", "_")

    @property
    def flag_name(self) -> str:
        return f"--lsrb-{self.name}"

    def accepts(self) -> str:
        """What a valid value is, in words: `one of a, b`, `a flag`, `a whole number >= 1 ...`."""
        if self.flag:
            return "a flag (no value; true or false in suite.toml)"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.bounds is not None:
            return self.bounds.describe()
        return TYPE_WORDS.get(self.type, "a value of its type")

    def parse(self, raw: str, where: str | None = None) -> Any:
        """`raw` as this option's value, or one sentence naming `where` (the flag) and what is
        valid."""
        where = where or self.flag_name
        try:
            value = self.type(raw)
        except (ValueError, TypeError):
            raise LsrbUsageError(f"{where}: expected {self.accepts()} (got {raw!r}).") from None
        if self.choices is not None and value not in self.choices:
            raise LsrbUsageError(f"{where}: expected {self.accepts()} (got {raw!r}).")
        return value

    def shown_default(self) -> str | None:
        """The default as `--help` shows it; None where there is nothing to show (unset, off)."""
        if self.flag or self.default is None or self.default == "" or self.default is False:
            return None
        return str(self.default)


# The kinds of owner an option set may have. A task's options apply to the suites whose task it
# is, a verifier's to runs checking with that mode; any other kind is a part a task plugs in and
# names (`Task.option_owners`: llm_srbench's discovery method).
TASK: Final = "task"
VERIFIER: Final = "verifier"


@dataclass(frozen=True)
class OptionSet:
    """The options one task, verifier or part declares.

    `kind`: `task`, `verifier`, or a part its task names (`method`); `owners`: the names of those
    it belongs to (a task's `name`, verification modes, methods); `title`: its `pytest --help`
    group. Register it under the entry-point group `pytest_lsrb.options`, named after its
    (first) owner."""

    kind: str
    owners: tuple[str, ...]
    title: str
    options: tuple[Option, ...]

    def __post_init__(self) -> None:
        if isinstance(self.owners, str):  # ("llm_srbench") without the comma
            object.__setattr__(self, "owners", (self.owners,))

    def owned_by(self, kind: str, name: str) -> bool:
        return kind == self.kind and name in self.owners

    def describe_owner(self) -> str:
        """`the llm_srbench task`, `the verifiers synthetic, repo_replay`, `the method lasr`."""
        plural = "s" if len(self.owners) > 1 else ""
        names = ", ".join(self.owners)
        if self.kind == TASK:
            return f"the task{plural} {names}"
        return f"the {self.kind}{plural} {names}"

    def defaults(self) -> dict[str, Any]:
        """Run-config key -> default, for a family reading its options with defaults filled."""
        return {o.key: o.default for o in self.options}

    def choices_of(self, name: str) -> tuple[str, ...]:
        """The choices of `--lsrb-<name>` (dashes or underscores): the one spelling of the list."""
        found = next(o for o in self.options if o.key == name.replace("-", "_"))
        assert found.choices is not None, f"{found.flag_name} has no choices"
        return found.choices
