"""How often a symbolic-accuracy judge agrees with labels written from the paper's sentence.

The paper calibrates its GPT-4o judge against two human raters (94.6 % agreement). Here the
labels are a shipped set of (ground truth, proposal, label, category) pairs (`judge_pairs/`,
built by `tests/srbench/data/build_judge_pairs.py` from the paper's wording before any judge
scored them): `dev.jsonl` for development, `heldout.jsonl` kept apart, and `fresh.jsonl` (pairs on
truths neither uses, every one held out, built later and scored once). `lsrb srbench
judge-agreement` scores a set with the sympy checker, an LLM judge, or both, and prints the
agreement per category and the false accepts (a `match` on a superset, subset, approximation
or near miss); `--write` stores the figures (`agreement.json`), which Table 1's header quotes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from pytest_lsrb.core.bounded import Budget, call_bounded, preload
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.equations import EquationError, Program, parse_expression
from pytest_lsrb.srbench.limits import SYMBOLIC_BUDGET
from pytest_lsrb.srbench.scoring.agreement_options import MEASURED, PAIRS_DIR, SETS
from pytest_lsrb.srbench.scoring.symbolic import SymbolicVerdict, symbolic_match

preload("pytest_lsrb.srbench.scoring.symbolic")
# `adversarial` and its blind third `adversarial_heldout` (issue #48): function swaps, narrow-domain
# approximations, PySR floats, rows on a line (tests/srbench/data/build_adversarial_pairs.py).
# Categories the builders label "not the same form". Only the builders' own reading: what a pair
# is labelled, and so what a false accept is, comes from each pair's own `label` (a user's file
# may put any label under any category name).
REJECTED: Final = frozenset(
    {
        "superset",
        "subset",
        "approximation",
        "near_miss",
        "exponent_value",
        "function_swap",
        "narrow_approximation",
        "line_only",
    }
)
POINTS: Final = 300
MAX_PAIRS: Final = 5000


@dataclass(frozen=True)
class Pair:
    truth: str
    proposal: str
    label: bool
    category: str
    ranges: dict[str, tuple[float, float]]
    source: str = ""
    note: str = ""
    # rows on a line, as a release's: variable -> (other, a, b) makes it a + b*other on every row
    line: dict[str, tuple[str, float, float]] = field(default_factory=dict)

    # What `judge.llm_judge` reads of a problem (its `JudgedProblem`).
    @property
    def inputs(self) -> list[str]:
        return list(self.ranges)

    @property
    def output(self) -> str:
        return "y"

    @property
    def expression(self) -> str:
        return self.truth

    def ground_truth(self) -> Program:
        return parse_expression(self.truth, self.inputs, free_params=True)

    def columns(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(0)
        cols = {k: rng.uniform(lo, hi, POINTS) for k, (lo, hi) in self.ranges.items()}
        for k, (other, a, b) in self.line.items():
            cols[k] = a + b * cols[other]
        return cols


def load_pairs(which: str) -> list[Pair]:
    """A shipped set (`SETS`) or a JSONL file of pairs in the same shape."""
    path = PAIRS_DIR / f"{which}.jsonl" if which in SETS else Path(which)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    pairs: list[Pair] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if len(pairs) >= MAX_PAIRS:
            raise LsrbUsageError(f"{path}: more than {MAX_PAIRS} pairs.")
        try:
            row = json.loads(line)
            ranges = {str(k): (float(v[0]), float(v[1])) for k, v in row["ranges"].items()}
            on_line = {str(k): (str(v[0]), float(v[1]), float(v[2])) for k, v in row.get("line", {}).items()}
            free = set(ranges) - set(on_line)
            if not set(on_line) <= set(ranges) or {v[0] for v in on_line.values()} - free:
                raise ValueError("a line names a variable the ranges do not")
            pairs.append(
                Pair(
                    truth=str(row["truth"]),
                    proposal=str(row["proposal"]),
                    label=bool(row["label"]),
                    category=str(row["category"]),
                    ranges=ranges,
                    source=str(row.get("source", "")),
                    note=str(row.get("note", "")),
                    line=on_line,
                )
            )
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            raise LsrbUsageError(f"{path}:{n}: not a labelled pair ({type(exc).__name__}: {exc}).") from None
    return pairs


def sympy_verdict(pair: Pair, budget: Budget = SYMBOLIC_BUDGET) -> bool | None:
    """The sympy checker's verdict on a pair, bounded like a run's (None: undecided)."""
    try:
        truth = pair.ground_truth()
        proposal = parse_expression(pair.proposal, pair.inputs, free_params=True)
    except EquationError:
        return None
    checked = call_bounded(symbolic_match, proposal, truth, pair.columns(), budget=budget)
    if not checked.ok or checked.value is None:
        return None
    verdict: SymbolicVerdict = checked.value
    return verdict.match


@dataclass
class Tally:
    agree: int = 0
    total: int = 0
    false_accepts: int = 0
    undecided: int = 0

    yes: int = 0  # pairs labelled the same form

    def add(self, label: bool, verdict: bool | None) -> None:
        self.total += 1
        self.yes += label
        self.agree += verdict is label
        self.undecided += verdict is None
        self.false_accepts += verdict is True and not label

    @property
    def label(self) -> str:
        """The label column: `yes`/`no` when every pair of the row has that label, else the mix."""
        if self.yes == self.total:
            return "yes"
        return "no" if self.yes == 0 else f"{self.yes}y/{self.total - self.yes}n"

    @property
    def rate(self) -> float | None:
        return self.agree / self.total if self.total else None


@dataclass
class Report:
    pairs: str
    judges: dict[str, dict[str, Tally]] = field(default_factory=dict)  # judge -> category -> tally
    # (judge, pair, verdict) wherever a verdict is not the label: what a user calibrating reads
    disagreements: list[tuple[str, Pair, bool | None]] = field(default_factory=list)

    def add(self, judge: str, pair: Pair, verdict: bool | None) -> None:
        if verdict is not pair.label:
            self.disagreements.append((judge, pair, verdict))
        by_cat = self.judges.setdefault(judge, {})
        by_cat.setdefault(pair.category, Tally()).add(pair.label, verdict)
        by_cat.setdefault("all", Tally()).add(pair.label, verdict)

    def as_json(self) -> dict[str, Any]:
        return {
            judge: {
                cat: {
                    "agree": t.agree,
                    "total": t.total,
                    "agreement": None if t.rate is None else round(t.rate, 4),
                    "false_accepts": t.false_accepts,
                    "undecided": t.undecided,
                }
                for cat, t in sorted(cats.items())
            }
            for judge, cats in self.judges.items()
        }

    def lines(self) -> list[str]:
        judges = list(self.judges)
        cats = [*sorted({c for t in self.judges.values() for c in t if c != "all"}), "all"]
        head = f"{'category':<20} {'label':<8} {'n':>4} " + " ".join(f"{j:>16}" for j in judges)
        out = [f"judge agreement with the labelled pairs ({self.pairs})", head]
        for cat in cats:
            any_t = next(t[cat] for t in self.judges.values() if cat in t)
            label = any_t.label
            cells = []
            for j in judges:
                t = self.judges[j].get(cat)
                cells.append(f"{t.agree:>4}/{t.total:<4} {100 * (t.rate or 0):5.1f}%" if t else "")
            out.append(f"{cat:<20} {label:<8} {any_t.total:>4} " + " ".join(f"{c:>16}" for c in cells))
        for j in judges:
            t = self.judges[j]["all"]
            out.append(f"{j}: {t.false_accepts} false accepts, {t.undecided} undecided")
        return out

    def disagreement_lines(self) -> list[str]:
        """One line per pair a judge and the label disagree on (`--disagreements`)."""
        said = {True: "match", False: "no match", None: "undecided"}
        return [
            f"{judge}: {pair.category} (label {'yes' if pair.label else 'no'}) judged {said[verdict]}: "
            f"truth {pair.truth!r} proposal {pair.proposal!r}"
            for judge, pair, verdict in self.disagreements
        ]


def measure(
    pairs: Sequence[Pair],
    name: str,
    judges: Iterable[str],
    llm: Callable[[Pair], bool | None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Score every pair with the chosen judges (`sympy`, `llm`, `both`: a match when both say so)."""
    chosen = list(judges)
    report = Report(pairs=name)
    for i, pair in enumerate(pairs):
        by_sympy = sympy_verdict(pair) if {"sympy", "both"} & set(chosen) else None
        by_llm = llm(pair) if llm is not None and {"llm", "both"} & set(chosen) else None
        for judge in chosen:
            if judge == "sympy":
                report.add("sympy", pair, by_sympy)
            elif judge == "llm":
                report.add("llm", pair, by_llm)
            else:
                both = None if by_sympy is None or by_llm is None else by_sympy and by_llm
                report.add("both", pair, both)
        if progress is not None:
            progress(i + 1, len(pairs))
    return report


