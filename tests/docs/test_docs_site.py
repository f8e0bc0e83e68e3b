"""The docs site: the options page lists every option `pytest --help` shows (an option added to the
table, or added outside it, is caught here), the site builds with warnings as errors, and the README
stays the short front door that links into it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docblocks import blocks
from lsrb_testing import REPO

from pytest_lsrb.engine.option_docs import render_options_page
from pytest_lsrb.engine.option_sets import every_option

OPTIONS = every_option()


def _help_options() -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return set(re.findall(r"^\s+(--lsrb-[a-z0-9-]+)", proc.stdout, flags=re.M))


def test_the_options_page_lists_every_option_pytest_help_shows() -> None:
    shown = _help_options()
    assert len(shown) >= len(OPTIONS) > 40
    page = render_options_page()
    listed = set(re.findall(r"^\| `(--lsrb-[a-z0-9-]+)` \|", page, flags=re.M))
    assert shown - listed == set(), f"in pytest --help, not on the options page: {sorted(shown - listed)}"
    assert listed - shown == set(), f"on the options page, not in pytest --help: {sorted(listed - shown)}"


def test_the_options_page_kept_in_the_repository_is_the_source_s() -> None:
    """docs/options.md is kept in the repository so that links to it resolve there (not only in
    the built site); it must say what the source says (`python docs/hooks.py` writes it)."""
    kept = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    assert kept == render_options_page(), "docs/options.md is behind the source: run `python docs/hooks.py`"


def test_each_option_row_carries_the_help_pytest_prints() -> None:
    page = render_options_page()
    for opt in OPTIONS:
        row = next(line for line in page.splitlines() if line.startswith(f"| `--lsrb-{opt.name}` |"))
        assert opt.help.replace("|", "\\|") in row, opt.name


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason='mkdocs absent (pip install -e ".[docs]")')
    pytest.importorskip("material", reason='mkdocs-material absent (pip install -e ".[docs]")')
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's end-of-life banner (.ci/run)
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    options = (tmp_path / "site" / "options" / "index.html").read_text(encoding="utf-8")
    assert all(f"--lsrb-{o.name}</code>" in options for o in OPTIONS)


def test_the_readme_is_the_short_front_door() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(readme) <= 150, len(readme)
    # .ci/run runs the line after `# 1.` as the newcomer's first command
    first = readme.index(next(line for line in readme if line.startswith("# 1.")))
    assert readme[first + 1].startswith("python -m pip install -e . && python -m pytest suites/")
    assert any("docs/" in line or "mkdocs" in line for line in readme)


def test_the_readmes_sample_output_is_the_one_the_quickstart_runs() -> None:
    # the quickstart's sample is checked against a real run (test_docs_commands); the README's copy
    # must be the same lines, so the README's selected_rows_hash cannot drift either
    def sample(page: Path) -> str:
        return next(b.code for b in blocks(page) if "selected_rows_hash " in b.code)

    assert sample(REPO / "README.md") == sample(REPO / "docs" / "quickstart.md")


# `[text](target)` with a relative target (not a URL, not a bare `#anchor`)
_LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")


def test_every_relative_link_resolves_in_the_repository() -> None:
    """A link between the docs (or from the README) names a file the repository holds: one that
    exists only in the built site (a page the build generates) is a dead link where most readers
    read the docs, on the repository's page."""
    dead = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                dead.append(f"{page.relative_to(REPO)}: {target}")
    assert dead == []
