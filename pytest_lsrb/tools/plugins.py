"""`lsrb list`: every task, adapter, verifier, discovery method, option set, metric and suite this
installation can run, and where each comes from (built in, or which installed package's entry
point)."""

from __future__ import annotations

from pytest_lsrb.core.registry import Registry


def registries() -> list[tuple[str, Registry]]:
    """The plug points' registries, with a heading for each."""
    from pytest_lsrb.adapters import ADAPTERS
    from pytest_lsrb.engine.metric import metric_registry
    from pytest_lsrb.engine.option_sets import OPTION_SETS
    from pytest_lsrb.engine.suite import suites
    from pytest_lsrb.engine.task import TASKS
    from pytest_lsrb.engine.verifier import VERIFIERS
    from pytest_lsrb.srbench.methods import METHODS

    return [
        ("tasks", TASKS),
        ("adapters", ADAPTERS),
        ("verifiers", VERIFIERS),
        ("methods", METHODS),
        ("options", OPTION_SETS),
        ("metrics", metric_registry()),
        ("suites", suites()),
    ]


def listing() -> str:
    """One block per plug point: a heading naming where a name is written and the entry-point
    group a package adds to, then `name  origin  module:Class` lines."""
    blocks = []
    for heading, registry in registries():
        entries = list(registry.entries())
        width = max(len(e.name) for e in entries)
        origin_width = max(len(e.origin) for e in entries)
        lines = [f"{heading} ({registry.where}; entry points: {registry.group})"]
        lines += [f"  {e.name:<{width}}  {e.origin:<{origin_width}}  {e.target}" for e in entries]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
