"""Hostile rows in the AI-Feynman equation table: each is either generated from or refused in
one sentence naming the file, the line and the column, before any sampling or solving. Rows are
a real row of `FeynmanEquations.csv` with one cell replaced."""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path

import pytest
from hostile_kit import assert_one_sentence, outcome

from pytest_lsrb.srbench.generate import generate_problems
from pytest_lsrb.srbench.generate.feynman import FeynmanTableWarning, read_feynman_csv

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "feynman" / "FeynmanEquations.csv"
pytestmark = pytest.mark.skipif(not REAL.is_file(), reason="../shared/data/feynman is absent")

# (column, value): 32 hostile cells. The row is I.12.1 (F = mu*Nn).
HOSTILE = [
    ("v1_low", "nan"),
    ("v1_low", "inf"),
    ("v1_low", "-inf"),
    ("v1_low", "1e309"),
    ("v1_low", "abc"),
    ("v1_low", ""),
    ("v1_high", "-1e308"),
    ("v1_high", "nan"),
    ("v1_high", "0x10"),
    ("v1_low", "-1.7e308"),
    ("v1_name", "1x"),
    ("v1_name", "a b"),
    ("v1_name", "x-y"),
    ("v1_name", "__class__"),
    ("v1_name", "mu\x00"),
    ("v1_name", "params"),
    ("v1_name", "Nn"),
    ("v1_name", "λ"),
    ("Output", "1y"),
    ("Output", "a b"),
    ("Output", "__import__"),
    ("# variables", "abc"),
    ("# variables", "inf"),
    ("# variables", "1e400"),
    ("# variables", "-3"),
    ("# variables", "2.5"),
    ("Formula", ""),
    ("Formula", "mu*"),
    ("Formula", "mu*Nn**1e400"),
    ("Formula", "__import__('os')"),
    ("Filename", "../x"),
    ("Filename", "I" * 300),
]


def read_real() -> tuple[list[str], dict[str, str]]:
    reader = csv.DictReader(io.StringIO(REAL.read_text(encoding="utf-8"), newline=""))
    row = next(r for r in reader if r["Filename"] == "I.12.1")
    return list(reader.fieldnames or []), row


def write_table(path: Path, rows: list[dict[str, str]], bom: bool = False) -> Path:
    header, _ = read_real()
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header)
    writer.writeheader()
    writer.writerows(rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode("utf-8"))
    return path


@pytest.mark.parametrize(("column", "value"), HOSTILE)
def test_a_hostile_cell_is_generated_from_or_named(tmp_path: Path, column: str, value: str) -> None:
    _, row = read_real()
    table = write_table(tmp_path / "table.csv", [{**row, column: value}])
    report, message = outcome(
        lambda: generate_problems(
            tmp_path / "out", families=("feynman",), feynman_csv=table, n_train=20, n_test=10
        )
    )
    if message is None:
        assert report["problems"] >= 0
        return
    assert_one_sentence(message, f"{table}:2")
    assert "column '" in message, message


@pytest.mark.parametrize(("column", "value"), [("v1_low", "nan"), ("v1_name", "1x"), ("# variables", "inf")])
def test_the_transform_family_refuses_the_same_rows(tmp_path: Path, column: str, value: str) -> None:
    _, row = read_real()
    table = write_table(tmp_path / "table.csv", [{**row, column: value}])
    _, message = outcome(
        lambda: generate_problems(tmp_path / "out", families=("transform",), feynman_csv=table)
    )
    assert message is not None
    assert_one_sentence(message, f"{table}:2")
    assert f"column '{column}'" in message, message


def test_a_table_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    with_bom = tmp_path / "bom.csv"
    with_bom.write_bytes(b"\xef\xbb\xbf" + REAL.read_bytes())
    assert [e.name for e in read_feynman_csv(with_bom)] == [e.name for e in read_feynman_csv(REAL)]
    assert len(read_feynman_csv(with_bom)) == 100


def test_a_table_without_equations_is_refused(tmp_path: Path) -> None:
    header, _ = read_real()
    empty = tmp_path / "empty.csv"
    empty.write_text(",".join(header) + "\n")
    _, message = outcome(lambda: read_feynman_csv(empty))
    assert message is not None and "holds no equations" in message
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(REAL.read_text().replace("Filename", "File", 1))
    _, message = outcome(lambda: read_feynman_csv(renamed))
    assert message is not None and f"{renamed}:1: the header has no 'Filename' column." == message


def test_a_repeated_name_is_warned_about_and_skipped(tmp_path: Path) -> None:
    _, row = read_real()
    table = write_table(tmp_path / "t.csv", [row, {**row, "Formula": "mu*Nn*2"}])
    with pytest.warns(FeynmanTableWarning, match=r"t\.csv:3: column 'Filename': 'I\.12\.1' repeats line 2"):
        (eq,) = read_feynman_csv(table)
    assert eq.formula == "mu*Nn"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_feynman_csv(REAL)) == 100  # the real table repeats none


def test_a_row_longer_than_the_header_is_named(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    text = REAL.read_text().splitlines()
    table.write_text("\n".join([text[0], text[1] + ",extra"]) + "\n")
    _, message = outcome(lambda: read_feynman_csv(table))
    assert message == f"{table}:2: more cells than the header has columns."
