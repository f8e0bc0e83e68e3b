"""LSR-Transform: Feynman equations solved for another variable.

For each equation and each input as the pivot:
1. solve `output = f(inputs)` for the pivot with sympy (on an abstracted form: every maximal
   subexpression without the pivot becomes one symbol, which keeps sympy fast);
2. keep the real analytic solutions (no `I`, free of the pivot, expressible in the equation
   language);
3. keep those whose size lies within the original equations' node-count range;
4. resample the original inputs over their ranges, compute the output, evaluate the solution on
   (output, other inputs), and drop points outside the solution's domain or outside this
   solution branch (where it does not give back the sampled pivot); the problem needs enough
   valid points;
5. name it `gen-<equation>_<pivot index>_<solution index>` (`GENERATED_PREFIX`: never an
   official id).

Then the set is filtered as the paper means it to be (each filter can be turned off, and the
report counts what each removed, `stages`):
- `dedupe`: a pivot that a symmetry of the equation maps to an earlier input gives the same
  problems up to renaming inputs (`symmetry.py`): only the first input of each orbit is solved for;
- `drop_model_free`: problems a linear or power-law least-squares fit solves (test NMSE ≤ 1e-8,
  `model_free.py`) are dropped;
- `match_complexity` (by default only when the whole table is generated): the rest is subsampled
  to the AI-Feynman equations' distribution of expression-tree sizes (`complexity.py`).

Speed and determinism: a pivot is tried only when it is solvable by design: it occurs once, or
only outside transcendental functions (algebraic equations); mixed cases (e.g. `x*exp(x)`, which
would need Lambert W) are skipped as `mixed_transcendental`. A wall-clock budget per solve
(SIGALRM in the main thread, no process per equation) is a safety net; budget overruns are
reported, and an optional JSON cache makes reruns instant and identical.
"""

from __future__ import annotations

import json
import math
import signal
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import sympy

from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.equations import EquationError, Program, from_sympy, parse_expression
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, TRANSFORM_SET, Problem, output_first
from pytest_lsrb.srbench.generate.complexity import match_distribution, source_bins
from pytest_lsrb.srbench.generate.feynman import FeynmanEquation, describe_symbol, read_feynman_csv
from pytest_lsrb.srbench.generate.model_free import solved_without_model
from pytest_lsrb.srbench.generate.symmetry import orbit_representatives

CACHE_VERSION: Final = 1
_ALGEBRAIC = (sympy.Add, sympy.Mul, sympy.Pow)


