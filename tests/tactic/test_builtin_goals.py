"""The built-in goals of goal_to_tactic_proposal_v1: real Lean goals, rows that point at them.

The goals live in `lean/BuiltinGoals.lean`; `lean/make_index.py` writes `index.jsonl` from it.
These tests hold the three together: the rows validate, every span is the literal `sorry`, the
generator reproduces the committed index byte for byte, each hand-written goal agrees with the
declaration it belongs to, and the mock baseline has something sensible to say about each goal.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_lsrb.core.rows import load_jsonl
from pytest_lsrb.core.seeds import attempt_seed
from pytest_lsrb.tactic.answer import read_tactic
from pytest_lsrb.tactic.baseline import candidate_tactics, mock_tactic_answer
from pytest_lsrb.tactic.rows import TacticRow

SUITE = Path(__file__).resolve().parents[2] / "suites" / "goal_to_tactic_proposal_v1"
LEAN_DIR = SUITE / "lean"
LEAN_FILE = LEAN_DIR / "BuiltinGoals.lean"
INDEX = SUITE / "index.jsonl"
MAKE_INDEX = LEAN_DIR / "make_index.py"

REQUIRED_TAGS = ("nat", "int", "list", "logic", "exists", "iff", "neg", "forall", "instance", "hyps")


def _load_make_index() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lsrb_builtin_make_index", MAKE_INDEX)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


make_index = _load_make_index()
GOALS = make_index.parse_goals(LEAN_FILE.read_text(encoding="utf-8"))
ROWS = load_jsonl(INDEX, TacticRow)
LEAN_LINES = LEAN_FILE.read_text(encoding="utf-8").split("\n")


# --- the index ----------------------------------------------------------------------------


def test_every_row_validates_and_there_are_enough() -> None:
    assert len(ROWS) >= 40
    assert all(isinstance(r, TacticRow) for r in ROWS)
    for row in ROWS:
        assert row.sorry_kind == "tactic"
        assert row.repo_remote == "https://github.com/pytest-lsrb/builtin-goals"
        assert row.repo_branch == "main" and row.repo_commit == "0" * 40
        assert row.repo_lean_version == "v4.22.0"
        assert (LEAN_DIR / row.path).is_file()


def test_item_ids_are_unique_readable_snake_case() -> None:
    ids = [r.item_id for r in ROWS]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]{2,40}", i) for i in ids)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.item_id)
def test_span_is_the_literal_sorry(row: TacticRow) -> None:
    assert row.start_line == row.end_line
    line = LEAN_LINES[row.start_line - 1]
    assert line[row.start_column : row.end_column] == "sorry"
    before = line[row.start_column - 1] if row.start_column else " "
    after = line[row.end_column] if row.end_column < len(line) else " "
    assert not (before.isalnum() or before in "_.'") and not (after.isalnum() or after in "_'")
    # The sorry sits in the declaration named like the item, after its block.
    decl_line = next(n for n in range(row.start_line - 1, -1, -1) if LEAN_LINES[n].startswith("theorem "))
    assert LEAN_LINES[decl_line].split()[1] == row.item_id


def test_make_index_reproduces_the_committed_index_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "index.jsonl"
    assert make_index.main(["--out", str(out)]) == 0
    assert out.read_bytes() == INDEX.read_bytes()
    # And as the script a person runs, without the package on the path.
    proc = subprocess.run(
        [sys.executable, str(MAKE_INDEX), "--check"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_make_index_check_notices_a_moved_sorry(tmp_path: Path) -> None:
    lean = tmp_path / "BuiltinGoals.lean"
    lean.write_text(LEAN_FILE.read_text(encoding="utf-8").replace("set_option", "\nset_option", 1), "utf-8")
    out = tmp_path / "index.jsonl"
    out.write_bytes(INDEX.read_bytes())
    assert make_index.main(["--lean", str(lean), "--out", str(out), "--check"]) == 1
    assert make_index.main(["--lean", str(lean), "--out", str(out)]) == 0
    moved = [r["start_line"] for r in map(json.loads, out.read_text("utf-8").splitlines())]
    assert moved == [r.start_line + 1 for r in ROWS]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.replace("theorem nat_zero_add ", "theorem nat_zero_add' ", 1), "must be named"),
        (
            lambda s: s.replace("0 + n = n := by\n  sorry", "0 + n = n := by\n  sorry\n  sorry", 1),
            "exactly one sorry",
        ),
        (
            lambda s: s.replace("id: nat_zero_add\n", "id: nat_add_zero\n", 1).replace(
                "theorem nat_zero_add ", "theorem nat_add_zero ", 1
            ),
            "already used",
        ),
        (lambda s: s.replace("tags: nat, arith\n", "tags: nat, arithmetic\n", 1), "tags must be"),
        (lambda s: s.replace("⊢ 0 + n = n\n", "0 + n = n\n", 1), "exactly one target"),
    ],
    ids=["decl-name", "two-sorries", "duplicate-id", "unknown-tag", "no-target"],
)
def test_make_index_refuses_a_broken_source(edit: Callable[[str], str], message: str) -> None:
    text = edit(LEAN_FILE.read_text(encoding="utf-8"))
    with pytest.raises(make_index.IndexSourceError, match=message):
        make_index.parse_goals(text)


# --- tags ------------------------------------------------------------------------------------


def test_every_tag_family_is_present() -> None:
    counts = Counter(t for r in ROWS for t in r.tags)
    for tag in REQUIRED_TAGS:
        assert counts[tag] >= 3, f"tag {tag!r} has only {counts[tag]} goals"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.item_id)
def test_symbol_tags_match_the_goal_text(row: TacticRow) -> None:
    text = row.goal_text
    assert ("instance" in row.tags) == ("inst✝" in text)
    assert ("exists" in row.tags) == ("∃" in text)
    assert ("forall" in row.tags) == ("∀" in text)
    assert ("iff" in row.tags) == ("↔" in text)
    assert ("neg" in row.tags) == ("¬" in text or "≠" in text)
    if re.search(r"\bNat\b", text):
        assert "nat" in row.tags
    if re.search(r"\bInt\b", text):
        assert "int" in row.tags
    if "hyps" in row.tags:
        assert sum(1 for line in text.split("\n") if re.match(r"h\S* : ", line)) >= 2


# --- the goals are what Lean prints for their declarations ------------------------------------


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _declaration(item_id: str) -> str:
    text = "\n".join(LEAN_LINES)
    start = text.index(f"theorem {item_id} ")
    end = text.index(":= by", start)
    return " ".join(text[start + len(f"theorem {item_id} ") : end].split())


def _split_binders(signature: str) -> tuple[list[str], str]:
    """`(a b : Nat) [C α] : stmt` -> (["(a b : Nat)", "[C α]"], "stmt")."""
    binders: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(signature):
        if ch in "([{":
            if depth == 0:
                start = i
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                binders.append(signature[start : i + 1])
        elif depth == 0 and signature.startswith(": ", i):
            return binders, signature[i + 2 :].strip()
    raise AssertionError(f"no statement in {signature!r}")


def expected_goal(item_id: str) -> str:
    """Lean's goal display for our declarations, spelled out for the shapes this file uses.

    Binders become hypotheses in order; anonymous instance binders are `inst✝`, with superscripts
    counting down to the last one; `Type _` is the first universe parameter `u_1`; consecutive
    hypotheses of the same type share a line; `∃ x : T, p` is shown as `∃ x, p`.
    """
    binders, statement = _split_binders(_declaration(item_id))
    n_inst = sum(1 for b in binders if b.startswith("["))
    hyps: list[tuple[list[str], str]] = []
    for b in binders:
        inner = b[1:-1]
        if b.startswith("["):
            n_inst -= 1
            names, typ = [f"inst✝{str(n_inst).translate(_SUPERSCRIPT) if n_inst else ''}"], inner
        else:
            left, typ = inner.split(" : ", 1)
            names = left.split()
        typ = typ.replace("Type _", "Type u_1")
        if hyps and hyps[-1][1] == typ and not b.startswith("["):
            hyps[-1][0].extend(names)
        else:
            hyps.append((names, typ))
    target = re.sub(r"∃ (\w+) : [^,]+,", r"∃ \1,", statement)
    return "\n".join([*(f"{' '.join(n)} : {t}" for n, t in hyps), f"⊢ {target}"])


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.item_id)
def test_goal_text_agrees_with_its_declaration(row: TacticRow) -> None:
    assert row.goal_text == expected_goal(row.item_id)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.item_id)
def test_goal_text_has_the_shape_of_a_single_lean_goal(row: TacticRow) -> None:
    lines = row.goal_text.split("\n")
    assert lines[-1].startswith("⊢ ") and sum(ln.startswith("⊢") for ln in lines) == 1
    assert not any(ln.startswith("case ") for ln in lines)  # one goal, no case tags
    for line in lines[:-1]:
        assert re.fullmatch(r"[^\s:]+(?: [^\s:]+)* : \S.*", line), line
    assert all(len(ln) <= 100 for ln in lines)  # no wrapping to reproduce


# --- the mock baseline on these goals ------------------------------------------------------------


@pytest.mark.parametrize("goal", GOALS, ids=lambda g: g.item_id)
def test_baseline_proposes_something_sensible_for_every_goal(goal: Any) -> None:
    cands = candidate_tactics(goal.goal_text)
    assert cands and all(c.strip() and "✝" not in c and "sorry" not in c for c in cands)
    sensible = set(goal.sensible)
    assert sensible, "every goal lists the tactics a Lean user would accept as a next step"
    assert sensible & set(cands), f"none of {cands} is among {sorted(sensible)}"


def test_baseline_is_not_one_constant_answer_over_seeds_0_to_7() -> None:
    per_seed: list[set[str]] = []
    for seed in range(8):
        answers = {
            read_tactic(mock_tactic_answer(r.goal_text, attempt_seed(seed, r.item_id, 0))).tactic
            for r in ROWS
        }
        per_seed.append(answers)
        assert len(answers) >= 10, f"seed {seed}: only {answers}"
    # Across seeds the same goal gets different tactics too, where more than one fits.
    varied = sum(
        len({read_tactic(mock_tactic_answer(r.goal_text, s)).tactic for s in range(8)}) > 1
        for r in ROWS
        if len(candidate_tactics(r.goal_text)) > 1
    )
    assert varied >= len(ROWS) // 2


def test_baseline_answers_read_as_valid_tactics() -> None:
    for row in ROWS:
        for seed in range(8):
            answer = read_tactic(mock_tactic_answer(row.goal_text, seed))
            assert answer.valid and not answer.contains_sorry, (row.item_id, seed, answer)
            assert answer.tactic in candidate_tactics(row.goal_text)
