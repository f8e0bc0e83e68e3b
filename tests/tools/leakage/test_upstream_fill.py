"""Was a sorry filled upstream, and when: real git repositories built commit by commit in tmp
dirs (lines moved, a file renamed, a sorry filled, a declaration deleted, a file deleted), read
by the code under test through git itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.tactic.lean.history import RepoHistory
from pytest_lsrb.tactic.lean.upstream import Fate, sorry_fate
from pytest_lsrb.tools.leakage import declaration_groups, leakage_report, row_fates

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not on PATH")
REMOTE = "https://github.com/acme/goals"

BASIC = """\
import Mathlib

theorem fill_me (n : Nat) : n + 0 = n := by
  sorry

theorem two_holes (a b : Nat) : a + b = b + a ∧ a * 1 = a := by
  constructor
  · sorry
  · sorry

-- sorry in a comment is no hole
theorem stays_open : True := by
  sorry

theorem goes_away : 1 = 1 := by
  sorry

example : 2 = 2 := by
  sorry
"""


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.day = 0
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        date = f"2025-01-{self.day + 1:02d}T12:00:00+00:00"  # commit k is dated 2025-01-(k+1)
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@example.org",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@example.org",
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
        }
        out = subprocess.run([GIT or "git", *args], cwd=self.root, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        for name, text in files.items():
            path = self.root / name
            if text is None:
                self.git("rm", "-q", "--", name)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                self.git("add", "--", name)
        self.git("commit", "-q", "-m", message)
        self.day += 1
        return self.git("rev-parse", "HEAD")

    def move(self, old: str, new: str) -> str:
        self.git("mv", "--", old, new)
        self.git("commit", "-q", "-m", f"move {old}")
        self.day += 1
        return self.git("rev-parse", "HEAD")


def line_of(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """(1-based line, column) of the nth `sorry` after the line holding `needle`."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if needle in line)
    found = [(i + 1, line.index("sorry")) for i, line in enumerate(lines[start:], start) if "sorry" in line]
    return found[nth]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """c0: the rows' commit. c1: lines above move everything down and a comment says sorry.
    c2: Goals/Basic.lean renamed to Goals/Core.lean. c3: fill_me filled, one of two_holes' two
    filled. c4: goes_away deleted, the example filled. c5: Goals/Old.lean deleted."""
    root = tmp_path_factory.mktemp("upstream") / "github.com__acme__goals"
    repo = Repo(root)
    old = "theorem old_one : True := by\n  sorry\n"
    c0 = repo.commit("start", {"Goals/Basic.lean": BASIC, "Goals/Old.lean": old})
    moved = BASIC.replace("import Mathlib\n", "import Mathlib\n\n/-! A header. -- sorry? no -/\n\n-- sorry\n")
    c1 = repo.commit("header", {"Goals/Basic.lean": moved})
    c2 = repo.move("Goals/Basic.lean", "Goals/Core.lean")
    filled = moved.replace("n + 0 = n := by\n  sorry", "n + 0 = n := by\n  simp").replace(
        "  · sorry\n  · sorry", "  · omega\n  · sorry"
    )
    c3 = repo.commit("fill", {"Goals/Core.lean": filled})
    gone = filled.replace("theorem goes_away : 1 = 1 := by\n  sorry\n\n", "").replace(
        "example : 2 = 2 := by\n  sorry", "example : 2 = 2 := by\n  rfl"
    )
    c4 = repo.commit("tidy", {"Goals/Core.lean": gone})
    c5 = repo.commit("drop old", {"Goals/Old.lean": None})
    repo.git("checkout", "-q", "-b", "side", c0)  # a branch the clone's HEAD does not contain
    side = repo.commit("elsewhere", {"Goals/Side.lean": old})
    repo.git("checkout", "-q", "main")
    return SimpleNamespace(root=root, c=[c0, c1, c2, c3, c4, c5], old=old, side=side)


def fate(world: SimpleNamespace, needle: str, nth: int = 0, path: str = "Goals/Basic.lean") -> Fate:
    text = BASIC if path == "Goals/Basic.lean" else world.old
    line, col = line_of(text, needle, nth)
    return sorry_fate(RepoHistory(world.root), world.c[0], path, line, col)