class SolveBudgetExceeded(Exception):
    """sympy did not solve for the pivot within the time budget (`time_budget`)."""


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the block after `seconds` (SIGALRM; only in the main thread, else no limit)."""
    usable = (
        seconds is not None
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _raise(signum: int, frame: Any) -> None:
        raise SolveBudgetExceeded()

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class TransformReport:
    problems: list[Problem] = field(default_factory=list)
    equations: int = 0
    pivots: int = 0
    solutions: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    node_count_range: tuple[int, int] = (0, 0)
    # problems left after each step: built, then each filter in turn
    stages: dict[str, int] = field(default_factory=dict)
    complexity_bins: dict[str, float] = field(default_factory=dict)  # the source's share per bin

    def summary(self) -> dict[str, Any]:
        return {
            "equations": self.equations,
            "pivots_tried": self.pivots,
            "real_solutions": self.solutions,
            "problems": len(self.problems),
            "skipped": dict(sorted(self.skipped.items())),
            "node_count_range": list(self.node_count_range),
            "stages": dict(self.stages),
            "complexity_bins": dict(self.complexity_bins),
        }


def pivot_occurrences(expr: sympy.Expr, pivot: sympy.Symbol) -> tuple[int, int]:
    """(occurrences of the pivot, how many of them sit inside a transcendental function)."""
    total = inside = 0

    def walk(e: sympy.Basic, in_fn: bool) -> None:
        nonlocal total, inside
        if e == pivot:
            total += 1
            inside += in_fn
            return
        fn = in_fn or not (isinstance(e, _ALGEBRAIC) or e.is_Atom)
        if isinstance(e, sympy.Pow) and pivot in e.exp.free_symbols:
            fn = True  # a^pivot is transcendental in the pivot
        for arg in e.args:
            walk(arg, fn)

    walk(expr, False)
    return total, inside


def solvable_by_design(expr: sympy.Expr, pivot: sympy.Symbol) -> bool:
    total, inside = pivot_occurrences(expr, pivot)
    return total == 1 or inside == 0


def abstract(expr: sympy.Expr, pivot: sympy.Symbol, subs: dict[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
    """Replace every maximal pivot-free subexpression with a fresh symbol (recorded in `subs`)."""
    if expr.is_Atom:
        return expr
    if pivot not in expr.free_symbols:
        sym = (
            sympy.Symbol(f"_k{len(subs)}", positive=True)
            if expr.is_positive
            else sympy.Symbol(f"_k{len(subs)}", real=True)
        )
        subs[sym] = expr
        return sym
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        free = [a for a in expr.args if pivot not in a.free_symbols]
        dep = [abstract(a, pivot, subs) for a in expr.args if pivot in a.free_symbols]
        parts = ([abstract(expr.func(*free), pivot, subs)] if free else []) + dep
        return expr.func(*parts)
    return expr.func(*[abstract(a, pivot, subs) for a in expr.args])


def solve_for(
    expr: sympy.Expr, output: sympy.Symbol, pivot: sympy.Symbol, budget_s: float | None
) -> list[sympy.Expr]:
    subs: dict[sympy.Symbol, sympy.Expr] = {}
    abstracted = abstract(expr, pivot, subs)
    with time_budget(budget_s):
        sols = sympy.solve(sympy.Eq(output, abstracted), pivot, check=False, simplify=False, rational=False)
    return [s.xreplace(subs) for s in sols]


def is_real_closed_form(sol: sympy.Expr, pivot: sympy.Symbol) -> bool:
    if pivot in sol.free_symbols or sol.has(sympy.I) or sol.has(sympy.zoo) or sol.has(sympy.nan):
        return False
    return not sol.has(sympy.LambertW, sympy.RootOf, sympy.Integral)


def _sample(eq: FeynmanEquation, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    return {v.name: rng.uniform(v.low, v.high, n) for v in eq.variables}


def _output_symbol(eq: FeynmanEquation) -> str:
    return eq.output if eq.output not in eq.names else f"{eq.output}_out"


def build_problem(
    eq: FeynmanEquation,
    pivot_index: int,
    sol_index: int,
    solution: Program,
    rng: np.random.Generator,
    n_train: int,
    n_test: int,
    min_valid_fraction: float,
) -> Problem | None:
    """Sample, keep the points in the solution's domain that reproduce the equation, split."""
    original = eq.program()
    pivot = eq.names[pivot_index]
    out_name = _output_symbol(eq)
    others = [n for n in eq.names if n != pivot]
    wanted = n_train + n_test
    n_draw = math.ceil(wanted / max(min_valid_fraction, 1e-3)) + 16
    X = _sample(eq, rng, n_draw)
    y = original.evaluate(X)
    new_cols = {out_name: y, **{n: X[n] for n in others}}
    target = solution.evaluate(new_cols)
    with np.errstate(all="ignore"):
        # The sampled pivot must be what this solution branch gives back: the data are the
        # original measurements with the roles swapped, restricted to this branch's domain.
        ok = (
            np.isfinite(y)
            & np.isfinite(target)
            & (np.abs(target - X[pivot]) <= 1e-6 * np.maximum(1.0, np.abs(X[pivot])))
        )
    if ok.sum() < wanted or ok.mean() < min_valid_fraction:
        return None
    idx = np.flatnonzero(ok)[:wanted]
    symbols = [pivot, out_name, *others]
    table = np.column_stack([target[idx], y[idx], *[X[n][idx] for n in others]])
    descs = [describe_symbol(pivot), describe_symbol(eq.output), *[describe_symbol(n) for n in others]]
    inputs_text = ", ".join(f"{d} ({s})" for s, d in zip(symbols[1:], descs[1:], strict=True))
    return Problem(
        name=f"{GENERATED_PREFIX}{eq.name}_{pivot_index}_{sol_index}",
        symbols=symbols,
        symbol_descs=descs,
        symbol_properties=output_first(len(symbols) - 1),
        expression=solution.to_expression(),
        desc=(
            f"Physics (a relation from the Feynman Lectures, rearranged): find {descs[0]} "
            f"({pivot}) as a function of {inputs_text}."
        ),
        problem_set=TRANSFORM_SET,
        domain=None,
        train=table[:n_train],
        test=table[n_train:],
        ood_test=None,
    )


def _load_cache(path: Path | None) -> dict[str, Any]:
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or (data.get("version"), data.get("sympy")) != (
        CACHE_VERSION,
        sympy.__version__,
    ):
        return {}
    entries = data.get("entries", {})
    return entries if isinstance(entries, dict) else {}


def _save_cache(path: Path | None, entries: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"version": CACHE_VERSION, "sympy": sympy.__version__, "entries": entries}
    path.write_text(json.dumps(payload, sort_keys=True, indent=0), encoding="utf-8")


