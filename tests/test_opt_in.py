"""The default run leaves out the end-to-end tests, found from their code (tests/opt_in.py): a
test that starts a process itself, through a helper or a fixture of tests/, is opt-in; one that
does not, or is marked `smoke`, stays; `--run-slow`, `LSRB_RUN_SLOW=1` or its node id runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import opt_in
import pytest
from hypothesis import given
from hypothesis import strategies as st


def spawns() -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def calls_a_spawner() -> None:
    spawns()


def recursive(n: int) -> int:
    return n if n < 1 else recursive(n - 1)


def lambda_inside() -> Any:
    return lambda: os.system("true")


def pure(xs: list[int]) -> int:
    return sum(x * x for x in xs)


class Server:
    def start(self) -> None:
        calls_a_spawner()


def names_a_class() -> Server:
    return Server()


@pytest.fixture
def spawning_fixture() -> Iterator[None]:
    spawns()
    yield


# In containers, not named by the test's code: a test naming `spawns` would itself be opt-in.
STARTS = (spawns, calls_a_spawner, lambda_inside, names_a_class, spawning_fixture)
# ...the last is a library's (the stdlib's `subprocess`, but it starts nothing): not followed
STAYS = (pure, recursive, subprocess.list2cmdline)


def test_process_starts_are_found_through_helpers_classes_and_nested_code() -> None:
    for starts in STARTS:
        assert opt_in.starts_process(starts), starts
    for stays in STAYS:
        assert not opt_in.starts_process(stays), stays


def test_this_module_stays_in_the_default_run(request: pytest.FixtureRequest) -> None:
    assert not opt_in.opt_in(request.node)


@given(st.lists(st.integers(), max_size=3))
def test_a_hypothesis_test_is_read_through_its_wrapper(xs: list[int]) -> None:
    assert pure(xs) >= 0


def test_the_inner_function_of_a_given_test_is_read() -> None:
    inner = opt_in.inner_test(test_a_hypothesis_test_is_read_through_its_wrapper)
    assert inner.__name__ == "test_a_hypothesis_test_is_read_through_its_wrapper"
    assert inner is not test_a_hypothesis_test_is_read_through_its_wrapper
    assert not opt_in.starts_process(test_a_hypothesis_test_is_read_through_its_wrapper)


MARKED = """
import pytest

def test_plain():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.llama
def test_llama():
    pass

@pytest.mark.slow
@pytest.mark.smoke
def test_smoke():
    pass
"""


# plugins these runs do not use (start-up is most of their cost)
UNUSED = ("cacheprovider", "lsrb", "hypothesispytest", "syrupy", "anyio", "xdist")
NOT_THIS = [arg for name in UNUSED for arg in ("-p", f"no:{name}")]


def outcomes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, int], str]:
    """Runs pytest in this process on the folder made below; (its outcome counts, its output)."""
    capsys.readouterr()
    # opt_in is imported already (by tests/conftest.py): nothing to rewrite, nothing to warn about
    pytest.main(["-p", "opt_in", "-q", "-W", "ignore::pytest.PytestAssertRewriteWarning", *NOT_THIS, *args])
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    counts = {}
    for part in last.split(" in ")[0].split(", "):  # "2 passed, 2 deselected in 1.37s"
        n, word = part.split()[:2]
        counts[word] = int(n)
    return counts, out


def test_marked_tests_are_deselected_unless_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(opt_in.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: x\n    llama: x\n    smoke: x\n")
    (tmp_path / "test_marked.py").write_text(MARKED)
    counts, out = outcomes(capsys)
    assert counts == {"passed": 2, "deselected": 2}, out
    assert (
        f"2 end-to-end tests (they start processes or servers) left out; run them with {opt_in.OPTION}" in out
    )
    assert outcomes(capsys, opt_in.OPTION)[0] == {"passed": 4}
    assert outcomes(capsys, "test_marked.py::test_slow")[0] == {"passed": 1}
    assert outcomes(capsys, "-m", "slow", opt_in.OPTION)[0] == {"passed": 3, "deselected": 1}
    monkeypatch.setenv(opt_in.ENV, "1")
    assert outcomes(capsys)[0] == {"passed": 4}
    monkeypatch.setenv(opt_in.ENV, "0")
    assert outcomes(capsys)[0] == {"passed": 2, "deselected": 2}
