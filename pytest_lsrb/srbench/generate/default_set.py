"""The built-in llm_srbench problem set: a few problems from each family and every domain,
generated deterministically by the project's own generators (rebuild: `python -m
pytest_lsrb.srbench.generate.default_set FeynmanEquations.csv suites/llm_srbench/index.jsonl`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from pytest_lsrb.srbench.data.loaders import write_problem_files
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, Problem
from pytest_lsrb.srbench.generate import filter_settings
from pytest_lsrb.srbench.generate.manifest import write_manifest
from pytest_lsrb.srbench.generate.synth import generate_synth
from pytest_lsrb.srbench.generate.terms import DOMAINS
from pytest_lsrb.srbench.generate.transform import generate_transform

SEED: Final = 2025
N_TRAIN: Final = 150
N_TEST: Final = 75
N_OOD: Final = 75
PER_DOMAIN: Final = 2
# LSR-Transform problems: a square root, an inverse sine branch, a log and a difference of squares,
# all four in the full filtered set (deduplicated, not solved model-free, complexity-matched).
TRANSFORM_PROBLEMS: Final = (
    f"{GENERATED_PREFIX}I.10.7_0_0",
    f"{GENERATED_PREFIX}I.26.2_1_0",
    f"{GENERATED_PREFIX}II.11.3_0_0",
    f"{GENERATED_PREFIX}III.4.32_0_0",
)
SETTINGS: Final = {
    "set": "built-in (pytest_lsrb.srbench.generate.default_set)",
    "seed": SEED,
    "n_train": N_TRAIN,
    "n_test": N_TEST,
    "n_ood": N_OOD,
    "per_domain": PER_DOMAIN,
    "transform_problems": list(TRANSFORM_PROBLEMS),
    "feynman_table": "FeynmanEquations.csv (AI-Feynman)",
    "filters": filter_settings(),
}


def default_problems(feynman_csv: Path) -> list[Problem]:
    equations = sorted({name.removeprefix(GENERATED_PREFIX).rsplit("_", 2)[0] for name in TRANSFORM_PROBLEMS})
    # Four equations say nothing about a distribution: the complexity match is for whole sets.
    report = generate_transform(
        feynman_csv, seed=SEED, n_train=N_TRAIN, n_test=N_TEST, equations=equations, match_complexity=False
    )
    by_name = {p.name: p for p in report.problems}
    missing = [n for n in TRANSFORM_PROBLEMS if n not in by_name]
    if missing:
        raise RuntimeError(f"the transform generator no longer yields {missing}")
    problems = [by_name[n] for n in TRANSFORM_PROBLEMS]
    for domain in DOMAINS:
        problems += generate_synth(
            domain, count=PER_DOMAIN, seed=SEED, n_train=N_TRAIN, n_test=N_TEST, n_ood=N_OOD
        ).problems
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(
            "usage: python -m pytest_lsrb.srbench.generate.default_set FeynmanEquations.csv INDEX.jsonl",
            file=sys.stderr,
        )
        return 2
    problems = default_problems(Path(argv[0]))
    write_problem_files(problems, Path(argv[1]))
    write_manifest(Path(argv[1]), SETTINGS)
    print(f"wrote {len(problems)} problems to {argv[1]}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