def generate_transform(
    csv_path: Path,
    *,
    seed: int = 0,
    n_train: int = 500,
    n_test: int = 250,
    solve_budget_s: float = 10.0,
    min_valid_fraction: float = 0.2,
    equations: Sequence[str] | None = None,
    cache_path: Path | None = None,
    dedupe: bool = True,
    drop_model_free: bool = True,
    match_complexity: bool | None = None,
) -> TransformReport:
    """LSR-Transform problems from an AI-Feynman-format CSV. Deterministic in `seed` (and the
    cache); see the module docstring for the steps and filters. `match_complexity` defaults to
    whether the whole table is generated (a few chosen equations have no distribution to match)."""
    if match_complexity is None:
        match_complexity = equations is None
    table = read_feynman_csv(csv_path)
    report = TransformReport()
    sizes = [eq.program().node_count for eq in table]
    lo, hi = min(sizes), max(sizes)
    report.node_count_range = (lo, hi)
    built = 0
    cache = _load_cache(cache_path)
    dirty = False
    chosen = set(equations) if equations is not None else None
    for eq in table:
        if chosen is not None and eq.name not in chosen:
            continue
        report.equations += 1
        out_name = _output_symbol(eq)
        syms = {n: sympy.Symbol(n, positive=True) for n in eq.names}
        out_sym = sympy.Symbol(out_name, real=True)
        expr = eq.program().to_sympy(syms)
        orbits = orbit_representatives(eq.program(), {v.name: (v.low, v.high) for v in eq.variables})
        for pivot_index, pivot in enumerate(eq.names):
            if syms[pivot] not in expr.free_symbols:
                report.skipped["pivot_unused"] += 1
                continue
            if dedupe and orbits[pivot] != pivot:
                report.skipped["symmetric_renaming"] += 1
                continue
            report.pivots += 1
            key = f"{eq.formula}|{pivot}|{out_name}"
            texts = cache.get(key)
            if texts is None:
                texts = _solve_texts(expr, out_sym, syms[pivot], eq, pivot, out_name, solve_budget_s)
                if texts != "budget":  # an overrun may succeed on a faster machine: not cached
                    cache[key] = texts
                    dirty = True
            if isinstance(texts, str):
                report.skipped[texts] += 1
                continue
            report.solutions += len(texts)
            kept = 0
            variables = [out_name, *[n for n in eq.names if n != pivot]]
            for text in texts:
                solution = parse_expression(text, variables)
                if not lo <= solution.node_count <= hi:
                    report.skipped["complexity"] += 1
                    continue
                rng = np.random.default_rng(stable_hash("lsr_transform", seed, eq.name, pivot, kept) % 2**63)
                problem = build_problem(
                    eq, pivot_index, kept, solution, rng, n_train, n_test, min_valid_fraction
                )
                if problem is None:
                    report.skipped["domain"] += 1
                    continue
                kept += 1
                built += 1
                fit = solved_without_model(problem.train, problem.test) if drop_model_free else None
                if fit is not None:
                    report.skipped[f"model_free_{fit}"] += 1
                    continue
                report.problems.append(problem)
    if dirty:
        _save_cache(cache_path, cache)
    report.stages["built"] = built
    report.stages["after_model_free"] = len(report.problems)
    if match_complexity:
        bins = source_bins(sizes)
        report.complexity_bins = dict(zip(bins.describe(), bins.shares, strict=True))
        truths = [p.ground_truth() for p in report.problems]
        keep = match_distribution(
            [t.node_count if t is not None else 0 for t in truths],
            [p.name.rsplit("_", 2)[0] for p in report.problems],
            bins,
            seed,
        )
        report.skipped["complexity_distribution"] += len(report.problems) - len(keep)
        report.problems = [report.problems[i] for i in keep]
    report.stages["after_complexity_match"] = len(report.problems)
    return report


def _solve_texts(
    expr: sympy.Expr,
    out_sym: sympy.Symbol,
    pivot_sym: sympy.Symbol,
    eq: FeynmanEquation,
    pivot: str,
    out_name: str,
    budget_s: float | None,
) -> list[str] | str:
    """The real closed-form solutions as equation-language text, or why there are none."""
    if not solvable_by_design(expr, pivot_sym):
        return "mixed_transcendental"
    try:
        sols = solve_for(expr, out_sym, pivot_sym, budget_s)
    except SolveBudgetExceeded:
        return "budget"
    except (NotImplementedError, ValueError, TypeError, RecursionError):
        return "unsolved"
    variables = [out_name, *[n for n in eq.names if n != pivot]]
    texts: list[str] = []
    for sol in sols:
        if not is_real_closed_form(sol, pivot_sym):
            continue
        try:
            prog = Program.from_ir(from_sympy(sol, variables), variables)
            text = prog.to_expression()
            parse_expression(text, variables)
        except EquationError:
            continue
        if text not in texts:
            texts.append(text)
    return texts if texts else "no_real_solution"
