"""A plug-in that exits or raises on import (issue #46, item 7) is one sentence naming it: an
adapter whose module calls `sys.exit(3)` ended the run in a 55-line INTERNALERROR traceback
(exit 3), since only `Exception` was caught and `SystemExit` is not one. Ctrl-C while a plug-in
is imported still stops the run as Ctrl-C."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsrb_testing import install_distribution

from pytest_lsrb.adapters import ADAPTERS
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import load_spec

ENTRY_POINTS = """
[pytest_lsrb.adapters]
exits = exits_mod:Adapter
exits_quietly = exits_quietly_mod:Adapter
raises = raises_mod:Adapter
interrupted = interrupted_mod:Adapter
"""
MODULES = {
    "exits_mod": "import sys\nsys.exit(3)\n",
    "exits_quietly_mod": "raise SystemExit\n",
    "raises_mod": "raise ImportError('this adapter needs torch')\n",
    "interrupted_mod": "raise KeyboardInterrupt\n",
}


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_distribution(tmp_path / "site", "badplug", ENTRY_POINTS, MODULES, monkeypatch)


def sentence(exc: pytest.ExceptionInfo[LsrbUsageError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("exits", "it called sys.exit(3) while being imported"),
        ("exits_quietly", "it called sys.exit(None) while being imported"),
        ("raises", "ImportError: this adapter needs torch"),
    ],
)
def test_an_entry_point_that_exits_or_raises_is_one_sentence(installed: Path, name: str, why: str) -> None:
    with pytest.raises(LsrbUsageError) as err:
        ADAPTERS.load(name)
    assert sentence(err) == (
        f"--lsrb-adapter: the adapter '{name}' of badplug 1.0 (entry point '{name}_mod:Adapter') "
        f"cannot be loaded ({why})."
    )


def test_a_spec_whose_module_exits_is_one_sentence(installed: Path) -> None:
    with pytest.raises(LsrbUsageError) as err:
        load_spec("exits_mod:Adapter", where="--lsrb-adapter")
    assert sentence(err) == (
        "--lsrb-adapter: cannot import 'exits_mod' for 'exits_mod:Adapter' "
        "(it called sys.exit(3) while being imported)."
    )


def test_ctrl_c_while_a_plug_in_is_imported_stays_ctrl_c(installed: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        ADAPTERS.load("interrupted")


def test_a_run_with_an_exiting_adapter_stops_in_one_sentence(installed: Path, run_suite: Any) -> None:
    result = run_suite("--lsrb-adapter=exits", "--lsrb-max-items=1", env={"PYTHONPATH": str(installed)})
    printed = result.stdout + result.stderr
    assert result.returncode == 4, printed[-3000:]  # a usage error, not INTERNALERROR's 3
    assert "INTERNALERROR" not in printed and "Traceback" not in printed
    assert result.stderr.strip() == (
        "ERROR: --lsrb-adapter: the adapter 'exits' of badplug 1.0 (entry point 'exits_mod:Adapter') "
        "cannot be loaded (it called sys.exit(3) while being imported)."
    )


def test_a_metric_plug_in_that_exits_names_itself_not_the_gate_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run reads the installed metrics (summary.json writes them): a broken one stops the
    run in one sentence that says so and what to do, not one blaming gate options never given."""
    from pytest_lsrb.engine.metric import all_metrics

    install_distribution(
        tmp_path / "site",
        "badmetric",
        "[pytest_lsrb.metrics]\nmae = badmetric_mod:MAE\n",
        {"badmetric_mod": "import sys\nsys.exit(3)\n"},
        monkeypatch,
    )
    with pytest.raises(LsrbUsageError) as err:
        all_metrics()
    text = sentence(err)
    assert text.startswith(  # (one sentence)
        "the installed metric plug-ins, which every run reads: the metric 'mae' of badmetric"
    )
    assert text.endswith("(it called sys.exit(3) while being imported): fix or uninstall badmetric.")
    assert "--lsrb-min" not in text
