"""MkDocs hooks (mkdocs.yml `hooks:`): pages written from the code at build time, so they cannot
fall behind it.

- options.md: the option table (`pytest_lsrb.engine.option_docs.render_options_page`), every option
  `pytest --help` lists (tests/docs/test_docs_site.py checks the two agree). The page is also
  kept in the repository, so its links resolve there too: `python docs/hooks.py` writes it, the
  build writes it afresh, and a test fails when the kept copy falls behind the source.
- troubleshooting.md: its "Every message" section is completed with each usage error the package
  can raise, read from the source with `ast` (nothing imported or run).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from pytest_lsrb.engine.option_docs import render_options_page

OPTIONS_PAGE = "options.md"
TROUBLESHOOTING_PAGE = "troubleshooting.md"
PACKAGE = Path(__file__).resolve().parent.parent / "pytest_lsrb"
USAGE_ERRORS = frozenset({"LsrbUsageError", "UsageError"})


def on_files(files: Files, config: Any) -> Files:
    page = files.get_file_from_path(OPTIONS_PAGE)
    if page is None:
        files.append(File.generated(config, OPTIONS_PAGE, content=render_options_page()))
    else:  # the kept copy, written afresh from the source
        page.content_string = render_options_page()
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    if page.file.src_uri == TROUBLESHOOTING_PAGE:
        return markdown.rstrip() + "\n\n" + render_messages() + "\n"
    return markdown


def _text(node: ast.expr) -> str | None:
    """The message an expression spells, with `‹expr›` for what is filled in at run time."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append(f"‹{ast.unparse(value.value)}›")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


def messages() -> dict[str, list[str]]:
    """Module (relative to pytest_lsrb/) -> the usage-error messages it raises, in source order."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            func = node.exc.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in USAGE_ERRORS or not node.exc.args:
                continue
            text = _text(node.exc.args[0])
            if text:
                module = path.relative_to(PACKAGE).as_posix()
                found.setdefault(module, [])
                if text not in found[module]:
                    found[module].append(text)
    return found


def render_messages() -> str:
    found = messages()
    total = sum(len(v) for v in found.values())
    lines = [f"{total} messages in {len(found)} modules.", ""]
    for module, texts in found.items():
        lines += [f"**`{module}`**", ""]
        lines += ["- `" + " ".join(t.split()).replace("`", "'") + "`" for t in texts]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # `python docs/hooks.py`: write the kept copy of the options page
    (Path(__file__).resolve().parent / OPTIONS_PAGE).write_text(render_options_page(), encoding="utf-8")
