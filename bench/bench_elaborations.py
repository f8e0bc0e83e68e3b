"""Lean file elaborations per attempt, screened and not (issue #41 item 5).

    python bench/bench_elaborations.py [--items 40] [--samples 8] [--closing 0.1] [--sorry-like 0.0]

A counting stand-in toolchain: the stand-in REPL of tests/fakes/stand_in_repl.py (the real REPL's
request and reply shapes, decided by rules) logs every request; a *file elaboration* is a `cmd`
request that holds the checked declaration (the unpatched file or control script once per item,
then each answer's patched file). The synthetic verifier over `replay_method = "repl"` checks
k samples per item, `--closing` of them closing (a tactic the stand-in closes with), `--sorry-like` of
them sorry-equivalents (`stop`, `apply?`, `native_decide`: they "close" on the proof state and
fail the acceptance rule on the file), the rest failing in the ways answers fail (goals left, an
unknown name, a type mismatch, a parse error). Every sample's
answer is distinct, so the verdict cache (identical answers) saves nothing here.

Prints, for `--lsrb-screen off` (every answer compiles its file) and `on` (only answers that
close on the sorry's proof state do): file elaborations per attempt, with and without the
unpatched file's, `tactic` requests per attempt, and whether the two runs' verdicts are equal.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAND_IN = REPO / "tests" / "fakes" / "stand_in_repl.py"
sys.path.insert(0, str(REPO))

from pytest_lsrb.engine.verifier import VerifierConfig  # noqa: E402
from pytest_lsrb.tactic.rows import TacticRow  # noqa: E402
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier  # noqa: E402

CLOSING = ["exact ⟨hp, hq⟩", "constructor <;> assumption", "trivial", "norm_num", "exact hp"]
FAILING = [
    "constructor",  # goals left
    "simp only [and_comm]",  # goals left
    "exact no_such_lemma_{i}",  # unknown identifier
    "exact hq",  # type mismatch
    "exat {i}",  # parse error
]
# close on the sorry's proof state, fail the acceptance rule on the file (--sorry-like)
SORRY_LIKE = ["stop", "apply?", "native_decide"]


def item_row(i: int) -> TacticRow:
    return TacticRow.model_validate(
        {
            "item_id": f"b{i}",
            "repo_remote": "https://github.com/example/bench",
            "repo_branch": "main",
            "repo_commit": "a" * 40,
            "repo_lean_version": "v4.22.0",
            "path": "Bench.lean",
            "start_line": 1,
            "start_column": 0,
            "end_line": 1,
            "end_column": 5,
            # a distinct goal per item: each item has its own control script
            "goal_text": f"p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q ∧ {i} = {i}",
        }
    )


def answers(items: int, samples: int, closing: float, sorry_like: float, seed: int) -> list[list[str]]:
    """k distinct answers per item: closing with probability `closing`, a sorry-equivalent with
    probability `sorry_like`, else an ordinary failure."""
    rng = random.Random(seed)
    out = []
    for i in range(items):
        row = []
        for k in range(samples):
            draw = rng.random()
            pool = CLOSING if draw < closing else SORRY_LIKE if draw < closing + sorry_like else FAILING
            base = rng.choice(pool).format(i=f"{i}_{k}")
            row.append(f"{base}\n-- sample {k}")  # a comment keeps the answers distinct
        out.append(row)
    return out


def run(
    screen: bool, plan: list[list[str]], log: Path, folder: Path
) -> tuple[list[tuple[object, ...]], dict[str, int]]:
    profile = folder / f"repl-{screen}.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{sys.executable}", "{STAND_IN}"]\n',
        encoding="utf-8",
    )
    log.unlink(missing_ok=True)
    v = SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profile), "screen": screen})
    )
    verdicts = []
    try:
        for i, row_answers in enumerate(plan):
            row = item_row(i)
            for answer in row_answers:
                r = v.check(row, answer, v.profile_for(row))
                verdicts.append((r.attempted, r.success, r.outcome, r.subkind))
    finally:
        v.close()
    requests = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    counts = {
        "files": sum(1 for r in requests if "lsrb_goal" in r.get("cmd", "")),
        "tactics": sum(1 for r in requests if "tactic" in r),
    }
    return verdicts, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--closing", type=float, default=0.1)
    parser.add_argument("--sorry-like", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    plan = answers(args.items, args.samples, args.closing, args.sorry_like, args.seed)
    attempts = args.items * args.samples
    closers = sum(1 for row in plan for a in row if a.split("\n")[0] in CLOSING)
    with tempfile.TemporaryDirectory(prefix="lsrb-bench-elab-") as tmp:
        folder = Path(tmp)
        log = folder / "requests.log"
        os.environ["STAND_IN_LOG"] = str(log)
        results = {screen: run(screen, plan, log, folder) for screen in (False, True)}
    tricks = sum(1 for row in plan for a in row if a.split("\n")[0] in SORRY_LIKE)
    print(
        f"{args.items} items x k={args.samples} samples = {attempts} attempts; {closers} closing answers, "
        f"{tricks} sorry-equivalents"
    )
    for screen, (_, counts) in results.items():
        files = counts["files"]
        print(
            f"screen {'on ' if screen else 'off'}: file elaborations per attempt {files / attempts:.3f} "
            f"(answers' files only {(files - args.items) / attempts:.3f}), "
            f"tactic requests per attempt {counts['tactics'] / attempts:.3f}"
        )
    same = results[False][0] == results[True][0]
    print(f"verdicts equal: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