def test_a_filled_sorry_is_found_through_moved_lines_and_a_renamed_file(world: SimpleNamespace) -> None:
    got = fate(world, "theorem fill_me")
    assert (got.status, got.commit, got.date, got.path) == (
        "filled",
        world.c[3],
        "2025-01-04T12:00:00+00:00",
        "Goals/Core.lean",
    )
    assert (got.declaration, got.holes_before, got.holes_after) == ("fill_me", 1, 0)


def test_one_of_two_sorries_filled_counts_and_says_how_many_it_held(world: SimpleNamespace) -> None:
    for nth in (0, 1):
        got = fate(world, "theorem two_holes", nth)
        assert (got.status, got.commit, got.holes_before, got.holes_after) == ("filled", world.c[3], 2, 1)


def test_open_deleted_declaration_example_and_deleted_file(world: SimpleNamespace) -> None:
    still = fate(world, "theorem stays_open")
    assert (still.status, still.commit, still.holes_after) == ("open", world.c[5], 1)
    gone = fate(world, "theorem goes_away")
    assert (gone.status, gone.commit, gone.date) == (
        "declaration_gone",
        world.c[4],
        "2025-01-05T12:00:00+00:00",
    )
    example = fate(world, "example : 2 = 2")
    assert (example.status, example.commit, example.declaration) == (
        "filled",
        world.c[4],
        "example : 2 = 2 := by",
    )
    dropped = fate(world, "theorem old_one", path="Goals/Old.lean")
    assert (dropped.status, dropped.commit) == ("file_gone", world.c[5])


def test_what_cannot_be_followed_is_unchecked_with_the_reason(world: SimpleNamespace) -> None:
    history = RepoHistory(world.root)
    cases = [
        (("ab" * 20, "Goals/Basic.lean", 4, 2), "commit_missing", "has no commit"),
        ((world.c[0], "Goals/Basic.lean", 3, 0), "no_sorry_there", "holds no sorry"),
        ((world.c[0], "Goals/Nope.lean", 4, 2), "no_file", "has no file"),
        ((world.side, "Goals/Side.lean", 2, 2), "not_on_head", "not an ancestor"),
        # values that would reach git as options, or leave the repository, are refused first
        (("--output=/tmp/x", "Goals/Basic.lean", 4, 2), "refused", "refused"),
        ((world.c[0], "--exec=touch x", 4, 2), "refused", "refused"),
        ((world.c[0], "../x", 4, 2), "refused", "refused"),
    ]
    for args, reason, words in cases:
        got = sorry_fate(history, *args)
        assert (got.status, got.reason) == ("unchecked", reason) and words in got.detail, args


def _row(item_id: str, needle: str, nth: int = 0, **extra: object) -> dict[str, object]:
    line, col = line_of(BASIC, needle, nth)
    return {
        "item_id": item_id,
        "repo_remote": REMOTE,
        "repo_branch": "main",
        "repo_lean_version": "v4.22.0",
        "path": "Goals/Basic.lean",
        "start_line": line,
        "start_column": col,
        "end_line": line,
        "end_column": col + 5,
        "goal_text": "⊢ True",
        **extra,
    }


def test_lsrb_split_upstream_reports_fills_dates_cutoff_and_inclusion(
    world: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        _row("fill", "theorem fill_me", repo_commit=world.c[0], inclusion_date="2025-01-02T00:00:00Z"),
        _row("late", "theorem two_holes", repo_commit=world.c[0], inclusion_date="2025-02-01T00:00:00Z"),
        _row("open", "theorem stays_open", repo_commit=world.c[0]),
        _row("gone", "theorem goes_away", repo_commit=world.c[0]),
        {
            **_row("other", "theorem fill_me", repo_commit="1" * 40),
            "repo_remote": "https://github.com/acme/x",
        },
    ]
    index = tmp_path / "index.jsonl"
    index.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "split"
    argv = ["split", str(index), "--out", str(out), "--splits", "all=1", "--cutoff", "2025-01-04T18:00:00Z"]
    assert lsrb([*argv, "--upstream", str(world.root.parent)]) == 0
    up = json.loads((out / "contamination_report.json").read_text("utf-8"))["answers_upstream"]
    assert up["counts"] == {"filled": 2, "declaration_gone": 1, "file_gone": 0, "open": 1, "unchecked": 1}
    assert up["items"]["fill"]["commit"] == world.c[3] and up["items"]["fill"]["date"].startswith(
        "2025-01-04"
    )
    assert up["filled_before_cutoff"]["item_ids"] == ["fill", "late"]
    assert up["filled_after_inclusion"]["item_ids"] == ["fill"]
    assert up["filled_before_inclusion"]["item_ids"] == ["late"]
    assert up["unchecked_reasons"] == {"no_clone": 1}
    printed = capsys.readouterr().out
    assert "sorries followed upstream: filled 2, declaration_gone 1" in printed
    assert "answers public before the cutoff" in printed
    # An earlier cutoff: the answers landed after it.
    assert lsrb([*argv[:-1], "2025-01-03", "--upstream", str(world.root.parent)]) == 0
    up = json.loads((out / "contamination_report.json").read_text("utf-8"))["answers_upstream"]
    assert up["filled_before_cutoff"]["count"] == 0
    assert lsrb([*argv, "--upstream", str(tmp_path / "missing")]) == 2
    assert "is not a folder of repository clones" in capsys.readouterr().err


