"""Repository-level test setup: how this project's own tests run hypothesis. Not shipped; a user
of the plugin needs none of it.

Also: `pytest --collect-only` exits 0 (syrupy would call every snapshot unused).

Profiles (choose one with the environment variable HYPOTHESIS_PROFILE, default `ci`):
- `ci`: derandomized (every run on every machine draws the same examples, so a test that passed
  in CI passes on a fresh machine and a red CI reproduces locally), no per-example deadline (the
  machines are shared and noisy: a property is about values, never speed), the failing example
  printed as a reproducible blob.
- `explore`: random examples, ten times as many where a test does not fix its own count, and the
  example database on, so a failure found once is replayed on the next run. Run it now and then
  (README: "Testing") and pin what it finds with `@example`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROFILE_ENV = "HYPOTHESIS_PROFILE"
SUITES = Path(__file__).resolve().parent / "suites"


def pytest_configure(config: pytest.Config) -> None:
    if config.option.collectonly and hasattr(config.option, "warn_unused_snapshots"):
        # Listing tests runs none, so syrupy finds every snapshot "unused" and would exit 1.
        config.option.warn_unused_snapshots = True
    # Suite runs started by the tests block hypothesis' plugin to start faster: no import then.
    # A run of the suites alone (what a user of a clone does) needs no profile either: that saves
    # the import (~0.3 s) in each xdist worker; the main process still imports hypothesis when its
    # pytest plugin writes the terminal summary.
    if not config.pluginmanager.is_blocked("hypothesispytest") and not only_suites(config):
        load_hypothesis_profile()


def only_suites(config: pytest.Config) -> bool:
    """The command line names only paths inside suites/ (the benchmark suites, no project test)."""
    base = Path(config.invocation_params.dir)
    paths = [arg.split("::")[0] for arg in config.args]
    return bool(paths) and all((base / p).resolve().is_relative_to(SUITES) for p in paths)


def load_hypothesis_profile() -> None:
    try:
        from hypothesis import HealthCheck, settings
        from hypothesis.errors import InvalidArgument
    except ModuleNotFoundError:
        # Only `pip install -e .` (README command 1, no test extras): `pytest --help` and the
        # suites must still work; the project's tests then fail to import, which says why.
        return

    settings.register_profile(
        "ci",
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=100,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "explore",
        derandomize=False,
        deadline=None,
        max_examples=1000,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    name = os.environ.get(PROFILE_ENV) or "ci"
    try:
        settings.load_profile(name)
    except InvalidArgument:
        raise pytest.UsageError(
            f"{PROFILE_ENV}={name!r}: no such hypothesis profile (ci or explore)."
        ) from None
