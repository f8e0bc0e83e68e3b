"""Plug-point registries: an option value names an implementation, built in or from outside.

Adapters, verifiers, tasks, discovery methods, metrics and suites each keep one `Registry`. A name
resolves, in this order, to:

- a built-in entry, `name -> "module:Class"` of the registry's own layer, or an entry point of
  pytest-lsrb's own distribution (the families' tasks and verifiers register themselves there,
  in pyproject.toml, as a lab's package does: the engine names no family);
- an installed package's entry point in the registry's group (`pytest_lsrb.adapters`, ...), so a
  lab's own package adds one with no edit here (lm-evaluation-harness's `api/registry.py`,
  inspect_ai's entry points);
- a `"pkg.mod:Class"` spec written where the name goes (`--lsrb-adapter my_lab.chat:Client`,
  `task = "my_lab.bench:Task"` in a suite.toml).

Implementations are imported only when chosen, so a run never pays for another plug-in's
imports; a spec or entry point that cannot be loaded (it raises, or calls `sys.exit()`, on import)
is one sentence naming it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError

# The entry-point groups, one per plug point (a package declares them in its pyproject.toml).
TASKS_GROUP: Final = "pytest_lsrb.tasks"
ADAPTERS_GROUP: Final = "pytest_lsrb.adapters"
VERIFIERS_GROUP: Final = "pytest_lsrb.verifiers"
METHODS_GROUP: Final = "pytest_lsrb.methods"
# A family's run options: the entry point names an `engine.option_spec.OptionSet`.
OPTIONS_GROUP: Final = "pytest_lsrb.options"
# A metric a package declares (a `Metric` object), read by every consumer of metrics: summary.json,
# the gate, `lsrb compare`, the terminal, the report and `lsrb list`.
METRICS_GROUP: Final = "pytest_lsrb.metrics"
# A suite folder a package ships, found by name (`lsrb run NAME`, `api.run("NAME")`): the entry
# point names an object holding the folder's path (a `Path` or `str`).
SUITES_GROUP: Final = "pytest_lsrb.suites"

BUILT_IN: Final = "built-in"
# Entry points of this distribution are built-ins (pyproject.toml's `[project.entry-points.*]`).
OWN_DISTRIBUTION: Final = "pytest-lsrb"
# `module.path:Attr` (dotted names on both sides of one colon): what a spec looks like.
_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class Entry:
    """One name a registry resolves: what it loads and where it comes from (`built-in`, or
    `entry point (DIST VERSION)`)."""

    name: str
    target: str
    origin: str


def failure(exc: BaseException) -> str:
    """What went wrong importing another package's code, for the sentence that names it: its
    exception, or that it exited (`sys.exit()` on import is a plug-in's error like any other,
    never the end of the run's process or an INTERNALERROR; only Ctrl-C goes on as itself)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) while being imported"
    return f"{type(exc).__name__}: {exc}"


def is_spec(value: str) -> bool:
    """`value` is a `"module:attr"` spec rather than a registered name."""
    return _SPEC.fullmatch(value) is not None


def load_spec(spec: str, *, where: str) -> Any:
    """The object `"pkg.mod:Attr"` names, or a usage error naming `where` and the spec."""
    if not is_spec(spec):
        raise LsrbUsageError(f"{where}: '{spec}' is not a \"package.module:Name\" spec.")
    module_name, attr = spec.split(":")
    try:
        found: Any = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a user's module: its own error in one sentence, no traceback
        raise LsrbUsageError(
            f"{where}: cannot import '{module_name}' for '{spec}' ({failure(exc)})."
        ) from None
    for part in attr.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise LsrbUsageError(
                f"{where}: module '{module_name}' has no '{attr}' (from '{spec}')."
            ) from None
    return found


def refuse_unfit(cls: object, base: type, *, where: str, name: str) -> None:
    """One rule for every plug point's class: what a name loads must be a subclass of the plug
    point's public base (`pytest_lsrb.Task`, `Adapter`, `Verifier`, `DiscoveryMethod`) that
    writes every member its bases leave abstract; else one sentence naming what is wrong, before
    any model call (never a `TypeError` from making it)."""
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise LsrbUsageError(f"{where}: '{name}' is not a subclass of pytest_lsrb.{base.__name__}.")
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        # The base that asks for them (an `HttpAdapter` asks more than an `Adapter`).
        owner = next(
            (
                c
                for c in cls.__mro__[1:]
                if c.__module__.startswith("pytest_lsrb.")
                and set(missing) & set(getattr(c, "__abstractmethods__", ()))
            ),
            base,
        )
        raise LsrbUsageError(
            f"{where}: '{name}' does not write {', '.join(missing)}, which every subclass of "
            f"pytest_lsrb.{owner.__name__} must."
        )


class Registry:
    """The implementations one option can name: built-ins, entry points of `group`, and specs.

    `what` names the kind in messages (`adapter`), `where` the option or field the name came
    from (`--lsrb-adapter`)."""

    def __init__(
        self,
        builtins: Mapping[str, str],
        *,
        group: str,
        what: str,
        where: str,
        own_entry_points: bool = False,
    ) -> None:
        self.builtins = dict(builtins)
        self.group = group
        self.what = what
        self.where = where
        # pytest-lsrb itself registers entries in `group` (pyproject.toml): none found means an
        # install older than the source, said in one sentence rather than as an unknown name.
        self.own_entry_points = own_entry_points

    def entry_points(self) -> list[importlib.metadata.EntryPoint]:
        """This group's installed entry points (read anew: a package installed mid-session, or a
        folder put on sys.path, is seen)."""
        return list(importlib.metadata.entry_points(group=self.group))

    def _split(self) -> tuple[dict[str, importlib.metadata.EntryPoint], list[importlib.metadata.EntryPoint]]:
        """(pytest-lsrb's own entry points by name, everybody else's sorted by name)."""
        own: dict[str, importlib.metadata.EntryPoint] = {}
        others = []
        for ep in sorted(self.entry_points(), key=lambda e: e.name):
            if _is_own(ep) and ep.name not in self.builtins:
                own.setdefault(ep.name, ep)
            else:
                others.append(ep)
        if self.own_entry_points and not own:
            raise LsrbUsageError(
                f"pytest-lsrb's own entry points of {self.group} are missing: the installed metadata "
                "is older than the source; install it again (`pip install -e .` in a clone)."
            )
        return own, others

    def entries(self) -> Iterator[Entry]:
        """Every name this registry knows, built-ins first; an entry point whose name a built-in
        already has is listed as shadowed (the built-in wins)."""
        own, others = self._split()
        for name, target in self.builtins.items():
            yield Entry(name, target, BUILT_IN)
        for ep in own.values():
            yield Entry(ep.name, ep.value, BUILT_IN)
        for ep in others:
            origin = f"entry point ({_dist_of(ep)})"
            if ep.name in self.builtins or ep.name in own:
                origin += ", shadowed by the built-in"
            yield Entry(ep.name, ep.value, origin)

    def builtin_names(self) -> list[str]:
        """The names pytest-lsrb itself provides, in their order."""
        return [e.name for e in self.entries() if e.origin == BUILT_IN]

    def names(self) -> list[str]:
        return sorted({e.name for e in self.entries()})

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def unknown(self, name: str, where: str | None = None) -> LsrbUsageError:
        known = ", ".join(self.names())
        return LsrbUsageError(
            f"{where or self.where}: unknown {self.what} '{name}' "
            f'(known: {known}; or a "package.module:Class" spec).'
        )

    def load_entry_points(self) -> Iterator[tuple[Entry, Any]]:
        """Every installed entry point of this group that no built-in shadows, loaded now, with
        its entry; one sentence naming the first that cannot be loaded (for a plug point whose
        every entry is used at once, as metrics are)."""
        own, others = self._split()
        # Not an option the user gave: every run reads them all (say so, and what to do).
        every = f"the installed {self.what} plug-ins, which every run reads"
        for ep in own.values():
            yield Entry(ep.name, ep.value, BUILT_IN), self._load_entry_point(ep, every)
        for ep in others:
            if ep.name not in self.builtins and ep.name not in own:
                entry = Entry(ep.name, ep.value, f"entry point ({_dist_of(ep)})")
                yield entry, self._load_entry_point(ep, every, fix=True)

    def _load_entry_point(
        self, ep: importlib.metadata.EntryPoint, where: str | None = None, *, fix: bool = False
    ) -> Any:
        try:
            return ep.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # another package's code: one sentence, no traceback
            todo = f": fix or uninstall {ep.dist.metadata['Name'] if ep.dist else 'it'}" if fix else ""
            raise LsrbUsageError(
                f"{where or self.where}: the {self.what} '{ep.name}' of {_dist_of(ep)} (entry point "
                f"'{ep.value}') cannot be loaded ({failure(exc)}){todo}."
            ) from None

    def load(self, name: str, where: str | None = None) -> Any:
        """The class `name` resolves to, imported now; `where` names the place the name was
        written when it is more precise than the registry's option (a suite.toml's path)."""
        where = where or self.where
        if name in self.builtins:
            return load_spec(self.builtins[name], where=where)
        if is_spec(name):
            return load_spec(name, where=where)
        own, others = self._split()
        for ep in [*own.values(), *others]:
            if ep.name == name:
                return self._load_entry_point(ep, where)
        raise self.unknown(name, where)


def _is_own(ep: importlib.metadata.EntryPoint) -> bool:
    dist = ep.dist
    return dist is not None and _normal(dist.metadata["Name"] or "") == OWN_DISTRIBUTION


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them (`pytest_lsrb` is `pytest-lsrb`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist_of(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist  # (None for an entry point made by hand)
    if dist is None:
        return "an unknown distribution"
    return f"{dist.metadata['Name']} {dist.version}"
