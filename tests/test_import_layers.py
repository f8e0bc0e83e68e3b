"""The package's import graph: imports only go down the layers, families never import each other,
and no module-level import cycle (issue #15). Read from the source with `ast`, nothing imported.

    core < equations < adapters < engine < output < {tactic, srbench} < tools < report < session
         < plugin, cli

`session` (one pytest session's state) sits above `tools` and `report`: it applies the gate and
prints the comparison with a baseline.
"""

from __future__ import annotations

import ast
from pathlib import Path

from lsrb_testing import REPO

PACKAGE = REPO / "pytest_lsrb"
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"core"}),
    frozenset({"equations"}),
    frozenset({"adapters"}),
    frozenset({"engine"}),
    frozenset({"output"}),
    frozenset({"tactic", "srbench"}),
    frozenset({"tools"}),
    frozenset({"report"}),
    frozenset({"session"}),
    frozenset({"plugin", "cli", "__main__", "__init__"}),
)
# `from pytest_lsrb import __version__` names the package, not a layer.
VERSION_ONLY = "pytest_lsrb"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(module: str) -> int:
    top = part_of(module)
    return next(i for i, names in enumerate(LAYERS) if top in names)


def imports(tree: ast.Module, *, top_level_only: bool) -> list[str]:
    """The pytest_lsrb modules `tree` imports (`top_level_only`: outside functions and outside
    `if TYPE_CHECKING`, i.e. what runs when the module is imported). `from pkg import sub` of a
    submodule imports `pkg.sub`."""
    nodes: list[ast.AST] = []
    if top_level_only:
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            nodes.append(node)
    else:
        nodes = list(ast.walk(tree))
    out = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pytest_lsrb"):
            subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES]
            out += subs or [node.module]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("pytest_lsrb")]
    return out


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def sources() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py")}


def test_imports_only_go_down_the_layers_and_families_stay_apart() -> None:
    wrong = []
    for module, tree in sources().items():
        for target in imports(tree, top_level_only=False):
            if target == VERSION_ONLY:
                continue
            up = layer(target) > layer(module)
            sideways = layer(target) == layer(module) and part_of(target) != part_of(module)
            if up or (sideways and layer(module) != len(LAYERS) - 1):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_no_module_level_import_cycle() -> None:
    trees = sources()
    graph = {m: {t for t in imports(tree, top_level_only=True) if t in trees} for m, tree in trees.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path, module, target]
            if target not in state and (cycle := visit(target, [*path, module])):
                return cycle
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            assert visit(module, []) is None


def test_the_public_api_names_resolve() -> None:
    import pytest_lsrb

    for name in pytest_lsrb.__all__:
        assert getattr(pytest_lsrb, name) is not None, name
    assert pytest_lsrb.Attempt.__module__ == "pytest_lsrb.engine.runner"
    assert set(pytest_lsrb.__all__) == {"__version__", *pytest_lsrb._EXPORTS}