def write_measured(report: Report, path: Path | None = None) -> None:
    """Store the figures (merged by pair set and judge) for Table 1's header."""
    path = path or MEASURED
    stored = read_measured(path)
    stored.setdefault(report.pairs, {}).update(report.as_json())
    path.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_measured(path: Path | None = None) -> dict[str, Any]:
    try:
        path = path or MEASURED
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# The held-out sets Table 1's header may quote, cleanest first: `fresh` was built on truths no
# other set uses, after the builder's last fix, and scored once; `heldout` was edited after scoring.
HELD_OUT: Final = ("fresh", "heldout")


def measured_agreement(judge: str = "sympy", pairs: str | None = None) -> Mapping[str, Any] | None:
    """The stored overall figures of `judge` on `pairs` (by default the first held-out set of
    `HELD_OUT` that was measured), with the set's name under `pairs`; None when never measured."""
    data = read_measured()
    for name in (pairs,) if pairs else HELD_OUT:
        row = data.get(name, {}).get(judge, {}).get("all")
        if isinstance(row, dict):
            return {**row, "pairs": name}
    return None


def llm_verdicts(
    adapter_name: str, model: str, base_url: str | None, key_env: str | None
) -> Callable[[Pair], bool | None]:
    """The LLM judge of a run (`judge.llm_judge`, its prompt and reading) as a pair -> verdict
    function; `mock` answers with the mock adapter's shallow judge."""
    from pytest_lsrb.adapters import create_adapter
    from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest
    from pytest_lsrb.core.credentials import checked_key
    from pytest_lsrb.srbench.scoring.judge import llm_judge, mock_judge_answer

    checked_key(key_env, "--lsrb-sr-judge-api-key-env")

    def mock(request: GenerationRequest) -> str:
        return mock_judge_answer(request.context)

    adapter = create_adapter(
        AdapterConfig(
            name=adapter_name,
            model=model,
            base_url=base_url,
            api_key_env=key_env,
            max_retries=2,
            answers=mock,
        )
    )

    def judge(pair: Pair) -> bool | None:
        try:
            proposal = parse_expression(pair.proposal, pair.inputs, free_params=True)
        except EquationError:
            return None
        return llm_judge(pair, proposal, adapter)[0].match

    return judge


