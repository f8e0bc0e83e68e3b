"""Every option value is checked before the run: one sentence, exit 4 from pytest, never a
traceback, a hang or an error in every test. The cases are the issue's (#13) list."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from lsrb_testing import REPO, TACTIC_SUITE

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.selection import MAX_CASES, SelectableRow, expand
from pytest_lsrb.engine.option_checks import check_values
from pytest_lsrb.engine.option_table import dest, key
from pytest_lsrb.session.prepare import prepare_suite_run

SECONDS = "expected a finite number of seconds > 0 and <= 86400"
CASES = [
    ("--lsrb-timeout=nan", f"--lsrb-timeout: {SECONDS} (got nan)."),
    ("--lsrb-timeout=inf", f"--lsrb-timeout: {SECONDS} (got inf)."),
    ("--lsrb-timeout=-1", f"--lsrb-timeout: {SECONDS} (got -1.0)."),
    ("--lsrb-timeout=0", f"--lsrb-timeout: {SECONDS} (got 0.0)."),
    ("--lsrb-base-url=http://[::1", "--lsrb-base-url: not a valid URL (Invalid IPv6 URL)."),
    ("--lsrb-temperature=nan", "--lsrb-temperature: expected a finite number >= 0 and <= 2 (got nan)."),
    ("--lsrb-samples=9223372036854775807",
     "--lsrb-samples: expected a whole number >= 1 and <= 10000 (got 9223372036854775807)."),
    ("--lsrb-samples=100000000",
     "--lsrb-samples: expected a whole number >= 1 and <= 10000 (got 100000000)."),
    ("--lsrb-max-items=0", "--lsrb-max-items: expected a whole number >= 1 and <= 100000000 (got 0)."),
]  # fmt: skip


def prepare(suite: Path = TACTIC_SUITE, **options: str) -> None:
    values = {dest(k): v for k, v in options.items()}
    prepare_suite_run(suite, values.get, REPO)


@pytest.mark.parametrize(("arg", "sentence"), CASES)
def test_a_bad_value_is_one_sentence(arg: str, sentence: str) -> None:
    name, value = arg.removeprefix("--lsrb-").split("=", 1)
    with pytest.raises(LsrbUsageError) as err:
        prepare(**{key(name): value})
    assert str(err.value) == sentence


def test_through_pytest_bad_values_exit_4_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    for arg, sentence in CASES[::3]:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-q", "-p", "no:cacheprovider", arg],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 4, proc.stdout[-1000:] + proc.stderr
        assert proc.stderr.strip() == f"ERROR: {sentence}"
        assert not (tmp_path / "lsrb-out").exists()


def copy_suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    shutil.copytree(TACTIC_SUITE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_suite_default_of_inf_is_named_in_suite_toml(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    toml = root / "suite.toml"
    toml.write_text(toml.read_text("utf-8") + "timeout = inf\n", encoding="utf-8")
    with pytest.raises(LsrbUsageError) as err:
        prepare(root)
    assert str(err.value) == f"{toml}: field 'defaults.timeout': {SECONDS} (got inf)."


def test_a_prompt_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    (root / "prompt.md").write_bytes(b"Goal:\n\xff{{goal_text}}\n")
    with pytest.raises(LsrbUsageError) as err:
        prepare(root)
    assert str(err.value) == (
        f"{root / 'suite.toml'}: field 'suite.prompt' names {root / 'prompt.md'}, which is not UTF-8 "
        "text (byte 0xff at offset 6)."
    )


def test_bounds_and_text() -> None:
    check_values({"timeout": 120.0, "samples": 1, "concurrency": None, "base_url": "http://[::1]:8080/v1"})
    with pytest.raises(
        LsrbUsageError, match=r"^--lsrb-goal-slice: the value is not UTF-8 text \(it holds \\udcff"
    ):
        check_values({"goal_slice": "tag:\udcff"})  # a non-UTF-8 command-line byte (surrogateescape)
    with pytest.raises(LsrbUsageError) as err:
        check_values({"base_url": "https://user:sk-secret@[::1"})
    assert "sk-secret" not in str(err.value)  # the URL may hold a key: never repeated
    with pytest.raises(LsrbUsageError, match="more than the 10000000 one pytest session can hold"):
        expand([cast(SelectableRow, object())] * 1001, 10_000, 0)
    assert MAX_CASES == 10_000_000


def test_a_value_of_the_wrong_type_names_what_is_valid() -> None:
    """`--lsrb-temperature=abc` said only "'abc' is not a valid value" (issue #50 item 7)."""
    cases = {
        "temperature": ("abc", "--lsrb-temperature: expected a finite number >= 0 and <= 2 (got 'abc')."),
        "samples": ("two", "--lsrb-samples: expected a whole number >= 1 and <= 10000 (got 'two')."),
        "shard_index": ("x", "--lsrb-shard-index: expected a whole number or auto (got 'x')."),
        "seed": ("1.5", "--lsrb-seed: expected a whole number (got '1.5')."),
    }
    for name, (value, sentence) in cases.items():
        with pytest.raises(LsrbUsageError) as err:
            prepare(**{name: value})
        assert str(err.value) == sentence


def test_a_suite_default_of_the_wrong_type_names_what_is_valid(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    toml = root / "suite.toml"
    toml.write_text(toml.read_text("utf-8") + 'answer = "essay"\n', encoding="utf-8")
    with pytest.raises(LsrbUsageError) as err:
        prepare(root)
    assert str(err.value) == (
        f"{toml}: field 'defaults.answer': expected one of tactic, proof, search (got 'essay')."
    )


def test_a_mistyped_option_gets_the_closest_one() -> None:
    """pytest alone says "unrecognized arguments"; inspect_ai suggests the right one."""
    from pytest_lsrb.engine.option_sets import every_option, unknown_flag

    known = [o.flag_name for o in every_option()]
    assert unknown_flag(["-q", "--lsrb-temprature=1"], known) == (
        "--lsrb-temprature: no such option (did you mean --lsrb-temperature?); `--help` lists them."
    )
    assert unknown_flag(["--lsrb-sr-methd", "x"], known) == (
        "--lsrb-sr-methd: no such option (did you mean --lsrb-sr-method?); `--help` lists them."
    )
    assert unknown_flag(["--lsrb-zzzzzz"], known) == "--lsrb-zzzzzz: no such option; `--help` lists them."
    assert unknown_flag(["--lsrb-max-items=3", "-k", "nat"], known) is None
    # spelt as a suite.toml key or in capitals: pytest said only "unrecognized arguments"
    assert unknown_flag(["--lsrb_max_items", "3"], known) == (
        "--lsrb_max_items: no such option (did you mean --lsrb-max-items?); `--help` lists them."
    )
    assert unknown_flag(["--LSRB-Max-Items=3"], known) == (
        "--LSRB-Max-Items: no such option (did you mean --lsrb-max-items?); `--help` lists them."
    )
    assert unknown_flag(["--lsrb_sr_methd", "x"], known) == (
        "--lsrb_sr_methd: no such option (did you mean --lsrb-sr-method?); `--help` lists them."
    )


def test_a_value_outside_an_options_choices_is_one_sentence_naming_them() -> None:
    for value in ("bogus", "Record"):
        with pytest.raises(LsrbUsageError) as err:
            prepare(outcome=value)
        assert str(err.value) == f"--lsrb-outcome: expected one of strict, record (got {value!r})."


def test_through_pytest_a_value_outside_the_choices_is_one_line(tmp_path: Path) -> None:
    """argparse answered `--lsrb-outcome bogus` with pytest's usage line and "invalid choice"
    over four lines (issue #50 item 7): one sentence, as every other bad value gets."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    command = [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-p", "no:cacheprovider"]
    command += ["--lsrb-outcome", "bogus"]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 4, proc.stdout[-1000:] + proc.stderr
    assert proc.stderr.strip() == "ERROR: --lsrb-outcome: expected one of strict, record (got 'bogus')."


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_through_pytest_a_mistyped_option_is_one_line_with_the_closest(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(TACTIC_SUITE), "-p", "no:cacheprovider", "--lsrb-max-item=3"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stdout[-1000:] + proc.stderr
    assert proc.stderr.strip() == (
        "ERROR: --lsrb-max-item: no such option (did you mean --lsrb-max-items?); `--help` lists them."
    )
