"""What the wheel promises its users: type information (`py.typed`, PEP 561) for both packages, and
runtime dependencies that are only what runtime imports (hypothesis and syrupy are for the tests)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from lsrb_testing import REPO

TEST_ONLY = ("hypothesis", "syrupy")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builders = pytest.importorskip("hatchling.builders.wheel", reason="hatchling (the test extra) absent")
    out = tmp_path_factory.mktemp("wheel")
    return Path(next(builders.WheelBuilder(str(REPO)).build(directory=str(out), versions=["standard"])))


def test_the_wheel_ships_py_typed_for_each_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"pytest_lsrb/py.typed", "lean_sorry_repos_benchmark/py.typed"} <= names


def test_the_wheel_requires_no_test_only_package_at_runtime(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip()
            for line in zf.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    runtime = [r for r in requires if "extra ==" not in r]
    assert runtime, requires
    assert not [r for r in runtime if r.split(">")[0].split("=")[0].strip() in TEST_ONLY], runtime
    extras = [r for r in requires if "extra == 'test'" in r or 'extra == "test"' in r]
    assert all(any(r.startswith(name) for r in extras) for name in TEST_ONLY), requires


def test_no_runtime_module_imports_a_test_only_package() -> None:
    # Every module of both packages imported with hypothesis and syrupy made unimportable; a module
    # needing an optional extra that is not installed here (h5py, lean_interact...) is left out;
    # the `__main__` modules are not imported (they would run).
    code = f"""
import importlib, pkgutil, sys
for name in {TEST_ONLY!r}:
    sys.modules[name] = None
bad = []
for pkg in ("pytest_lsrb", "lean_sorry_repos_benchmark"):
    mod = importlib.import_module(pkg)
    for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
        if info.name.endswith("__main__"):  # `python -m` entry points run on import
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            if exc.name and exc.name.split(".")[0] in {TEST_ONLY!r}:
                bad.append((info.name, exc.name))
print(bad)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout
