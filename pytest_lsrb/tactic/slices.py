"""Goal slices of goal_to_tactic_proposal_v1: `--lsrb-goal-slice` (suite.toml `goal_slice`).

A slice is part of what a run measures: it narrows the selection before seeding, sharding and
`selected_rows_hash`. `-k` then narrows the collected tests of that selection further, so the
two compose (`--lsrb-goal-slice=mathlib,hyps:>=3 -k "s0"`).

Grammar: conditions separated by `,` must all hold; `|` inside a value means any of; a leading
`!` negates a condition.

    tag:NAME[|NAME...]   the row has one of these tags
    repo:NAME[|NAME...]  the repository's name (`owner/NAME` of repo_remote; what -k matches),
                         case-insensitive
    path:GLOB            the file path matches the glob (`path:Mathlib/Algebra/*`)
    lean:VERSION         repo_lean_version: exact (`lean:v4.22.0`, `lean:v4.22.0-rc4`), a release
                         line (`lean:v4.22` matches v4.22.0, v4.22.1 and v4.22.0-rc4), or compared
                         (`lean:>=v4.20`, <, <=, >; an rc sorts before its release)
    kind:tactic|term     sorry_kind (rows without one match neither)
    hyps:N               number of hypothesis names of the (first) goal (`x y : Nat` counts 2);
                         N may be 3, =3, <3, <=3, >3 or >=3
    goals:N              number of goals (lines starting with ⊢)
    len:N                goal length in characters
    inst                 the goal has an instance hypothesis (`inst✝ : ...`)
    mathlib / core       rows from Mathlib itself (repo mathlib4) or tagged `mathlib`, and the rest
    all                  every row (the default)
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tactic.lean.goal import parse_goal
from pytest_lsrb.tactic.rows import TacticRow

RowPredicate = Callable[[TacticRow], bool]

SLICE_KEYS = ("tag", "repo", "path", "lean", "kind", "hyps", "goals", "len")
_CMP = re.compile(r"^(<=|>=|<|>|=)?(\d+)$")
_VERSION_CMP = re.compile(r"^(<=|>=|<|>)(v?\d+(?:\.\d+)*(?:-\S+)?)$")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
}


def hypothesis_count(goal_text: str) -> int:
    """Number of hypothesis names in the goal (`x y : Nat` counts 2)."""
    return len(parse_goal(goal_text, lenient=True).names)


def goal_count(goal_text: str) -> int:
    return sum(1 for line in goal_text.split("\n") if line.startswith("⊢"))


def has_instance_hypothesis(goal_text: str) -> bool:
    return any(name.startswith("inst") for name in parse_goal(goal_text, lenient=True).names)


def is_mathlib_row(row: TacticRow) -> bool:
    """Mathlib itself (the repo is mathlib/mathlib4) or a row tagged `mathlib` by its importer."""
    return row.repo_name.lower() in ("mathlib", "mathlib4") or "mathlib" in row.tags


def version_key(version: str) -> tuple[int, ...]:
    """`v4.22.0-rc4` -> (4, 22, 0, 0, 4); a release sorts after its release candidates."""
    text = version.strip().lstrip("vV")
    main, _, pre = text.partition("-")
    nums = [int(p) for p in re.findall(r"\d+", main)][:3]
    nums += [0] * (3 - len(nums))
    rc = re.search(r"\d+", pre)
    return (*nums, 0, int(rc.group()) if rc else 0) if pre else (*nums, 1, 0)


def _number_test(spec: str, key: str) -> Callable[[int], bool]:
    m = _CMP.match(spec)
    if not m:
        raise LsrbUsageError(
            f"--lsrb-goal-slice: '{key}:{spec}' needs a number with an optional <, <=, >, >= or =."
        )
    op, num = m.group(1) or "=", int(m.group(2))
    return lambda v: _OPS[op](v, num)


def _lean_test(spec: str) -> RowPredicate:
    m = _VERSION_CMP.match(spec)
    if m:
        op, bound = m.group(1), version_key(m.group(2))
        return lambda row: _OPS[op](version_key(row.repo_lean_version), bound)
    if not re.match(r"^v?\d+(?:\.\d+)*(?:-\S+)?$", spec):
        raise LsrbUsageError(
            f"--lsrb-goal-slice: 'lean:{spec}' needs a version like v4.22.0, v4.22 or >=v4.20."
        )
    want = spec.lstrip("vV")
    exact = "-" in want or want.count(".") >= 2  # v4.22.0 and v4.22.0-rc4 name one version

    def same_line(row: TacticRow) -> bool:
        have = row.repo_lean_version.strip().lstrip("vV")
        if exact or have == want:
            return have == want
        return have.startswith((want + ".", want + "-"))

    return same_line


def _any_of(value: str) -> list[str]:
    return [v.strip() for v in value.split("|") if v.strip()]


def _condition(part: str) -> RowPredicate:
    key, sep, value = part.partition(":")
    key = key.strip()
    if not sep:
        if part == "mathlib":
            return is_mathlib_row
        if part == "core":
            return lambda row: not is_mathlib_row(row)
        if part == "inst":
            return lambda row: has_instance_hypothesis(row.goal_text)
        if part == "all":
            return lambda row: True
    elif key in SLICE_KEYS and not value.strip():
        raise LsrbUsageError(f"--lsrb-goal-slice: '{part}' needs a value after '{key}:'.")
    elif key == "tag":
        tags = set(_any_of(value))
        return lambda row: not tags.isdisjoint(row.tags)
    elif key == "repo":
        repos = {v.lower() for v in _any_of(value)}
        return lambda row: row.repo_name.lower() in repos
    elif key == "path":
        globs = _any_of(value)
        return lambda row: any(fnmatch.fnmatchcase(row.path, g) for g in globs)
    elif key == "lean":
        tests = [_lean_test(v) for v in _any_of(value)]
        return lambda row: any(t(row) for t in tests)
    elif key == "kind":
        kinds = set(_any_of(value))
        bad = kinds - {"tactic", "term"}
        if bad:
            got = ", ".join(sorted(bad))
            raise LsrbUsageError(f"--lsrb-goal-slice: '{part}': sorry kinds are tactic and term (got {got}).")
        return lambda row: row.sorry_kind in kinds
    elif key in ("hyps", "goals", "len"):
        cmp = _number_test(value.strip(), key)
        measure: Callable[[str], int] = {
            "hyps": hypothesis_count,
            "goals": goal_count,
            "len": len,
        }[key]
        return lambda row: cmp(measure(row.goal_text))
    raise LsrbUsageError(
        f"--lsrb-goal-slice: unknown condition '{part}' (expected tag:, repo:, path:, lean:, kind:, "
        "hyps:, goals:, len:, inst, mathlib, core or all; see README: goal slices)."
    )


def goal_slice_predicate(goal_slice: str) -> Callable[[TacticRow], bool]:
    """The row filter for a slice expression (grammar in the module docstring)."""
    if goal_slice.strip() in ("", "all"):
        return lambda row: True
    preds: list[tuple[bool, RowPredicate]] = []
    for raw in goal_slice.split(","):
        part = raw.strip()
        if not part:
            raise LsrbUsageError(f"--lsrb-goal-slice: '{goal_slice}' has an empty condition.")
        negate = part.startswith("!")
        preds.append((negate, _condition(part[1:].strip() if negate else part)))
    return lambda row: all(neg != pred(row) for neg, pred in preds)
