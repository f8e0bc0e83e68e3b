"""The run's options resolved: the every-suite options (`option_table`) and those of the run's
task, verifier and parts (`option_sets`), the command line and the suite's `[defaults]` merged
into a typed `RunConfig`, checked, with the run's identity and its hash.

Precedence: command line > the suite's `[defaults]` > the option's default.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pytest_lsrb.core.credentials import checked_key
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import strip_userinfo
from pytest_lsrb.core.textfiles import shown
from pytest_lsrb.engine.option_checks import check_values
from pytest_lsrb.engine.option_sets import (
    Found,
    Owners,
    active_sets,
    installed_sets,
    refuse_foreign,
    refuse_foreign_default,
)
from pytest_lsrb.engine.option_spec import TASK, Option
from pytest_lsrb.engine.option_table import OPTIONS, PER_SHARD_KEYS, dest
from pytest_lsrb.engine.suite import SuiteSpec

T = TypeVar("T")

RUNS_ROOT = "lsrb-out"  # under the current directory: lsrb-out/<suite>/<run>/


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run measures, plus where its files go."""

    values: Mapping[str, Any]
    suite: SuiteSpec
    output_dir: Path
    from_suite: frozenset[str] = frozenset()  # keys whose value came from suite.toml [defaults]
    from_command_line: frozenset[str] = frozenset()  # keys given as --lsrb-NAME
    # No --lsrb-output-dir: `output_dir` is the suite's folder of runs (lsrb-out/<suite>), in which
    # this run gets its own directory once its config hash is known (output/runs.py).
    runs_folder: bool = False
    # What a task adds to the identity beyond options (the tactic suite: the replay profiles'
    # contents, so a resume after editing a profile's timeout is refused as another config).
    extra_identity: Mapping[str, Any] = field(default_factory=dict)
    # The options this run holds: the every-suite ones and its owners' (`option_sets`).
    options: tuple[Option, ...] = tuple(OPTIONS)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def _typed(self, name: str, kind: type[T]) -> T:
        """The value of option `name`, which `resolve` has already converted to `kind`."""
        value = self.values[name]
        if not isinstance(value, kind):  # a bug in the option table, not a user's mistake
            raise TypeError(f"run option {name!r} holds {type(value).__name__}, not {kind.__name__}")
        return value

    def _optional(self, name: str, kind: type[T]) -> T | None:
        return None if self.values[name] is None else self._typed(name, kind)

    def _number(self, name: str) -> float:
        value = self.values[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"run option {name!r} holds {type(value).__name__}, not a number")
        return value

    # The spine's options, typed.
    @property
    def samples(self) -> int:
        return self._typed("samples", int)

    @property
    def seed(self) -> int:
        return self._typed("seed", int)

    @property
    def shard_count(self) -> int:
        return self._typed("shard_count", int)

    @property
    def shard_index(self) -> int:
        return self._typed("shard_index", int)

    @property
    def max_tokens(self) -> int:
        return self._typed("max_tokens", int)

    @property
    def max_items(self) -> int | None:
        return self._optional("max_items", int)

    @property
    def outcome(self) -> str:
        return self._typed("outcome", str)

    @property
    def verification(self) -> str:
        return self._typed("verification", str)

    @property
    def index(self) -> Path:
        return Path(self._typed("index", str))

    @property
    def split_policy(self) -> str:
        return self._typed("split_policy", str)

    @property
    def goal_slice(self) -> str:
        return self._typed("goal_slice", str)

    @property
    def resume(self) -> bool:
        return self._typed("resume", bool)

    @property
    def resume_or_start(self) -> bool:
        return self._typed("resume_or_start", bool)

    @property
    def retry_errors(self) -> bool:
        return self._typed("retry_errors", bool)

    @property
    def timeout(self) -> float:
        return self._number("timeout")

    @property
    def temperature(self) -> float | None:
        """None: a task asked for the provider's default (no temperature sent)."""
        return None if self.values["temperature"] is None else self._number("temperature")

    @property
    def max_retries(self) -> int:
        return self._typed("max_retries", int)

    @property
    def retry_time(self) -> float:
        return self._number("retry_time")

    @property
    def concurrency(self) -> int | None:
        """Attempts in flight per process; None: the adapter's default."""
        return self._optional("concurrency", int)

    @property
    def cache_dir(self) -> str | None:
        return self._optional("cache_dir", str)

    @property
    def price(self) -> str | None:
        return self._optional("price", str)

    @property
    def progress(self) -> float | None:
        return None if self.values["progress"] is None else self._number("progress")

    def blame(self, exc: LsrbUsageError) -> LsrbUsageError:
        """A problem with `--lsrb-NAME` whose value came from suite.toml, said of suite.toml."""
        return blame_suite_default(exc, self.suite, self.from_suite)

    def identity(self) -> dict[str, Any]:
        """The config as recorded in run.json and summary.json (never a secret)."""
        ident = {o.key: self.values.get(o.key, o.default) for o in self.options if o.identity}
        ident["suite"] = self.suite.name
        ident["task"] = self.suite.task
        verifier_settings = self.suite.settings.get("verifier")
        if verifier_settings:  # suite.toml's [verifier] table: what the verifier is handed
            ident["verifier_settings"] = verifier_settings
        ident["index"] = display_path(Path(self.values["index"]), self.suite.root)
        ident["index_sha256"] = file_sha256(Path(self.values["index"]))
        ident.update(self.extra_identity)
        if ident.get("base_url"):  # `https://user:key@host` must not reach run.json
            ident["base_url"] = strip_userinfo(str(ident["base_url"]))
        return ident

    def config_hash(self) -> str:
        """Hash of the identity minus per-shard keys: equal for every shard of one run."""
        return identity_hash(self.identity())


