"""The package's import graph: imports only go down the layers, families never import each other,
and no module-level import cycle (issue #15). Read from the source with `ast`, nothing imported.

    core < equations < adapters < engine < output < {tactic, srbench} < tools < report < view
         < session < plugin, cli

`session` (one pytest session's state) sits above `tools` and `report`: it applies the gate and
prints the comparison with a baseline.

Inside `srbench` the parts (subpackages, and the family's top-level modules) have their own order:

    {data, records, option_table} < generate < fitting < {options, metrics} < limits < methods < scoring
        < {mock, tables} < task

and no cycle exists even counting the imports written only for the type checker, nor counting
every deferred import (inside a function) and every `"pytest_lsrb.mod:Class"` string a registry
loads: the layers count those too, so a built-in registration written as text cannot reach up.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
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
    frozenset({"view"}),
    frozenset({"session"}),
    frozenset({"plugin", "cli", "api", "__main__", "__init__"}),
)
# srbench's parts, lowest first: a subpackage (`data` for `pytest_lsrb.srbench.data.problem`) or a
# top-level module (`options`).
SRBENCH_LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"data", "records", "option_table"}),
    frozenset({"generate"}),
    frozenset({"fitting"}),
    frozenset({"options", "metrics"}),
    frozenset({"limits"}),
    frozenset({"mock"}),  # the general mock baseline, which a method ships by default
    frozenset({"methods"}),
    frozenset({"scoring"}),
    frozenset({"tables"}),
    frozenset({"task"}),
)
# `from pytest_lsrb import __version__` names the package, not a layer.
VERSION_ONLY = "pytest_lsrb"
# A registry's `"pkg.mod:Class"` string (a built-in registration, a default spec) loads that module
# when the name is chosen: an import written as text, which the layers and the cycles count too.
SPEC = re.compile(r"(pytest_lsrb(?:\.\w+)*):[A-Za-z_][\w.]*")
# Calls that import a module named by a string constant (`preload("pkg.mod")`).
IMPORTING_CALLS = frozenset({"preload", "import_module"})


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
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


def named_in_text(nodes: Iterable[ast.AST]) -> list[str]:
    """The modules `nodes` name in strings that load them: registry specs and importing calls."""
    out = []
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = SPEC.fullmatch(node.value.strip())
            if found:
                out.append(found.group(1))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in IMPORTING_CALLS:
                texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
                out += [t for t in texts if isinstance(t, str) and t.startswith("pytest_lsrb")]
    return out


def imports(
    tree: ast.Module,
    modules: set[str],
    *,
    top_level_only: bool,
    type_checking: bool = False,
) -> list[str]:
    """The pytest_lsrb modules `tree` imports (`top_level_only`: outside functions and outside
    `if TYPE_CHECKING`, i.e. what runs when the module is imported; with `type_checking` the
    `if TYPE_CHECKING` imports count too). `from pkg import sub` of a submodule imports `pkg.sub`.
    Without `top_level_only`, the modules named by registry strings count as well."""
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
            subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
            out += subs or [node.module]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("pytest_lsrb")]
    if not top_level_only:
        out += named_in_text(nodes)
    return out


def sources(package: Path = PACKAGE) -> dict[str, ast.Module]:
    return {module_name(p, package): ast.parse(p.read_text(encoding="utf-8")) for p in package.rglob("*.py")}


def layer_violations(trees: Mapping[str, ast.Module]) -> list[str]:
    """`module -> target` for every import (deferred, or a registry string) up the layers, or
    sideways between two parts of one layer below the top."""
    modules = set(trees)
    wrong = []
    for module, tree in trees.items():
        for target in imports(tree, modules, top_level_only=False):
            if target == VERSION_ONLY:
                continue
            up = layer(target) > layer(module)
            sideways = layer(target) == layer(module) and part_of(target) != part_of(module)
            if up or (sideways and layer(module) != len(LAYERS) - 1):
                wrong.append(f"{module} -> {target}")
    return wrong


def test_imports_only_go_down_the_layers_and_families_stay_apart() -> None:
    assert layer_violations(sources()) == []


def test_every_srbench_part_has_its_place_and_imports_go_down() -> None:
    trees = sources()
    srbench = [m for m in trees if m.startswith("pytest_lsrb.srbench.")]
    known = set().union(*SRBENCH_LAYERS)
    assert sorted({srbench_part(m) for m in srbench} - known) == []
    wrong = []
    for module, tree in trees.items():
        if not module.startswith("pytest_lsrb.srbench."):
            continue
        for target in imports(tree, set(trees), top_level_only=False):
            if not target.startswith("pytest_lsrb.srbench."):
                continue
            up = srbench_layer(target) > srbench_layer(module)
            sideways = srbench_layer(target) == srbench_layer(module) and srbench_part(
                target
            ) != srbench_part(module)
            if up or sideways:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def import_graph(
    trees: Mapping[str, ast.Module] | None = None, *, type_checking: bool = False, deferred: bool = False
) -> dict[str, set[str]]:
    """Module -> the modules it imports: at import time (`type_checking`: and for the type checker
    too), or (`deferred`) every import in it, inside functions and by registry string included."""
    trees = sources() if trees is None else trees
    modules = set(trees)
    return {
        m: {
            t
            for t in imports(tree, modules, top_level_only=not deferred, type_checking=type_checking)
            if t in trees
        }
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


def test_no_import_cycle_counting_deferred_imports_and_registry_strings() -> None:
    """An import inside a function, or a `"pkg.mod:Class"` a registry loads, is an import all the
    same: two modules that reach each other so form one piece that cannot be understood, tested
    or moved apart (issue #49: `tactic.search` <-> `tactic.task` through a deferred import)."""
    assert cycles(import_graph(deferred=True)) == set()


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


def _tree(root: Path, files: Mapping[str, str]) -> dict[str, ast.Module]:
    """The sources of a made-up `pytest_lsrb` package under `root` (path -> text)."""
    package = root / "pytest_lsrb"
    for name, text in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    return sources(package)


def test_a_registry_string_up_the_layers_is_seen(tmp_path: Path) -> None:
    """A built-in registration written as text in the engine, naming a family's class, is an
    import up the layers though no import statement says so."""
    trees = _tree(
        tmp_path,
        {
            "engine/verifier.py": 'BUILT_IN = {"synthetic": "pytest_lsrb.tactic.verifiers:Synthetic"}\n',
            "tactic/verifiers.py": "class Synthetic: ...\n",
            "srbench/scoring.py": (
                'from pytest_lsrb.core.bounded import preload\npreload("pytest_lsrb.tools.x")\n'
            ),
            "tools/x.py": "",
            "core/bounded.py": "def preload(*names): ...\n",
        },
    )
    assert sorted(layer_violations(trees)) == [
        "pytest_lsrb.engine.verifier -> pytest_lsrb.tactic.verifiers",
        "pytest_lsrb.srbench.scoring -> pytest_lsrb.tools.x",
    ]


def test_a_cycle_through_a_deferred_import_fails_the_test(tmp_path: Path) -> None:
    """`a` imports `b` at the top, `b` imports `a` inside a function: no cycle when the module is
    imported, a cycle all the same; so is one closed by a registry string."""
    trees = _tree(
        tmp_path,
        {
            "tactic/a.py": "from pytest_lsrb.tactic.b import g\n",
            "tactic/b.py": "def g():\n    from pytest_lsrb.tactic.a import f\n",
            "engine/c.py": 'NAMES = {"d": "pytest_lsrb.engine.d:D"}\n',
            "engine/d.py": "from pytest_lsrb.engine.c import NAMES\nclass D: ...\n",
        },
    )
    assert cycles(import_graph(trees)) == set()  # nothing at import time
    assert cycles(import_graph(trees, deferred=True)) == {
        frozenset({"pytest_lsrb.tactic.a", "pytest_lsrb.tactic.b"}),
        frozenset({"pytest_lsrb.engine.c", "pytest_lsrb.engine.d"}),
    }
    assert layer_violations(trees) == []  # inside one part: only the cycle test sees it
