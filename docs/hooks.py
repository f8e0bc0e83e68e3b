"""MkDocs hooks (mkdocs.yml `hooks:`): the options reference page is written at build time from the
option table, so it cannot fall behind the options `pytest --help` lists."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

from pytest_lsrb.engine.option_docs import render_options_page

OPTIONS_PAGE = "options.md"


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, OPTIONS_PAGE, content=render_options_page()))
    return files