def test_sorries_of_one_declaration_in_two_splits_are_reported(world: SimpleNamespace) -> None:
    rows = [
        SimpleNamespace(**_row(i, "theorem two_holes", nth, repo_commit=world.c[0]))
        for i, nth in (("h0", 0), ("h1", 1))
    ] + [SimpleNamespace(**_row("f", "theorem fill_me", repo_commit=world.c[0]))]
    fates = row_fates(rows, world.root.parent)
    cutoff = datetime(2026, 1, 1, tzinfo=timezone.utc)
    apart = leakage_report(rows, {"dev": ["h0", "f"], "test": ["h1"]}, fates, cutoff, world.root.parent)
    shared = apart["shared_declarations"]
    assert (shared["groups"], shared["item_ids"]) == (1, ["h0", "h1"])
    assert shared["entries"][0]["declaration"] == {
        "repo": "github.com/acme/goals",
        "path": "Goals/Basic.lean",
        "name": "two_holes",
    }
    together = leakage_report(rows, {"dev": ["h0", "h1"], "test": ["f"]}, fates, cutoff, world.root.parent)
    assert together["shared_declarations"]["groups"] == 0


def test_group_by_declaration_keeps_a_declaration_s_sorries_together(
    world: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        _row("h0", "theorem two_holes", 0, repo_commit=world.c[0]),
        _row("h1", "theorem two_holes", 1, repo_commit=world.c[0]),
        _row("f", "theorem fill_me", repo_commit=world.c[0]),
        _row("o", "theorem stays_open", repo_commit=world.c[0]),
    ]
    index = tmp_path / "index.jsonl"
    index.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    base = ["split", str(index), "--splits", "a=0.5,b=0.5", "--group-by", "declaration"]
    apart = 0
    for seed in range(8):
        out = tmp_path / f"s{seed}"
        assert (
            lsrb([*base, "--out", str(out), "--seed", str(seed), "--upstream", str(world.root.parent)]) == 0
        )
        manifest = json.loads((out / "split_manifest.json").read_text("utf-8"))
        split_of = {i: name for name, split in manifest["splits"].items() for i in split["items"]}
        assert split_of["h0"] == split_of["h1"]
        assert manifest["config"]["group_by"] == "declaration"
        report = json.loads((out / "contamination_report.json").read_text("utf-8"))
        assert report["shared_declarations"]["groups"] == 0
        apart += split_of["f"] != split_of["h0"]
    assert apart > 0  # finer than --group-by file, which keeps the whole file in one split
    capsys.readouterr()
    assert lsrb([*base, "--out", str(tmp_path / "x")]) == 2
    assert "--group-by declaration needs --upstream CLONES" in capsys.readouterr().err


def test_a_file_with_an_unread_row_stays_whole() -> None:
    def row(item_id: str, path: str) -> SimpleNamespace:
        return SimpleNamespace(item_id=item_id, repo_remote=REMOTE, path=path)

    rows = [row("a", "A.lean"), row("b", "A.lean"), row("c", "B.lean"), row("d", "B.lean")]
    fates = {
        "a": Fate("open", "", declaration="x"),
        "b": Fate("unchecked", "", reason="commit_missing"),
        "c": Fate("open", "", declaration="y"),
        "d": Fate("filled", "", declaration="z"),
    }
    groups = declaration_groups(rows, fates)
    assert groups["a"] == groups["b"] == "file\x1fgithub.com/acme/goals\x1fA.lean"
    assert groups["c"] != groups["d"] and groups["c"].startswith("declaration\x1f")
