"""Help texts as a user reaches them: the plugin loads into every pytest of the venv, so a help
string argparse cannot format breaks `pytest --help` in every project, not only this one."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_lsrb.cli import build_parser
from pytest_lsrb.engine.option_sets import every_option

OPTIONS = every_option()


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_pytest_help_lists_every_lsrb_option(tmp_path: Path) -> None:
    # An empty folder: another project in the same venv, where the plugin is loaded all the same.
    proc = _run("-m", "pytest", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for opt in OPTIONS:
        assert f"--lsrb-{opt.name}" in proc.stdout
    assert "stable 20%)" in proc.stdout  # the literal percent sign survives formatting


def test_lsrb_run_suite_help_is_pytest_help_with_the_options(tmp_path: Path) -> None:
    proc = _run("-m", "pytest_lsrb", "run", "goal_to_tactic_proposal_v1", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--lsrb-split-policy" in proc.stdout and "--lsrb-sr-method" in proc.stdout


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _subparsers(sub)
    return found


def test_every_lsrb_command_formats_its_help() -> None:
    parsers = _subparsers(build_parser())
    assert len(parsers) >= 10
    for parser in parsers:
        assert parser.format_help().startswith("usage: lsrb")


def test_lsrb_run_help_lists_every_option_in_its_group() -> None:
    """`lsrb run --help` (no suite yet) listed no --lsrb-* option (issue #50 item 7): it lists
    every one, in the groups pytest's help has, each with its default where it has one."""
    from pytest_lsrb.engine.option_sets import registered_sets
    from pytest_lsrb.engine.option_table import grouped

    [run] = [p for p in _subparsers(build_parser()) if p.prog == "lsrb run"]
    text = run.format_help()
    assert text.startswith("usage: lsrb run [-h] SUITE [--lsrb-OPTION VALUE ...]")
    for opt in OPTIONS:
        assert f"  {opt.flag_name}" in text, opt.name
    titles = [title for _, title, _ in grouped(registered_sets())]
    positions = [text.index(f"pytest-lsrb {title}:") for title in titles]
    assert positions == sorted(positions)  # pytest's order: selection, model, the families, ...
    assert titles[:2] == [
        "selection: which items, how many samples, how answers are checked",
        "model: the endpoint and how it is called",
    ]
    samples = text[text.index("--lsrb-samples") : text.index("--lsrb-split-policy")]
    assert "(default: 1)" in " ".join(samples.split())