def identity_hash(identity: Mapping[str, Any]) -> str:
    """config_hash of a recorded identity (run.json's `config`); `lsrb merge` recomputes it."""
    ident = {k: v for k, v in identity.items() if k not in PER_SHARD_KEYS and k != "index"}
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def display_path(path: Path, suite_root: Path) -> str:
    """A suite's own files by their suite-relative name (machine-independent), others in full."""
    try:
        return path.resolve().relative_to(suite_root).as_posix()
    except ValueError:
        return str(path)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file; of a folder (a data release), of every file under it, names included."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\x00")
        with file.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def blame_suite_default(exc: LsrbUsageError, suite: SuiteSpec, from_suite: frozenset[str]) -> LsrbUsageError:
    message = str(exc)
    for name in from_suite:
        flag = f"--lsrb-{name.replace('_', '-')}"
        if message.startswith((flag + ":", flag + " ")):
            where = f"{suite.root / 'suite.toml'}: field 'defaults.{name}'"
            return LsrbUsageError(where + message[len(flag) :])
    return exc


def suite_default(opt: Option, value: Any, suite: SuiteSpec) -> Any:
    """A `[defaults]` value from suite.toml, checked like the command line checks its option."""
    where = f"{suite.root / 'suite.toml'}: field 'defaults.{opt.key}'"
    if opt.flag:
        if not isinstance(value, bool):
            raise LsrbUsageError(f"{where}: expected true or false (got {shown(value)}).")
        return value
    if isinstance(value, (dict, list)) or (isinstance(value, bool) and opt.type is not str):
        raise LsrbUsageError(f"{where}: expected {opt.accepts()} (got {shown(value)}).")
    return opt.parse(str(value), where)


class OptionOwner(Protocol):
    """What `resolve` asks of the suite's task (`engine.task.Task`): its name, its verification
    modes (the first is its default) and the parts it names whose options then apply."""

    @property
    def name(self) -> str: ...

    @property
    def verification_modes(self) -> tuple[str, ...]: ...

    def option_owners(self, values: Mapping[str, Any]) -> Mapping[str, str]: ...


def resolve(
    getoption: Callable[[str], Any], suite: SuiteSpec, rootdir: Path, task: OptionOwner | None = None
) -> RunConfig:
    """Merge command line, suite defaults and option defaults for the options this run holds
    (the every-suite ones and those of `task`, its verifier and parts); validate types and
    ranges; refuse an option the run does not hold. `task` None: the suite's task is not
    consulted, so its code is not imported: the every-suite options and those of the task its
    suite.toml names are checked, and only another task's options refused (a usage error in
    less than a second, before a family's numpy and scipy load)."""
    found = installed_sets()
    known = {o.key for o in found.options()}
    from_suite = frozenset(k for k in suite.defaults if k in known and _given(getoption, k) is None)
    try:
        return _resolve(getoption, suite, from_suite, found, task)
    except LsrbUsageError as exc:
        raise blame_suite_default(exc, suite, from_suite) from None


