"""How many SorryDB targets each repo_replay case of issue #29 (item 3) touches, before and after.

Reads the rows of a SorryDB dump (default: the shared January 2026 sample), and each row's file at
its commit from local git mirrors (`--mirrors DIR` holding `<owner>+<name>/repo` git directories;
rows whose repository or commit is not there are counted as unread), and classifies the target
with the verifier's own code (lean/patch.py, lean/declaration.py, lean/modules.py):

- names_sorried: the target's text names a declaration of its file that is proved by sorry
  (before: every answer `sorry_axiom`, the row can never count; after: closed/inherited_sorry);
- may_use_sorried: the file has a declaration proved by sorry before the target (a correct
  answer that uses it was `sorry_axiom`; after: inherited_sorry);
- primed_name: the target's name ends in `'` (before: Lean's report `'t'' depends on ...` was
  not read, `axioms_unreported` for every answer; after: read);
- module_file: the file starts with `module` (before: `#print axioms` refused in the baseline,
  `baseline_failed` for every answer on affected Lean versions; after: asked from a scratch import);
- open_classical: the file opens `Classical` (on Lean versions that print `choice`, a classical
  answer was `custom_axiom`; after: mapped);
- no_declaration: no declaration keyword precedes the sorry (`skipped_unspliceable`, unchanged).

Imported lemmas proved by sorry need the repository built: they are not counted here.

Then, from the dump alone, synthetic mode's reach (item 6): how many goals restate (the most
it can judge: Lean may still fail to reconstruct some), how many have a keyword binder (`this`,
quoted now), and how many the `auto` header put under the core header before and now.

    python bench/count_replay_cases.py [--dump FILE] [--mirrors /work/.mirror]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_lsrb.tactic.lean.acceptance import parse_axiom_report  # noqa: E402
from pytest_lsrb.tactic.lean.declaration import declarations, find_declaration, referenced_names  # noqa: E402
from pytest_lsrb.tactic.lean.goal import Unrestatable, parse_goal, restate  # noqa: E402
from pytest_lsrb.tactic.lean.keywords import LEAN_KEYWORDS  # noqa: E402
from pytest_lsrb.tactic.lean.modules import is_module, split_module  # noqa: E402
from pytest_lsrb.tactic.lean.patch import make_baseline  # noqa: E402
from pytest_lsrb.tactic.lean.script import choose_header  # noqa: E402
from pytest_lsrb.tactic.lean.splice import sorry_holes  # noqa: E402

DEFAULT_DUMP = ROOT.parent / "shared" / "data" / "sorrydb" / "SorryDB_2601_sample.json"
# The report regex before this change (commit 8d1d4ca): a name could not hold a quote.
_BEFORE_REPORT = re.compile(
    r"'(?P<name>[^']+)'\s+(?:depends on axioms:\s*\[(?P<axioms>[^\]]*)\]|does not depend on any axioms)"
)
_OPEN_CLASSICAL = re.compile(r"^open\b(?!.*\bin\s*$).*\bClassical\b", re.M)
# The `auto` header before this change: Mathlib only for mathlib4 itself or Mathlib notation.
_BEFORE_HINTS = re.compile(
    r"[ℕℤℚℝℂ∑∏∫‖]|\b(?:Finset|Real|Complex|Matrix|Polynomial|MeasureTheory|Filter|Module|"
    r"Ideal|Subgroup|Submodule|IsOpen|Continuous|Differentiable|Measure)\b"
)
CASES = (
    "names_sorried",
    "may_use_sorried",
    "primed_name",
    "module_file",
    "module_asked",
    "open_classical",
    "no_declaration",
)


def read_at_commit(mirrors: Path, remote: str, commit: str, path: str) -> str | None:
    slug = remote.rstrip("/").removesuffix(".git").split("github.com/")[-1].replace("/", "+")
    git_dir = mirrors / slug / "repo"
    if not git_dir.is_dir():
        return None
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def classify(text: str, line: int) -> set[str]:
    """The cases of item 3 that the target holding the sorry at `line` falls under."""
    cases: set[str] = set()
    if is_module(text):
        cases.add("module_file")
        baseline = make_baseline(text, (line, 0), (line, 0), stand_ins=False)
        split = split_module(baseline.text) if baseline is not None else None
        if split is not None:  # after: the copy the verifier checks has a file to ask from
            cases.add("module_asked")
    if _OPEN_CLASSICAL.search(text):
        cases.add("open_classical")
    decl = find_declaration(text, line)
    if decl is None:
        return cases | {"no_declaration"}
    name = decl.name or ""
    if name.endswith("'"):
        report = f"'{name}' does not depend on any axioms"
        before = _BEFORE_REPORT.search(report)
        if before is None or before.group("name") != name:
            cases.add("primed_name")
        assert parse_axiom_report(report) == (name, ())  # read now
    sorried = {
        key.split(".")[-1]
        for key, other in declarations(text)
        if other.first_line != decl.first_line
        and other.last_line < decl.first_line
        and sorry_holes(text, other.first_line, other.last_line)
    }
    if sorried:
        cases.add("may_use_sorried")
        lines = text.split("\n")[decl.first_line - 1 : decl.last_line]
        names = referenced_names("\n".join(lines), exclude=frozenset({name}), limit=10_000)
        if {n.split(".")[-1] for n in names} & sorried:
            cases.add("names_sorried")
    return cases


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    rows = json.loads(args.dump.read_text(encoding="utf-8"))["sorries"]
    counts: Counter[str] = Counter()
    read = 0
    repos: set[str] = set()
    for row in rows:
        repo, loc = row["repo"], row["location"]
        text = read_at_commit(args.mirrors, repo["remote"], repo["commit"], loc["path"])
        if text is None:
            continue
        read += 1
        repos.add(repo["remote"])
        counts.update(classify(text, int(loc["start_line"])))
    print(f"{args.dump.name}: {len(rows)} rows; read at their commits: {read} ({len(repos)} repositories)")
    print(f"{'case':<18}{'rows':>6}  before -> after")
    effect = {
        "names_sorried": "sorry_axiom for every answer -> closed/inherited_sorry",
        "may_use_sorried": "sorry_axiom if the answer uses it -> closed/inherited_sorry",
        "primed_name": "axioms_unreported for every answer -> judged",
        "module_file": "baseline_failed (affected Lean versions) -> judged via a scratch import",
        "module_asked": "of those, checked copies with a probe to ask from the import (after)",
        "open_classical": "custom_axiom for classical answers (short-name Leans) -> mapped",
        "no_declaration": "skipped_unspliceable -> unchanged",
    }
    for case in CASES:
        print(f"{case:<18}{counts[case]:>6}  {effect[case]}")
    never = counts["names_sorried"] + counts["primed_name"] + counts["module_file"]
    print(f"rows no answer could close or have judged before (names_sorried + primed + module): {never}")
    print(synthetic_reach(rows))
    return 0


def synthetic_reach(rows: list[dict[str, object]]) -> str:
    restated = keyword = core_before = core_after = 0
    for row in rows:
        goal = str(row["debug_info"]["goal"])  # type: ignore[index]
        remote = str(row["repo"]["remote"])  # type: ignore[index]
        if isinstance(restate(goal), Unrestatable):
            continue
        restated += 1
        keyword += any(n in LEAN_KEYWORDS for h in parse_goal(goal).hypotheses for n in h.names)
        core_before += not ("mathlib" in remote.lower() or _BEFORE_HINTS.search(goal))
        core_after += choose_header("auto", goal, remote) == "core"
    return (
        f"synthetic: at most {restated} of {len(rows)} judged ({len(rows) - restated} not restatable); "
        f"keyword binders quoted now: {keyword}; core header before {core_before}, now {core_after}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
