"""The package's import graph: imports only go down the layers, families never import each other,
and no module-level import cycle (issue #15). Read from the source with `ast`, nothing imported.

    core < equations < adapters < engine < output < {tactic, srbench} < tools < report < session
         < plugin, cli

`session` (one pytest session's state) sits above `tools` and `report`: it applies the gate and
prints the comparison with a baseline.

Inside `srbench` the parts (subpackages, and the family's top-level modules) have their own order:

    {data, records} < generate < fitting < options < limits < methods < scoring < {mock, tables} < task

and no cycle exists even counting the imports written only for the type checker.
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
# srbench's parts, lowest first: a subpackage (`data` for `pytest_lsrb.srbench.data.problem`) or a
# top-level module (`options`).
SRBENCH_LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"data", "records"}),
    frozenset({"generate"}),
    frozenset({"fitting"}),
    frozenset({"options"}),
    frozenset({"limits"}),
    frozenset({"methods"}),
    frozenset({"scoring"}),
    frozenset({"mock", "tables"}),
    frozenset({"task"}),
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


def srbench_part(module: str) -> str:
    return module.split(".")[2]


def srbench_layer(module: str) -> int:
    part = srbench_part(module)
    return next(i for i, names in enumerate(SRBENCH_LAYERS) if part in names)


def imports(tree: ast.Module, *, top_level_only: bool, type_checking: bool = False) -> list[str]:
    """The pytest_lsrb modules `tree` imports (`top_level_only`: outside functions and outside
    `if TYPE_CHECKING`, i.e. what runs when the module is imported; with `type_checking` the
    `if TYPE_CHECKING` imports count too). `from pkg import sub` of a submodule imports `pkg.sub`."""
    nodes: list[ast.AST] = []
    if top_level_only:
        for stmt in tree.body:
            if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
                if type_checking:
                    nodes += ast.walk(stmt)
                continue
            nodes.append(stmt)
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


def test_every_srbench_part_has_its_place_and_imports_go_down() -> None:
    srbench = [m for m in sources() if m.startswith("pytest_lsrb.srbench.")]
    known = set().union(*SRBENCH_LAYERS)
    assert sorted({srbench_part(m) for m in srbench} - known) == []
    wrong = []
    for module, tree in sources().items():
        if not module.startswith("pytest_lsrb.srbench."):
            continue
        for target in imports(tree, top_level_only=False):
            if not target.startswith("pytest_lsrb.srbench."):
                continue
            up = srbench_layer(target) > srbench_layer(module)
            sideways = srbench_layer(target) == srbench_layer(module) and srbench_part(
                target
            ) != srbench_part(module)
            if up or sideways:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def import_graph(*, type_checking: bool) -> dict[str, set[str]]:
    trees = sources()
    return {
        m: {t for t in imports(tree, top_level_only=True, type_checking=type_checking) if t in trees}
        for m, tree in trees.items()
    }


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), each a set of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = {stack.pop()}
            while module not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.add(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_cycles_finds_a_cycle_and_only_the_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == {frozenset({"a", "b", "c"})}
    assert cycles({"a": {"b"}, "b": set()}) == set()


def test_no_import_cycle_not_even_a_type_only_one() -> None:
    assert cycles(import_graph(type_checking=True)) == set()


def test_no_module_level_import_cycle() -> None:
    graph = import_graph(type_checking=False)
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


def test_the_adapters_reach_no_task() -> None:
    """The mock adapter takes its answers from its caller (issue #28): no adapter loads a task,
    neither by import nor through the task registry or a module's name in a string."""
    above = {name for names in LAYERS[layer("pytest_lsrb.adapters") + 1 :] for name in names}
    wrong = []
    for module, tree in sources().items():
        if part_of(module) != "adapters":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "pytest_lsrb.core.registry":
                wrong += [f"{module} imports {a.name}" for a in node.names if a.name == "TASKS"]
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named = node.value.split(":")[0]
                if named.startswith("pytest_lsrb.") and part_of(named) in above:
                    wrong.append(f"{module} names {node.value}")
    assert wrong == []


def test_the_public_api_names_resolve() -> None:
    import pytest_lsrb

    for name in pytest_lsrb.__all__:
        assert getattr(pytest_lsrb, name) is not None, name
    assert pytest_lsrb.Attempt.__module__ == "pytest_lsrb.engine.runner"
    assert set(pytest_lsrb.__all__) == {"__version__", *pytest_lsrb._EXPORTS}