def run_agreement(args: Any) -> int:
    """`lsrb srbench judge-agreement`: the table for the chosen pairs and judge(s)."""
    import sys

    pairs = load_pairs(args.pairs)
    judges = ["sympy", "llm", "both"] if args.judge == "both" else [args.judge]
    llm = None
    if args.judge in ("llm", "both"):
        if args.judge_adapter != "mock" and not args.judge_model:
            raise LsrbUsageError("--lsrb-sr-judge=llm|both needs --lsrb-sr-judge-model (the judge's model).")
        llm = llm_verdicts(
            args.judge_adapter, args.judge_model or "mock", args.judge_base_url, args.judge_api_key_env
        )

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty() or done == total:
            print(f"\r{done}/{total} pairs", end="\n" if done == total else "", file=sys.stderr, flush=True)

    name = args.pairs if args.pairs in SETS else Path(args.pairs).name
    report = measure(pairs, name, judges, llm, progress)
    model = args.judge_model or "mock"
    # The LLM judge is its model: the figures are stored under it (`llm:<model>`, as Table 1 names it).
    report.judges = {(f"{j}:{model}" if j in ("llm", "both") else j): t for j, t in report.judges.items()}
    print("\n".join(report.lines()))
    if args.disagreements:
        print("\n".join(["disagreements:", *report.disagreement_lines()]))
    if args.json:
        Path(args.json).write_text(json.dumps({name: report.as_json()}, indent=1) + "\n", encoding="utf-8")
    if args.write:
        write_measured(report)
    return 0
