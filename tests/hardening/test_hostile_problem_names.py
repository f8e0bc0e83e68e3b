"""`lsrb srbench generate` with a Feynman table whose `Filename` climbs out of `--out` (issue #14,
attack 2): refused in one sentence naming the file, line and field, and no file anywhere under the
test's tmp folder changes but the table itself."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_kit import assert_one_sentence

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.data.loaders import load_problems, write_problem_files

SRBENCH_INDEX = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench" / "index.jsonl"

HEADER = [
    "Filename",
    "Number",
    "Output",
    "Formula",
    "# variables",
    "v1_name",
    "v1_low",
    "v1_high",
    "v2_name",
    "v2_low",
    "v2_high",
]


def table(name: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerow(["I.12.1", "1", "F", "mu*Nn", "2", "mu", "1", "5", "Nn", "1", "5"])
    writer.writerow([name, "2", "F", "q1*Ef", "2", "q1", "1", "5", "Ef", "1", "5"])
    return out.getvalue()


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["../../escaped", "../escaped", "/tmp/escaped", ".hidden", "a/b", "x\ny"])
def test_generate_refuses_a_filename_that_leaves_out(tmp_path: Path, name: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    feynman = work / "FeynmanEquations.csv"
    feynman.write_text(table(name), encoding="utf-8")
    (tmp_path / "bystander.txt").write_text("unchanged", encoding="utf-8")
    before = tree(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_lsrb",
            "srbench",
            "generate",
            "--out",
            str(work / "out"),
            "--feynman",
            str(feynman),
            "--family",
            "transform",
            "--n-train",
            "20",
            "--n-test",
            "10",
        ],
        capture_output=True,
        text=True,
        cwd=work,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr.strip().removeprefix("error: ").removeprefix("ERROR: ")
    assert_one_sentence(message, feynman)
    assert f"{feynman}:3: column 'Filename'" in message
    assert tree(tmp_path) == before  # nothing written, inside --out or anywhere else
    assert not Path("/tmp/escaped.npz").exists()


def test_writing_problem_files_stays_in_the_index_folder(tmp_path: Path) -> None:
    """The writer checks too (problems can come from elsewhere than the Feynman reader)."""
    builtin = load_problems(SRBENCH_INDEX)[0]
    problem = builtin.model_copy(update={"name": "../../outside"})
    with pytest.raises(LsrbUsageError, match="cannot name a data file"):
        write_problem_files([problem], tmp_path / "set" / "index.jsonl")
    assert not list(tmp_path.rglob("*.npz"))


def test_crafted_item_ids_write_nothing_outside_the_run(run_suite, tmp_path: Path) -> None:
    """Item ids are data, never file names: a run over ids that look like paths writes only in
    its output directory."""
    import json

    builtin = Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1" / "index.jsonl"
    rows = [json.loads(line) for line in builtin.read_text(encoding="utf-8").splitlines()[:4]]
    for row, item_id in zip(rows, ["../../escaped", "/tmp/escaped-abs", "..", "a/../../b"], strict=True):
        row["item_id"] = item_id
    index = tmp_path / "index.jsonl"
    index.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "bystander.txt").write_text("unchanged", encoding="utf-8")
    before = tree(tmp_path)
    result = run_suite(f"--lsrb-index={index}", "--lsrb-outcome=record")
    assert result.returncode == 0, result.stdout + result.stderr
    assert {r["item_id"] for r in result.attempts()} == {
        "../../escaped",
        "/tmp/escaped-abs",
        "..",
        "a/../../b",
    }
    after = tree(tmp_path)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed and all(k.startswith("out/") for k in changed), changed
    assert not Path("/tmp/escaped-abs").exists()