def _given(getoption: Callable[[str], Any], name: str) -> Any:
    """The command line's value of `--lsrb-<name>` (None: not given, or not registered in this
    session: a package installed after pytest read its options)."""
    try:
        return getoption(dest(name))
    except (ValueError, AttributeError):
        return None


def _value(opt: Option, getoption: Callable[[str], Any], suite: SuiteSpec, given: set[str]) -> Any:
    raw = _given(getoption, opt.key)
    if raw is None:
        if opt.key in suite.defaults:
            return suite_default(opt, suite.defaults[opt.key], suite)
        return opt.default
    given.add(opt.key)
    return raw if opt.flag else opt.parse(raw)


def _resolve(
    getoption: Callable[[str], Any],
    suite: SuiteSpec,
    from_suite: frozenset[str],
    found: Found,
    task: OptionOwner | None,
) -> RunConfig:
    where = str(suite.root / "suite.toml")
    values: dict[str, Any] = {}
    given: set[str] = set()  # keys given as --lsrb-NAME
    for opt in OPTIONS:
        values[opt.key] = _value(opt, getoption, suite, given)
    named_mode = "verification" in given or "verification" in suite.defaults
    modes = task.verification_modes if task is not None else ("none",)
    owners = Owners(suite.task, values["verification"] if named_mode else modes[0])
    refuse_foreign_default(suite.defaults, found, owners, where)
    held = active_sets(found, owners)  # the task's and the verifier's
    for opt in (o for s in held for o in s.options):
        values[opt.key] = _value(opt, getoption, suite, given)
    if task is not None:  # the parts the task names from its own options (a discovery method)
        owners = Owners(owners.task, owners.verifier, dict(task.option_owners(values)))
        held = active_sets(found, owners)
        for opt in (o for s in held for o in s.options):
            if opt.key not in values:
                values[opt.key] = _value(opt, getoption, suite, given)
    cli = [o.key for o in found.options() if o.key not in values and _given(getoption, o.key) is not None]
    if task is None:  # which verifier and parts hold the rest is the task's to say: only another
        cli = [k for k in cli if (s := found.owner_of(k)) is not None and s.kind == TASK]  # task's now
    refuse_foreign(cli, found, held, owners, suite.name)
    held_options = (*OPTIONS, *(o for s in held for o in s.options))
    if "auto" in (values["shard_index"], values["shard_count"]):
        from pytest_lsrb.engine.shards import resolve_shard

        given_count = "shard_count" in given or "shard_count" in suite.defaults
        values["shard_index"], values["shard_count"] = resolve_shard(
            str(values["shard_index"]), str(values["shard_count"]), given_count, os.environ
        )
    if values["index"] is None:
        values["index"] = str(suite.index)
    else:
        index = Path(values["index"]).expanduser()
        if not index.is_absolute():
            index = Path.cwd() / index
        if not index.exists():  # a file, or a folder (a release, CSV problem or parquet folder)
            raise LsrbUsageError(f"--lsrb-index: {index} does not exist.")
        values["index"] = str(index.resolve())
    if values["retry_errors"] and not (values["resume"] or values["resume_or_start"]):
        raise LsrbUsageError("--lsrb-retry-errors only makes sense with --lsrb-resume.")
    if values["overwrite"] and (values["resume"] or values["resume_or_start"]):
        flag = "--lsrb-resume" if values["resume"] else "--lsrb-resume-or-start"
        raise LsrbUsageError(f"{flag} and --lsrb-overwrite contradict each other; pick one.")
    check_values(values, held_options)  # finite, in bounds, text, a URL that parses
    from pytest_lsrb.engine.cost import parse_price

    parse_price(values["price"])  # a bad price stops the run before any model is called
    from pytest_lsrb.engine.budget import limits_of

    limits_of(values)  # so does a budget that cannot be counted (a cost without a price)
    checked_key(values["api_key_env"], "--lsrb-api-key-env")  # set, sendable, and redacted from now on
    out = values["output_dir"]
    output_dir = Path(out).expanduser() if out else Path.cwd() / RUNS_ROOT / suite.name
    if not output_dir.is_absolute():
        output_dir = Path.cwd() / output_dir
    return RunConfig(
        values=values,
        suite=suite,
        output_dir=output_dir,
        from_suite=from_suite & set(values),
        from_command_line=frozenset(given),
        runs_folder=not out,
        options=held_options,
    )
