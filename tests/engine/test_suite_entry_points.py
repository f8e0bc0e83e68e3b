"""A package ships a suite and `lsrb run NAME` / `api.run("NAME")` find it (issue #39): the
`pytest_lsrb.suites` entry points, after the built-in suites, and `lsrb list` names each with
its package. The package is a real distribution on sys.path (a `*.dist-info` folder with its
`entry_points.txt`, as `pip install --target` lays it out)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsrb_testing import TACTIC_SUITE, install_distribution

from pytest_lsrb import api
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.suite import find_suite
from pytest_lsrb.tools.plugins import listing

ENTRY_POINTS = """
[pytest_lsrb.suites]
five_goals = suiteplug:FIVE
nowhere = suiteplug:NOWHERE
not_a_path = suiteplug:NUMBER
goal_to_tactic_proposal_v1 = suiteplug:FIVE
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`suiteplug` 1.0 on sys.path, shipping a copy of five of the tactic suite's goals."""
    site = tmp_path / "site"
    folder = shutil.copytree(TACTIC_SUITE, site / "suiteplug_data" / "five")
    # its own test module's name, as a package's suite has (pytest imports it by its bare name,
    # and the built-in suite's module may already be imported in this process)
    (folder / "test_goal_to_tactic_proposal_v1.py").rename(folder / "test_five_goals.py")
    rows = (folder / "index.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "index.jsonl").write_text("".join(rows[:5]), encoding="utf-8")
    module = (
        f"from pathlib import Path\nFIVE = Path({str(folder)!r})\nNOWHERE = {str(tmp_path)!r}\nNUMBER = 3\n"
    )
    install_distribution(site, "suiteplug", ENTRY_POINTS, {"suiteplug": module}, monkeypatch)
    return folder


def test_a_packaged_suite_runs_by_name_and_lsrb_list_names_its_package(
    installed: Path, tmp_path: Path
) -> None:
    assert find_suite("five_goals") == installed
    block = listing().split("\n\n")[-1].splitlines()
    assert block[0] == "suites (lsrb run SUITE; entry points: pytest_lsrb.suites)"
    rows = {line.split()[0]: line for line in block[1:] if "suiteplug" in line}
    assert "entry point (suiteplug 1.0)" in rows["five_goals"] and rows["five_goals"].endswith(
        "suiteplug:FIVE"
    )
    assert "shadowed by the built-in" in rows["goal_to_tactic_proposal_v1"]
    result = api.run("five_goals", output_dir=tmp_path / "o", pytest_args=["-q"])
    assert result.exit_code == 0 and len(result.records) == 5


def test_a_built_in_suite_wins_over_a_package_of_the_same_name(installed: Path) -> None:
    assert find_suite("goal_to_tactic_proposal_v1").resolve() == TACTIC_SUITE.resolve()


def test_a_bad_packaged_suite_is_one_sentence(installed: Path, tmp_path: Path) -> None:
    with pytest.raises(LsrbUsageError) as empty:
        find_suite("nowhere")
    assert str(empty.value) == f"the suite 'nowhere' names {tmp_path}, which holds no suite.toml."
    with pytest.raises(LsrbUsageError) as number:
        find_suite("not_a_path")
    assert str(number.value) == "the suite 'not_a_path' names 3, not a folder (a Path or str is expected)."
    with pytest.raises(LsrbUsageError) as unknown:
        find_suite("no_such_suite")
    text = str(unknown.value)
    assert text.startswith(
        "no suite 'no_such_suite' (built-in suites: goal_to_tactic_proposal_v1, llm_srbench; "
    )
    assert "installed: five_goals, not_a_path, nowhere)." in text
    assert "\n" not in text
