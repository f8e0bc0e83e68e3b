"""Problem generators (the project's own): LSR-Transform from an AI-Feynman table and
LSR-Synth-style problems for chemistry, biology, physics and material science.

`generate_problems(out_dir, ...)` writes an index (`index.jsonl` + `data/<name>.npz`) that
`--lsrb-index` and `srbench.data.loaders.load_problems` read, and returns a report with the counts.
`add_generate_arguments(parser)` / `run_generate(args)` wire it into a command line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_lsrb.core.errors import LsrbUsageError

if TYPE_CHECKING:  # the command line builds its parser from this module: keep it light to import
    from pytest_lsrb.srbench.data.problem import Problem

FAMILIES = ("transform", "synth", "feynman")
DEFAULT_FAMILIES = ("transform", "synth")


def generate_problems(
    out_dir: Path,
    *,
    families: Sequence[str] = DEFAULT_FAMILIES,
    feynman_csv: Path | None = None,
    seed: int = 0,
    n_train: int = 500,
    n_test: int = 250,
    n_ood: int = 250,
    domains: Sequence[str] | None = None,
    synth_counts: dict[str, int] | None = None,
    equations: Sequence[str] | None = None,
    solve_budget_s: float = 10.0,
    cache_path: Path | None = None,
    dedupe: bool = True,
    drop_model_free: bool = True,
    match_complexity: bool | None = None,
) -> dict[str, Any]:
    """Generate, write `out_dir/index.jsonl` + `out_dir/data/*.npz`, return the report."""
    from pytest_lsrb.srbench.generate.synth import generate_all_synth
    from pytest_lsrb.srbench.generate.terms import DOMAINS
    from pytest_lsrb.srbench.generate.transform import generate_transform

    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise LsrbUsageError(
            f"unknown problem family '{sorted(unknown)[0]}' (expected transform, synth or feynman)."
        )
    bad_domains = set(domains or []) - set(DOMAINS)
    if bad_domains:
        raise LsrbUsageError(f"unknown domain '{sorted(bad_domains)[0]}' (expected {', '.join(DOMAINS)}).")
    problems: list[Problem] = []
    report: dict[str, Any] = {"seed": seed}
    if "transform" in families:
        if feynman_csv is None:
            raise LsrbUsageError(
                "the transform family needs the AI-Feynman equation table (FeynmanEquations.csv)."
            )
        tr = generate_transform(
            Path(feynman_csv),
            seed=seed,
            n_train=n_train,
            n_test=n_test,
            solve_budget_s=solve_budget_s,
            equations=equations,
            cache_path=cache_path,
            dedupe=dedupe,
            drop_model_free=drop_model_free,
            match_complexity=match_complexity,
        )
        problems += tr.problems
        report["lsr_transform"] = tr.summary()
    if "feynman" in families:
        if feynman_csv is None:
            raise LsrbUsageError(
                "the feynman family needs the AI-Feynman equation table (FeynmanEquations.csv)."
            )
        from pytest_lsrb.srbench.generate.feynman_set import generate_feynman

        originals = generate_feynman(
            Path(feynman_csv), seed=seed, n_train=n_train, n_test=n_test, equations=equations
        )
        problems += originals
        report["feynman"] = {"problems": len(originals)}
    if "synth" in families:
        synth = generate_all_synth(
            domains, seed=seed, counts=synth_counts, n_train=n_train, n_test=n_test, n_ood=n_ood
        )
        for domain, rep in synth.items():
            problems += rep.problems
            report[f"lsr_synth_{domain}"] = rep.summary()
    out_dir = Path(out_dir)
    from pytest_lsrb.srbench.data.loaders import write_problem_files

    index = write_problem_files(problems, out_dir / "index.jsonl")
    from pytest_lsrb.srbench.generate.manifest import write_manifest

    settings = {
        "families": list(families),
        "seed": seed,
        "n_train": n_train,
        "n_test": n_test,
        "n_ood": n_ood,
        "domains": list(domains) if domains else None,
        "synth_counts": synth_counts,
        "equations": list(equations) if equations else None,
        "solve_budget_s": solve_budget_s,
        "feynman_table": Path(feynman_csv).name if feynman_csv else None,
        "transform_filters_on": {
            "dedupe": dedupe,
            "drop_model_free": drop_model_free,
            "match_complexity": equations is None if match_complexity is None else match_complexity,
        },
        "filters": filter_settings(),
    }
    report["manifest"] = str(write_manifest(index, settings))
    report["problems"] = len(problems)
    report["index"] = str(index)
    return report


def filter_settings() -> dict[str, Any]:
    """The generators' filters and checks with their thresholds, for manifest.json: what decides
    which candidates a set keeps."""
    from pytest_lsrb.srbench.generate import complexity, model_free, solvability, sweep, symmetry, synth

    return {
        "lsr_transform": {
            "dedupe": "one pivot per orbit of the equation's input swaps and double swaps "
            f"(equal to {symmetry.REL_TOL:g} relative at {symmetry.POINTS} points)",
            "model_free": "linear or power-law least squares reaching test NMSE "
            f"<= {model_free.SOLVED_NMSE:g}",
            "complexity": f"node count matched to the source's quantile bins {list(complexity.QUANTILES)} "
            "(whole table only)",
        },
        "lsr_synth": {
            "max_rhs_evals": solvability.MAX_RHS_EVALS,
            "stiffness_limit": solvability.STIFFNESS_LIMIT,
            "min_ood_spread": synth.MIN_OOD_SPREAD,
            "min_ood_outside": synth.MIN_OOD_OUTSIDE,
            "ood_fraction": sweep.OOD_FRACTION,
            "sweeps": {
                domain: {"spans": {k: list(v) for k, v in sw.spans.items()}, "initial": dict(sw.initial)}
                for domain, sw in sweep.SWEEPS.items()
            },
        },
    }


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="folder for index.jsonl and data/*.npz")
    parser.add_argument(
        "--family",
        action="append",
        choices=FAMILIES,
        help="transform, synth and/or feynman (the original equations; default: transform and synth)",
    )
    parser.add_argument("--feynman", help="the AI-Feynman FeynmanEquations.csv (for transform)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-train", type=int, default=500)
    parser.add_argument("--n-test", type=int, default=250)
    parser.add_argument("--n-ood", type=int, default=250)
    parser.add_argument(
        "--domain", action="append", help="synth domain(s): chem_react, bio_pop_growth, phys_osc, matsci"
    )
    parser.add_argument("--count", type=int, help="problems per synth domain (default: the benchmark's)")
    parser.add_argument("--equation", action="append", help="only these Feynman equations (by Filename)")
    parser.add_argument(
        "--solve-budget", type=float, default=10.0, help="seconds one sympy solve may take (a safety net)"
    )
    parser.add_argument("--cache", help="JSON cache of sympy solutions (makes reruns instant)")
    parser.add_argument(
        "--keep-symmetric",
        action="store_true",
        help="transform: also solve for inputs a symmetry of the equation maps to an earlier one",
    )
    parser.add_argument(
        "--keep-model-free",
        action="store_true",
        help="transform: keep problems a linear or power-law least-squares fit solves",
    )
    parser.add_argument(
        "--keep-all-complexities",
        action="store_true",
        help="transform: do not subsample to the AI-Feynman equations' size distribution",
    )


def run_generate(args: argparse.Namespace) -> int:
    families = args.family or list(DEFAULT_FAMILIES)
    if "transform" in families and not args.feynman:
        if args.family:
            raise LsrbUsageError("--family transform needs --feynman FeynmanEquations.csv.")
        families = ["synth"]
        print("note: no --feynman table given, generating the synth family only", file=sys.stderr)
    from pytest_lsrb.srbench.generate.terms import DOMAINS

    counts = None
    if args.count is not None:
        counts = {d: args.count for d in (args.domain or list(DOMAINS))}
    report = generate_problems(
        Path(args.out),
        families=families,
        feynman_csv=Path(args.feynman) if args.feynman else None,
        seed=args.seed,
        n_train=args.n_train,
        n_test=args.n_test,
        n_ood=args.n_ood,
        domains=args.domain,
        synth_counts=counts,
        equations=args.equation,
        solve_budget_s=args.solve_budget,
        cache_path=Path(args.cache) if args.cache else None,
        dedupe=not args.keep_symmetric,
        drop_model_free=not args.keep_model_free,
        match_complexity=False if args.keep_all_complexities else None,
    )
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lsrb srbench generate", description=__doc__)
    add_generate_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_generate(args)
    except LsrbUsageError as exc:
        parser.exit(2, f"error: {exc}\n")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
